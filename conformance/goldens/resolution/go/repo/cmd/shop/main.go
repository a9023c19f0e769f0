package main

import (
	"fmt"

	"example.com/shop/internal/cart"
)

func main() { fmt.Println(cart.Total()) }

package fmt

// a folder named like the standard library's fmt
func Println() {}

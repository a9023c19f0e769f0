package cart

type Item struct{}

package cart

func Total() int { return 0 }

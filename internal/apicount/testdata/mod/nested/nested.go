package nested

func Elsewhere() {}

package sub

func WithB() {}

var E error

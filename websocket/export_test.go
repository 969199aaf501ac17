package websocket

// AcceptKey exposes acceptKey to the external tests.
func AcceptKey(key string) string { return acceptKey([]byte(key)) }

package websocket

// AcceptKey exposes acceptKey to the external tests.
func AcceptKey(key string) string { return acceptKey([]byte(key)) }

// Deflate reports whether permessage-deflate was negotiated on c.
func Deflate(c *Conn) bool { return c.deflate }

// Package websocket serves RFC 6455 WebSocket connections on the loop:
// frames are parsed and written in the connection's callbacks, with no
// goroutine per connection, so very many mostly idle connections cost
// little more than their sockets.
//
//	func (app) ServeHTTP(w *httpserver.Response, r *httpserver.Request) {
//		if err := websocket.Upgrade(w, r, echo{}); err != nil {
//			return // Upgrade answered 400, 403, 405 or 426
//		}
//	}
//
//	type echo struct{}
//
//	func (echo) OnOpen(c *websocket.Conn) {}
//	func (echo) OnMessage(c *websocket.Conn, kind websocket.MessageKind, p []byte) {
//		c.WriteMessage(kind, p)
//	}
//	func (echo) OnClose(c *websocket.Conn, code int, reason string, err error) {}
//
// A message that arrived in one frame is handed to OnMessage in place, not
// copied; a fragmented one is assembled in a buffer bounded by
// WithMaxMessageSize. Text is checked to be UTF-8 as it arrives. Pings are
// answered, the close handshake is completed (with a timeout), and a peer
// that breaks the protocol is closed with the code RFC 6455 asks for.
//
// Not supported: extensions (permessage-deflate), so every RSV bit is
// refused; a client side.
package websocket

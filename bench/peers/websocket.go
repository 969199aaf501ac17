package peers

import (
	"github.com/ringloop/ringloop/engine"
	"github.com/ringloop/ringloop/httpserver"
	"github.com/ringloop/ringloop/websocket"
)

// The WebSocket peers serve two endpoints: /bcast joins a room where every
// message a member sends is broadcast to every member (the sender too),
// and every other path echoes each message back.
const BroadcastPath = "/bcast"

func init() {
	registerFamily("ringloop-ws", WebSocket, FamilyWebSocket,
		"ringloop websocket behind websocket.UpgradeFast, one loop; /bcast through a websocket.Hub", startRingloopWS)
}

// wsEcho sends every message back.
type wsEcho struct{}

func (wsEcho) OnOpen(c *websocket.Conn) {}
func (wsEcho) OnMessage(c *websocket.Conn, kind websocket.MessageKind, p []byte) {
	_ = c.WriteMessage(kind, p)
}
func (wsEcho) OnClose(c *websocket.Conn, code int, reason string, err error) {}

// wsRoom broadcasts every message to every member.
type wsRoom struct{ hub *websocket.Hub }

func (r wsRoom) OnOpen(c *websocket.Conn) { r.hub.Add(c) }
func (r wsRoom) OnMessage(c *websocket.Conn, kind websocket.MessageKind, p []byte) {
	_ = r.hub.Broadcast(kind, p) // from a member's OnMessage a congested hub pauses the sender, never refuses; the client counts deliveries
}
func (r wsRoom) OnClose(c *websocket.Conn, code int, reason string, err error) {}

func startRingloopWS(b engine.Backend, c Config) (Server, error) {
	loop, err := benchLoop(c, engine.WithBackend(b))
	if err != nil {
		return nil, err
	}
	room := wsRoom{new(websocket.Hub)}
	srv, err := httpserver.NewFast(httpserver.HandlerFunc(func(w *httpserver.Response, r *httpserver.Request) {
		if string(r.Path()) == BroadcastPath {
			_ = websocket.UpgradeFast(w, r, room)
			return
		}
		_ = websocket.UpgradeFast(w, r, wsEcho{})
	}))
	if err != nil {
		_ = loop.Close()
		return nil, err
	}
	a, err := srv.Listen(loop, "tcp", c.Addr)
	if err != nil {
		_ = loop.Close()
		return nil, err
	}
	bi := loop.Backend()
	return &ringloopHTTP{loop, srv, a.String(), Info{Backend: bi.Name.String(), Threading: bi.Threading.String(), Detail: bi.Features.String()}}, nil
}

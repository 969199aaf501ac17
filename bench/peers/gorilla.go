package peers

import (
	"net"
	"net/http"
	"sync"

	gws "github.com/gorilla/websocket"
)

func init() {
	Register(Peer{Name: "gorilla", Kind: WebSocket, Start: startGorilla,
		Doc: "gorilla/websocket on net/http: a goroutine per connection reading; /bcast adds a writer goroutine and a 256-message queue per member, a member whose queue is full is dropped"})
}

// gorillaQueue bounds what a broadcast member may have waiting; past it
// the member is dropped, as the gorilla chat example does.
const gorillaQueue = 256

func startGorilla(c Config) (Server, error) {
	ln, err := net.Listen("tcp", c.Addr)
	if err != nil {
		return nil, err
	}
	up := gws.Upgrader{CheckOrigin: func(*http.Request) bool { return true }}
	room := &gorillaRoom{members: map[*gorillaMember]struct{}{}}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ws, err := up.Upgrade(w, r, nil)
		if err != nil {
			return
		}
		if r.URL.Path == BroadcastPath {
			room.serve(ws)
			return
		}
		defer ws.Close()
		for {
			kind, p, err := ws.ReadMessage()
			if err != nil {
				return
			}
			if ws.WriteMessage(kind, p) != nil {
				return
			}
		}
	})}
	go func() { _ = srv.Serve(ln) }()
	return &closer{addr: ln.Addr().String(), info: Info{Backend: "netpoll", Threading: "goroutines"}, close: srv.Close}, nil
}

// gorillaRoom is the broadcast room: members under a mutex, each with its
// own queue drained by its own writer goroutine.
type gorillaRoom struct {
	mu      sync.Mutex
	members map[*gorillaMember]struct{}
}

type gorillaMember struct {
	ws   *gws.Conn
	send chan gorillaMsg
}

type gorillaMsg struct {
	kind int
	p    []byte // shared by every member's queue: read only
}

// serve runs a member: this goroutine reads and broadcasts, another writes.
func (r *gorillaRoom) serve(ws *gws.Conn) {
	m := &gorillaMember{ws: ws, send: make(chan gorillaMsg, gorillaQueue)}
	r.mu.Lock()
	r.members[m] = struct{}{}
	r.mu.Unlock()
	go func() {
		for msg := range m.send {
			if ws.WriteMessage(msg.kind, msg.p) != nil {
				break
			}
		}
		ws.Close()
	}()
	for {
		kind, p, err := ws.ReadMessage()
		if err != nil {
			break
		}
		r.broadcast(gorillaMsg{kind, p}) // ReadMessage returns a fresh slice: shared as is
	}
	r.leave(m)
}

func (r *gorillaRoom) broadcast(msg gorillaMsg) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for m := range r.members {
		select {
		case m.send <- msg:
		default: // the member does not keep up: dropped
			delete(r.members, m)
			close(m.send)
		}
	}
}

func (r *gorillaRoom) leave(m *gorillaMember) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, ok := r.members[m]; ok {
		delete(r.members, m)
		close(m.send)
	}
}

package loopgroup

import (
	"sync"
	"sync/atomic"

	"github.com/ringloop/ringloop/engine"
)

// tracker wraps a user handler to keep the group's per-loop connection
// counts (for LeastConnections and Group.Connections) and, for a server, the
// set of live connections Shutdown waits for or closes.
type tracker struct {
	h        engine.Handler
	g        *Group
	reserved bool    // the count was raised when the loop was chosen
	srv      *Server // nil for Dial
}

func (t *tracker) OnOpen(c *engine.Conn) {
	if !t.reserved {
		t.g.addLoad(c.Loop(), 1)
	}
	if t.srv != nil {
		t.srv.live.add(c)
	}
	t.h.OnOpen(c)
}

func (t *tracker) OnData(c *engine.Conn, b []byte) { t.h.OnData(c, b) }

func (t *tracker) OnClose(c *engine.Conn, err error) {
	t.g.addLoad(c.Loop(), -1)
	t.h.OnClose(c, err)
	if t.srv != nil {
		t.srv.live.remove(c)
	}
}

// writabilityTracker also forwards writability changes, for handlers that
// implement engine.WritabilityHandler.
type writabilityTracker struct {
	tracker
	wh engine.WritabilityHandler
}

func (t *writabilityTracker) OnWritabilityChanged(c *engine.Conn, w bool) {
	t.wh.OnWritabilityChanged(c, w)
}

func track(h engine.Handler, g *Group, reserved bool, s *Server) engine.Handler {
	t := tracker{h: h, g: g, reserved: reserved, srv: s}
	if wh, ok := h.(engine.WritabilityHandler); ok {
		return &writabilityTracker{tracker: t, wh: wh}
	}
	return &t
}

// connSet is a server's live connections, sharded by loop so that loops do
// not contend on one lock.
type connSet struct {
	shards  []connShard
	g       *Group
	n       atomic.Int64
	waiting atomic.Bool
	zero    chan struct{} // closed when n reaches 0 while waiting
	once    sync.Once
}

type connShard struct {
	mu sync.Mutex
	m  map[*engine.Conn]struct{}
}

func newConnSet(g *Group) *connSet {
	s := &connSet{shards: make([]connShard, g.Len()), g: g, zero: make(chan struct{})}
	for i := range s.shards {
		s.shards[i].m = make(map[*engine.Conn]struct{})
	}
	return s
}

func (s *connSet) shard(c *engine.Conn) *connShard {
	i := s.g.Index(c.Loop())
	if i < 0 {
		i = 0
	}
	return &s.shards[i]
}

func (s *connSet) add(c *engine.Conn) {
	sh := s.shard(c)
	sh.mu.Lock()
	sh.m[c] = struct{}{}
	sh.mu.Unlock()
	s.n.Add(1)
}

func (s *connSet) remove(c *engine.Conn) {
	sh := s.shard(c)
	sh.mu.Lock()
	delete(sh.m, c)
	sh.mu.Unlock()
	if s.n.Add(-1) == 0 && s.waiting.Load() {
		s.once.Do(func() { close(s.zero) })
	}
}

// drained returns a channel closed once no connection is left.
func (s *connSet) drained() <-chan struct{} {
	s.waiting.Store(true)
	if s.n.Load() == 0 {
		s.once.Do(func() { close(s.zero) })
	}
	return s.zero
}

// closeAll closes every live connection (flushing what was written).
func (s *connSet) closeAll() {
	var cs []*engine.Conn
	for i := range s.shards {
		sh := &s.shards[i]
		sh.mu.Lock()
		for c := range sh.m {
			cs = append(cs, c)
		}
		sh.mu.Unlock()
	}
	for _, c := range cs {
		_ = c.Close()
	}
}

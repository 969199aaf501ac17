package loopgroup

import (
	"sync"
	"sync/atomic"

	"github.com/ringloop/ringloop/engine"
)

// tracker observes the connections of a server or of Group.Dial (an
// engine.ConnObserver) to keep the group's per-loop connection counts (for
// LeastConnections and Group.Connections) and, for a server, the set of live
// connections Shutdown waits for or closes. It never wraps the user's
// handler, so every optional handler interface reaches the handler.
type tracker struct {
	g        *Group
	reserved bool    // the count was raised when the loop was chosen
	srv      *Server // nil for Dial
}

func (t *tracker) ConnOpened(c *engine.Conn) {
	if !t.reserved {
		t.g.addLoad(c.Loop(), 1)
	}
	if t.srv != nil {
		t.srv.live.add(c)
	}
}

func (t *tracker) ConnClosed(c *engine.Conn, _ error) {
	t.g.addLoad(c.Loop(), -1)
	if t.srv != nil {
		t.srv.live.remove(c)
	}
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
	s := &connSet{shards: make([]connShard, len(g.loops)), g: g, zero: make(chan struct{})}
	for i := range s.shards {
		s.shards[i].m = make(map[*engine.Conn]struct{})
	}
	return s
}

func (s *connSet) shard(c *engine.Conn) *connShard {
	i := s.g.indexOf(c.Loop())
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

// each calls end (Close or Abort) on every live connection.
func (s *connSet) each(end func(*engine.Conn) error) {
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
		_ = end(c)
	}
}

package engine

import "github.com/ringloop/ringloop/internal/driver"

// A registration is anything with ops in flight on the loop's driver: a
// connection, a listener, a watched fd. The loop routes completions to it by
// tag and closes it when the loop shuts down.
type registration interface {
	// complete handles one completion of op kind k.
	complete(k driver.OpKind, c *driver.Completion)
	// shutdown starts closing the registration because its loop is
	// shutting down; it may take more completions to finish.
	shutdown()
	// abandon finishes it at once, without the driver (the loop is about to
	// release the driver and some op never reported its end).
	abandon()
}

// The op kinds a registration's completions carry, and the tag layout,
// are internal/driver's (regtag.go), shared with package packet.

// tagGenMask bounds a slot's generation.
const tagGenMask = driver.TagGenMask

func makeTag(idx uint32, gen uint32, k driver.OpKind) driver.Tag { return driver.MakeTag(idx, gen, k) }

func splitTag(t driver.Tag) (idx uint32, gen uint32, k driver.OpKind) { return driver.SplitTag(t) }

// foreign is a registration of another of ringloop's packages (package
// packet's sockets), registered through loopctl.Internals: it is a
// driver.Registration, whose methods are exported because they cross
// packages.
type foreign struct{ r driver.Registration }

func (f foreign) complete(k driver.OpKind, c *driver.Completion) { f.r.Complete(k, c) }
func (f foreign) shutdown()                                      { f.r.Shutdown() }
func (f foreign) abandon()                                       { f.r.Abandon() }

// registry is the loop's slot table of registrations; only the loop touches
// it.
type registry struct {
	slotTable[registration]
	conns int // live registrations that are connections
}

// add stores r and returns its slot and generation.
func (g *registry) add(r registration) (idx, gen uint32) {
	if _, ok := r.(*Conn); ok {
		g.conns++
	}
	return g.slotTable.add(r)
}

// remove frees a slot; its generation moves on so late completions for the
// old owner are recognised as stale.
func (g *registry) remove(idx, gen uint32) {
	if r, ok := g.slotTable.remove(idx, gen); ok {
		if _, ok := r.(*Conn); ok {
			g.conns--
		}
	}
}

// lookup returns the live owner of a tag, or nil for a stale tag.
func (g *registry) lookup(t driver.Tag) (registration, driver.OpKind) {
	idx, gen, k := splitTag(t)
	r, _ := g.get(idx, gen)
	return r, k
}

// onCompletion routes one completion to its registration; stale tags (a slot
// reused since the op was armed) are dropped. User callbacks are recovered
// where they run (callbacks.go); a panic that reaches here is the engine's
// own and stops the loop (fail), while the driver goes on with its batch.
func (l *Loop) onCompletion(c *driver.Completion) {
	defer l.recoverFault()
	if l.completions == 0 {
		l.ioFirst = now()
	}
	l.completions++
	if h := l.cfg.testFault; h != nil {
		h("completion")
	}
	// Hand-off hook (handoffinbox.go): an fd another loop sent with MSG_RING has
	// no registration here.
	if _, _, k := splitTag(c.Tag); k == opHandoff {
		l.receiveHandoff(c)
		return
	}
	r, k := l.reg.lookup(c.Tag)
	if r == nil {
		l.stats.stale.Add(1)
		return
	}
	if l.cfg.stallThreshold > 0 {
		l.enter(pieceCallback)
		r.complete(k, c)
		l.leave()
		return
	}
	r.complete(k, c)
}

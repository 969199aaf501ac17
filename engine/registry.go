package engine

import "github.com/ringloop/ringloop/internal/driver"

// A registration is anything with ops in flight on the loop's driver: a
// connection, a listener, a watched fd. The loop routes completions to it by
// tag and closes it when the loop shuts down.
type registration interface {
	// complete handles one completion of op kind k.
	complete(k opKind, c *driver.Completion)
	// shutdown starts closing the registration because its loop is
	// shutting down; it may take more completions to finish.
	shutdown()
	// abandon finishes it at once, without the driver (the loop is about to
	// release the driver and some op never reported its end).
	abandon()
}

// opKind tells a registration which of its ops completed.
type opKind uint8

const (
	opPoll opKind = 1 + iota
	opRecv
	opSend
	opAccept
	opConnect
	opClose
	opMsgSent // a MSG_RING hand-off's report to its sender (handoff.go)
)

// Tag layout: bit 63 is driver.Reserved; bits 56..62 the op kind; bits
// 32..55 a 24-bit generation; bits 0..31 the slot index. A completion whose
// generation no longer matches its slot is stale and dropped.
const (
	tagKindShift = 56
	tagGenShift  = 32
	tagGenMask   = 1<<24 - 1
	tagIdxMask   = 1<<32 - 1
)

func makeTag(idx uint32, gen uint32, k opKind) driver.Tag {
	return driver.Tag(uint64(k&0x7f)<<tagKindShift | uint64(gen&tagGenMask)<<tagGenShift | uint64(idx))
}

func splitTag(t driver.Tag) (idx uint32, gen uint32, k opKind) {
	return uint32(uint64(t) & tagIdxMask), uint32(uint64(t)>>tagGenShift) & tagGenMask, opKind(uint64(t)>>tagKindShift) & 0x7f
}

type regSlot struct {
	gen uint32
	r   registration
}

// registry is the loop's slot table; only the loop touches it.
type registry struct {
	slots []regSlot
	free  []uint32
	live  int
	conns int // live registrations that are connections
}

// add stores r and returns its slot and generation.
func (g *registry) add(r registration) (idx, gen uint32) {
	if n := len(g.free); n > 0 {
		idx = g.free[n-1]
		g.free = g.free[:n-1]
	} else {
		idx = uint32(len(g.slots))
		g.slots = append(g.slots, regSlot{})
	}
	s := &g.slots[idx]
	s.r = r
	g.live++
	if _, ok := r.(*Conn); ok {
		g.conns++
	}
	return idx, s.gen
}

// remove frees a slot; its generation moves on so late completions for the
// old owner are recognised as stale.
func (g *registry) remove(idx, gen uint32) {
	s := &g.slots[idx]
	if s.gen != gen || s.r == nil {
		return
	}
	if _, ok := s.r.(*Conn); ok {
		g.conns--
	}
	s.r = nil
	s.gen = (s.gen + 1) & tagGenMask
	g.free = append(g.free, idx)
	g.live--
}

// lookup returns the live owner of a tag, or nil for a stale tag.
func (g *registry) lookup(t driver.Tag) (registration, opKind) {
	idx, gen, k := splitTag(t)
	if int(idx) >= len(g.slots) {
		return nil, k
	}
	s := &g.slots[idx]
	if s.gen != gen {
		return nil, k
	}
	return s.r, k
}

// each calls fn for every live registration (used at shutdown).
func (g *registry) each(fn func(registration)) {
	for i := range g.slots {
		if r := g.slots[i].r; r != nil {
			fn(r)
		}
	}
}

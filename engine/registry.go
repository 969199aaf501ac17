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
func (g *registry) lookup(t driver.Tag) (registration, opKind) {
	idx, gen, k := splitTag(t)
	r, _ := g.get(idx, gen)
	return r, k
}

package driver

// A loop's tags, and what holds ops on a loop: shared by package engine
// and ringloop's other socket packages (package packet), which register
// in a loop's slot table through internal/loopctl's Internals.

// OpKind tells a registration which of its ops completed.
type OpKind uint8

const (
	OpPoll OpKind = 1 + iota
	OpRecv
	OpSend
	OpAccept
	OpConnect
	OpClose
	OpMsgSent // a MSG_RING hand-off's report to its sender
)

// Tag layout: bit 63 is Reserved; bits 56..62 the op kind; bits 32..55 a
// 24-bit generation; bits 0..31 the slot index. A completion whose
// generation no longer matches its slot is stale and dropped.
const (
	tagKindShift = 56
	tagGenShift  = 32
	// TagGenMask bounds a slot's generation.
	TagGenMask = 1<<24 - 1
	tagIdxMask = 1<<32 - 1
)

// MakeTag is the tag of op kind k of the registration in slot idx, of
// generation gen.
func MakeTag(idx uint32, gen uint32, k OpKind) Tag {
	return Tag(uint64(k&0x7f)<<tagKindShift | uint64(gen&TagGenMask)<<tagGenShift | uint64(idx))
}

// SplitTag is MakeTag's inverse.
func SplitTag(t Tag) (idx uint32, gen uint32, k OpKind) {
	return uint32(uint64(t) & tagIdxMask), uint32(uint64(t)>>tagGenShift) & TagGenMask, OpKind(uint64(t)>>tagKindShift) & 0x7f
}

// Registration is what a package other than engine registers in a loop's
// slot table (loopctl.Internals.Register): anything with ops in flight on
// the loop's driver. The loop routes completions to it by tag and closes it
// when the loop shuts down. All three run on the loop.
type Registration interface {
	// Complete handles one completion of op kind k.
	Complete(k OpKind, c *Completion)
	// Shutdown starts closing because the loop is shutting down; it may
	// take more completions to finish.
	Shutdown()
	// Abandon finishes at once, without the driver (the loop is about to
	// release the driver and some op never reported its end).
	Abandon()
}

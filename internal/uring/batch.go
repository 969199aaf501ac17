//go:build linux && cgo && !ringloop_nouring

package uring

import (
	"fmt"
	"runtime"
	"sync/atomic"
	"unsafe"

	"github.com/ringloop/ringloop/internal/driver"
	"github.com/ringloop/ringloop/internal/epoll"
	"github.com/ringloop/ringloop/internal/liburing"
	"golang.org/x/sys/unix"
)

// NewBatched builds the epoll+io_uring driver (driver.NameEpollURing), the
// one a parked loop runs on io_uring: the epoll driver's batched form
// (epoll.NewBatched), whose readiness, registration, accepts, connects,
// closes and polls are that driver's code, with a ringBatch issuing the
// receives and sends of the fds found ready as SQEs with MSG_DONTWAIT, all
// of one Wait in a single io_uring_enter. MSG_DONTWAIT makes the kernel
// fail a request that would block with -EAGAIN rather than arm a poll for
// it, so every request completes inside that enter, on the calling thread:
// no poll is armed, no completion work is queued to a thread the loop's
// goroutine has left, and the ring needs no eventfd (the loop parks on the
// epoll fd). -EAGAIN clears the fd's readiness until its next edge, as a
// failed recv(2) would. The ring is plain (any thread submits), its only
// ops are RECV and SEND (5.6), so every profile gets the same driver.
func NewBatched(cfg driver.Config) (driver.Driver, error) {
	b, err := newRingBatch(cfg)
	if err != nil {
		return nil, err
	}
	d, err := epoll.NewBatched(cfg, b)
	if err != nil {
		return nil, err
	}
	return d, nil
}

// ringBatch is epoll.Batch on a plain ring that it drives from Go: it
// writes the SQEs into the ring's shared memory, enters the kernel with a
// raw system call and reads the CQEs back, so a flush costs no cgo call and
// the goroutine keeps its P throughout (a cgo call lasting as long as a
// batch of receives and sends would, at GOMAXPROCS=1, have the scheduler
// hand its P to another thread and back). An op's user_data is its index in
// the batch and the flush generation, so that a completion can never be
// taken for an op of a later flush. Its receives (Recv) are in recv.go, its
// sends (Send) in send.go.
type ringBatch struct {
	ring  *liburing.Ring
	raw   liburing.RawRing
	ops   []batchOp
	keys  []uint64 // per queued op, the driver's key
	bufOf []int32  // per queued op, its receive buffer or -1
	nrecv int      // receives queued: buffers 0..nrecv-1 are theirs
	gen   uint32
	pins  []runtime.Pinner // send buffers, while the ring holds them: pinsPer each
	bufs  []byte           // receive buffers, mmapped: count x size
	size  int
	count int

	res    []batchResult // results of the last flush
	resAt  int
	broken int32 // -errno the ring failed with; nothing is submitted after it
	stats  batchStats
}

// batchOp is one queued receive or send.
type batchOp struct {
	sqe  liburing.SQE // as the ring takes it, but for UserData (set at the flush)
	nr   uintptr      // the system call doing the same, for a flush of few ops
	data *byte        // a send's first byte: keeps it alive, pinned for the ring
}

type batchResult struct {
	key uint64
	res int32
	buf int32 // receive buffer, -1 for a send
	idx int32 // the op's index in its flush
}

// batchStats counts what the batch did, for tests.
type batchStats struct {
	flushes   uint64
	enters    uint64 // io_uring_enter system calls
	waited    uint64 // enters that waited for a completion not posted inline
	failed    uint64 // ops failed because the ring refused them
	submitted uint64
	direct    uint64 // ops done with recv(2) or send(2) (flushes of up to directMax)
}

func newRingBatch(cfg driver.Config) (*ringBatch, error) {
	entries := cfg.Entries
	if entries == 0 {
		entries = defaultEntries
	}
	size, count := cfg.BufferSize, cfg.BufferCount
	if size <= 0 {
		size = defaultBufferSize
	}
	if count <= 0 {
		count = defaultBufferCount
	}
	count = min(count, maxBufferCount)
	r, err := setupRing(entries, 2*entries, 0)
	if err != nil {
		return nil, setupError(err)
	}
	b := &ringBatch{ring: r, raw: r.Raw(), size: size, count: count}
	if b.bufs, err = mmap(size * count); err != nil {
		r.Close()
		return nil, err
	}
	for i := uint32(0); i < b.raw.SQEntries; i++ { // slot i holds SQE i
		*(*uint32)(unsafe.Add(b.raw.SQArray, 4*i)) = i
	}
	b.ops = make([]batchOp, 0, 64)
	return b, nil
}

func (b *ringBatch) push(key uint64, buf int32, op batchOp) {
	b.ops = append(b.ops, op)
	b.keys = append(b.keys, key)
	b.bufOf = append(b.bufOf, buf)
}

func (b *ringBatch) Queued() bool { return len(b.ops) > 0 }

// Flush submits the queued ops and reaps their completions. They complete
// inline, so one io_uring_enter normally does it all (more only when the
// batch is larger than the SQ); a completion the kernel did not post
// inline is waited for, so that no op outlives its flush (its buffer is
// reused by the next one).
func (b *ringBatch) Flush() {
	b.res, b.resAt = b.res[:0], 0
	n := len(b.ops)
	b.stats.flushes++
	b.stats.submitted += uint64(n)
	if b.broken != 0 {
		b.fail(n, b.broken)
	}
	if n <= directMax && b.broken == 0 {
		b.direct()
		b.end()
		return
	}
	b.pinSends()
	r := &b.raw
	next, pending := 0, n
	for b.broken == 0 && pending > 0 {
		// Write what fits; the CQ (twice the SQ) is emptied after each enter.
		tail := *r.SQTail
		k := min(int(r.SQEntries-(tail-atomic.LoadUint32(r.SQHead))), n-next)
		for ; k > 0; k-- {
			b.writeSQE(tail&r.SQMask, next)
			tail++
			next++
		}
		atomic.StoreUint32(r.SQTail, tail)
		toSubmit := tail - atomic.LoadUint32(r.SQHead)
		var flags, minComplete uintptr
		if toSubmit == 0 && next == n {
			// Everything is in, something is not: wait for it (a blocking
			// enter, through Syscall so the runtime can run other work).
			flags, minComplete = liburing.EnterGetEvent, 1
			b.stats.waited++
		} else if atomic.LoadUint32(r.SQFlags)&liburing.SQCQOverflow != 0 {
			flags = liburing.EnterGetEvent // flush the overflow list
		}
		b.stats.enters++
		var errno unix.Errno
		if minComplete > 0 {
			_, _, errno = unix.Syscall6(unix.SYS_IO_URING_ENTER, uintptr(r.FD), uintptr(toSubmit), minComplete, flags, 0, 0)
		} else {
			_, _, errno = unix.RawSyscall6(unix.SYS_IO_URING_ENTER, uintptr(r.FD), uintptr(toSubmit), 0, flags, 0, 0)
		}
		switch errno {
		case 0, unix.EINTR, unix.EBUSY, unix.EAGAIN: // reap, go round
		default:
			b.reap(n, &pending)
			b.fail(n, -int32(errno))
			pending = 0
			continue
		}
		b.reap(n, &pending)
	}
	b.end()
}

// end releases what the flush held and starts the next generation.
func (b *ringBatch) end() {
	b.unpin()
	clear(b.ops) // drop the send buffers' references
	b.ops, b.keys, b.bufOf = b.ops[:0], b.keys[:0], b.bufOf[:0]
	b.nrecv = 0
	b.gen++
}

// directMax is the most ops a flush does with their own system calls,
// recv(2) or send(2) with the same flags, which is what the SQEs would have
// done inline. An io_uring_enter costs the SQE and CQE round trip and the
// send buffers' pinning on top of the calls it replaces, and pays only
// where it replaces enough of them. A lightly loaded server's Waits have
// few ops, and there three system calls cost less server CPU per request
// than an enter, four no less; a loaded server's flushes are larger than
// this and do not notice it. Compare with make bench-compare's open-loop
// and echo rows when changing it.
const directMax = 3

// direct performs a flush of up to directMax ops with a system call each.
// None blocks (MSG_DONTWAIT).
func (b *ringBatch) direct() {
	for i := range b.ops {
		op := &b.ops[i]
		q := &op.sqe
		b.stats.direct++
		n, _, errno := unix.RawSyscall6(op.nr, uintptr(q.FD), uintptr(q.Addr), uintptr(q.Len), uintptr(q.OpFlags), 0, 0)
		res := int32(n)
		if errno != 0 {
			res = -int32(errno)
		}
		b.res = append(b.res, batchResult{key: b.keys[i], res: res, buf: b.bufOf[i], idx: int32(i)})
	}
}

// writeSQE writes op i into SQ slot idx.
func (b *ringBatch) writeSQE(idx uint32, i int) {
	q := (*liburing.SQE)(unsafe.Add(b.raw.SQEs, uintptr(idx)*liburing.SQESize))
	*q = b.ops[i].sqe
	q.UserData = uint64(b.gen)<<32 | uint64(i)
}

// reap takes every CQE the kernel posted.
func (b *ringBatch) reap(n int, pending *int) {
	r := &b.raw
	head := *r.CQHead
	tail := atomic.LoadUint32(r.CQTail)
	for ; head != tail; head++ {
		c := (*liburing.CQE)(unsafe.Add(r.CQEs, uintptr(head&r.CQMask)*liburing.CQESize))
		i := int(uint32(c.UserData))
		if uint32(c.UserData>>32) != b.gen || i >= n {
			continue // not this flush's
		}
		b.res = append(b.res, batchResult{key: b.keys[i], res: c.Res, buf: b.bufOf[i], idx: int32(i)})
		*pending--
	}
	atomic.StoreUint32(r.CQHead, head)
}

// fail ends the ops of this flush that have no result with res. The ring
// refused to work: the batch never submits again (SQEs it prepped may still
// reach the kernel, so their buffers must not be handed to later ops).
func (b *ringBatch) fail(n int, res int32) {
	b.broken = res
	done := make([]bool, n) // a failing ring: not a hot path
	for _, r := range b.res {
		done[r.idx] = true
	}
	for i := 0; i < n; i++ {
		if !done[i] {
			b.res = append(b.res, batchResult{key: b.keys[i], res: res, buf: -1, idx: int32(i)})
			b.stats.failed++
		}
	}
}

// Next hands out the next result.
func (b *ringBatch) Next() (uint64, int32, []byte, bool) {
	if b.resAt == len(b.res) {
		return 0, 0, nil, false
	}
	r := b.res[b.resAt]
	b.resAt++
	var data []byte
	if r.buf >= 0 && r.res > 0 {
		off := int(r.buf) * b.size
		data = b.bufs[off : off+int(r.res) : off+b.size]
	}
	return r.key, r.res, data, true
}

// Backend names the driver the batch makes of the epoll driver.
func (b *ringBatch) Backend() string { return driver.NameEpollURing }

// Reasons are the batched form's rows of the table (variants.go), the
// receive's with the buffers it has.
func (b *ringBatch) Reasons() []string {
	out := reasons(formBatch)
	for i, r := range out {
		if r == variantNamed(formBatch, "recv", "dontwait").line() {
			out[i] = fmt.Sprintf("%s, %d buffers of %d B", r, b.count, b.size)
		}
	}
	return out
}

func (b *ringBatch) Close() error {
	b.unpin()
	b.ops, b.nrecv = nil, 0
	if b.ring != nil {
		b.ring.Close()
		b.ring = nil
	}
	if b.bufs != nil {
		unix.Munmap(b.bufs)
		b.bufs = nil
	}
	return nil
}

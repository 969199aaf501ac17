//go:build linux && cgo

package uring

import (
	"fmt"
	"runtime"
	"unsafe"

	"github.com/ringloop/ringloop/cgo/liburing"
	"github.com/ringloop/ringloop/driver"
	"github.com/ringloop/ringloop/internal/epollcore"
	"golang.org/x/sys/unix"
)

// NewReady builds the readiness variant of the io_uring driver, the one a
// parked loop runs: readiness comes from an epoll set, exactly as in the
// epoll driver (registration, edges, accepts, connects, closes and polls
// are that driver's code), and the receives and sends of the fds found
// ready are issued as SQEs with MSG_DONTWAIT, all of one Wait in a single
// io_uring_enter. MSG_DONTWAIT makes the kernel fail a request that would
// block with -EAGAIN rather than arm a poll for it, so every request
// completes inside that enter, on the calling thread: no poll is armed, no
// completion work is queued to a thread the loop's goroutine has left, and
// the ring needs no eventfd (the loop parks on the epoll fd). -EAGAIN
// clears the fd's readiness until its next edge, as a failed recv(2) would.
// The ring is plain (any thread submits), its only ops are RECV and SEND
// (5.6), so every profile gets the same variant.
func NewReady(cfg driver.Config) (driver.Driver, error) {
	b, err := newReadyBatch(cfg)
	if err != nil {
		return nil, err
	}
	d, err := epollcore.NewBatched(cfg, b)
	if err != nil {
		return nil, err
	}
	return d, nil
}

// readyBatch is epollcore.Batch on a plain ring. Queued ops are written as
// descriptors into C memory; an op's user_data is its index in the batch
// and the flush generation, so that a completion can never be taken for an
// op of a later flush.
type readyBatch struct {
	ring  *liburing.Ring
	batch *liburing.Batch
	sq    []liburing.Op // descriptors, C memory
	cqes  []liburing.CQE
	keys  []uint64 // per queued op, the driver's key
	bufOf []int32  // per queued op, its receive buffer or -1
	nsq   int
	nrecv int // receives queued: buffers 0..nrecv-1 are theirs
	gen   uint32
	pin   runtime.Pinner // send buffers, until their flush ends
	bufs  []byte         // receive buffers, mmapped: count x size
	size  int
	count int

	res    []readyResult // results of the last flush
	resAt  int
	broken int32 // -errno the ring failed with; nothing is submitted after it
	stats  readyStats
}

type readyResult struct {
	key uint64
	res int32
	buf int32 // receive buffer, -1 for a send
	idx int32 // the op's index in its flush
}

// readyStats counts flushes for tests.
type readyStats struct {
	flushes   uint64
	waited    uint64 // flushes that had to wait for a completion not posted inline
	failed    uint64 // ops failed because the ring refused them
	submitted uint64
}

func newReadyBatch(cfg driver.Config) (*readyBatch, error) {
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
	b := &readyBatch{ring: r, size: size, count: count}
	if b.bufs, err = mmap(size * count); err != nil {
		r.Close()
		return nil, err
	}
	b.batch = liburing.NewBatch(int(entries), 1, int(2*entries))
	b.sq = b.batch.Ops()
	b.cqes = b.batch.CQEs()
	b.keys = make([]uint64, len(b.sq))
	b.bufOf = make([]int32, len(b.sq))
	return b, nil
}

func (b *readyBatch) push(key uint64, buf int32) *liburing.Op {
	if b.nsq == len(b.sq) {
		b.batch.GrowOps(2 * len(b.sq))
		b.sq = b.batch.Ops()
		b.keys = append(b.keys, make([]uint64, len(b.sq)-len(b.keys))...)
		b.bufOf = append(b.bufOf, make([]int32, len(b.sq)-len(b.bufOf))...)
	}
	i := b.nsq
	b.nsq++
	b.keys[i], b.bufOf[i] = key, buf
	q := &b.sq[i]
	*q = liburing.Op{UserData: uint64(b.gen)<<32 | uint64(i)}
	return q
}

// Recv queues a receive into the next free buffer.
func (b *readyBatch) Recv(fd int, key uint64) bool {
	if b.nrecv == b.count {
		return false
	}
	buf := int32(b.nrecv)
	b.nrecv++
	q := b.push(key, buf)
	q.Opcode = liburing.OpRecv
	q.FD = int32(fd)
	q.Addr = uint64(uintptr(unsafe.Pointer(&b.bufs[int(buf)*b.size])))
	q.Len = uint32(b.size)
	q.OpFlags = unix.MSG_DONTWAIT
	return true
}

// Send queues a send of p, pinned until the flush ends.
func (b *readyBatch) Send(fd int, p []byte, key uint64) {
	q := b.push(key, -1)
	q.Opcode = liburing.OpSend
	q.FD = int32(fd)
	if len(p) > 0 {
		b.pin.Pin(&p[0])
		q.Addr = uint64(uintptr(unsafe.Pointer(&p[0])))
		q.Len = uint32(len(p))
	}
	q.OpFlags = unix.MSG_DONTWAIT | unix.MSG_NOSIGNAL
}

func (b *readyBatch) Queued() bool { return b.nsq > 0 }

// Flush submits the queued ops and reaps their completions. They complete
// inline, so one Run (one io_uring_enter) normally does it all; a
// completion the kernel did not post inline is waited for, so that no op
// outlives its flush (its buffer is reused by the next one).
func (b *readyBatch) Flush() {
	b.res, b.resAt = b.res[:0], 0
	n := b.nsq
	ops, pending := n, n
	b.stats.flushes++
	b.stats.submitted += uint64(n)
	var timeout int64
	if b.broken != 0 && n > 0 {
		b.fail(n, b.broken)
		pending = 0
	}
	for pending > 0 {
		got, left, err := b.ring.Run(b.batch, ops, 0, timeout, len(b.cqes))
		for _, c := range b.cqes[:got] {
			i := int(uint32(c.UserData))
			if uint32(c.UserData>>32) != b.gen || i >= n {
				continue // not this flush's
			}
			b.res = append(b.res, readyResult{key: b.keys[i], res: c.Res, buf: b.bufOf[i], idx: int32(i)})
			pending--
		}
		if err != nil {
			errno, _ := err.(unix.Errno)
			if errno == 0 {
				errno = unix.EIO
			}
			b.fail(n, -int32(errno))
			break
		}
		ops = left
		if got == 0 && left == 0 && pending > 0 {
			timeout = -1 // not posted inline: wait for it
			b.stats.waited++
		}
	}
	b.pin.Unpin()
	b.nsq, b.nrecv = 0, 0
	b.gen++
}

// fail ends the ops of this flush that have no result with res. The ring
// refused to work: the batch never submits again (SQEs it prepped may still
// reach the kernel, so their buffers must not be handed to later ops).
func (b *readyBatch) fail(n int, res int32) {
	b.broken = res
	done := make([]bool, n) // a failing ring: not a hot path
	for _, r := range b.res {
		done[r.idx] = true
	}
	for i := 0; i < n; i++ {
		if !done[i] {
			b.res = append(b.res, readyResult{key: b.keys[i], res: res, buf: -1, idx: int32(i)})
			b.stats.failed++
		}
	}
}

// Next hands out the next result.
func (b *readyBatch) Next() (uint64, int32, []byte, bool) {
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

func (b *readyBatch) Backend() string { return "io_uring" }

func (b *readyBatch) Reasons() []string {
	return []string{
		"variant: readiness from epoll, I/O through the ring (parked loop: completions inline on the calling thread, no poll arming, no task work)",
		fmt.Sprintf("recv: one RECV with MSG_DONTWAIT per ready fd per Wait into one of %d buffers of %d B, all in one io_uring_enter; EAGAIN waits for the next edge", b.count, b.size),
		"send: one SEND with MSG_DONTWAIT per fd in the same io_uring_enter; EPOLLOUT edge continues partial sends",
	}
}

func (b *readyBatch) Close() error {
	b.pin.Unpin()
	b.nsq, b.nrecv = 0, 0
	if b.ring != nil {
		b.ring.Close()
		b.ring = nil
	}
	if b.batch != nil {
		b.batch.Free()
		b.batch = nil
	}
	if b.bufs != nil {
		unix.Munmap(b.bufs)
		b.bufs = nil
	}
	return nil
}

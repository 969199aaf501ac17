//go:build linux && cgo && !ringloop_nouring

package uring

import (
	"unsafe"

	"github.com/ringloop/ringloop/internal/liburing"
	"golang.org/x/sys/unix"
)

// bufPool is the driver's receive memory: count buffers of size bytes in one
// anonymous mapping (outside the Go heap), lent to the kernel through a
// registered buffer ring, or by the driver itself to each recvPolled
// receive, and handed back after each completion's callback returns.
type bufPool struct {
	size    int
	count   int
	mem     []byte
	ring    []byte // registered buffer ring (io_uring_buf entries), mmapped
	entries uint32
	bgid    uint16
	idle    []uint16 // recvPolled: the ids no receive holds
}

// registerRing maps and registers the buffer ring by hand (liburing 2.3 has
// no io_uring_setup_buf_ring): mmap, reset the tail, IORING_REGISTER_PBUF_RING.
func (b *bufPool) registerRing(r *liburing.Ring) error {
	mem, entries, err := b.newRing(r)
	if err != nil {
		return err
	}
	b.ring, b.entries = mem, entries
	return nil
}

// newRing maps a buffer ring and registers it with r.
func (b *bufPool) newRing(r *liburing.Ring) ([]byte, uint32, error) {
	entries := uint32(1)
	for int(entries) < b.count {
		entries <<= 1
	}
	page := unix.Getpagesize()
	n := (int(entries)*16 + page - 1) / page * page
	mem, err := mmap(n)
	if err != nil {
		return nil, 0, err
	}
	addr := uintptr(unsafe.Pointer(&mem[0]))
	liburing.InitBufRing(addr)
	if err := registerBufRing(r, addr, entries, b.bgid); err != nil {
		unix.Munmap(mem)
		return nil, 0, err
	}
	return mem, entries, nil
}

// registerBufRing is IORING_REGISTER_PBUF_RING; tests make it fail.
var registerBufRing = func(r *liburing.Ring, addr uintptr, entries uint32, bgid uint16) error {
	return r.RegisterBufRing(addr, entries, bgid)
}

// start maps the buffers and lends them: all ids as returns for a buffer
// ring (published by the first Run), or all on the driver's free list for
// recvPolled.
func (b *bufPool) start(d *Driver) error {
	if d.recv == recvPlain {
		return nil
	}
	mem, err := mmap(b.size * b.count)
	if err != nil {
		return err
	}
	b.mem = mem
	switch d.recv {
	case recvMultiRing, recvSingleRing:
		d.ring.SetBufRing(uintptr(unsafe.Pointer(&b.ring[0])), b.base(), uint32(b.size), b.entries)
		for i := 0; i < b.count; i++ {
			d.rets[i] = uint16(i)
		}
		d.nret = b.count
	case recvPolled:
		b.idle = make([]uint16, b.count)
		for i := range b.idle {
			b.idle[i] = uint16(b.count - 1 - i)
		}
	}
	return nil
}

func (b *bufPool) base() uintptr { return uintptr(unsafe.Pointer(&b.mem[0])) }

// addr is buffer bid's address.
func (b *bufPool) addr(bid uint16) uintptr { return b.base() + uintptr(int(bid)*b.size) }

// data is the first n received bytes of buffer bid.
func (b *bufPool) data(bid uint16, n int32) []byte {
	off := int(bid) * b.size
	return b.mem[off : off+int(n) : off+b.size]
}

// take lends a free buffer to a recvPolled receive.
func (b *bufPool) take() (uint16, bool) {
	n := len(b.idle)
	if n == 0 {
		return 0, false
	}
	bid := b.idle[n-1]
	b.idle = b.idle[:n-1]
	return bid, true
}

// giveBack hands buffer bid back: to the kernel through its buffer ring at
// the next Run (a datagram buffer through the datagram ring), or to the
// driver's free list.
func (d *Driver) giveBack(bid uint16) {
	if bid >= dgramBidBase {
		d.dgram.rets = append(d.dgram.rets, bid) // at most its count: no growth
		return
	}
	if d.recv == recvPolled {
		d.bufs.idle = append(d.bufs.idle, bid)
		return
	}
	d.rets[d.nret] = bid
	d.nret++
}

// unregisterRing drops a registered buffer ring that will not be used.
func (b *bufPool) unregisterRing(r *liburing.Ring) {
	if b.ring != nil {
		r.UnregisterBufRing(b.bgid)
		unix.Munmap(b.ring)
		b.ring = nil
	}
}

// free unmaps everything; the ring using it must be closed first.
func (b *bufPool) free() {
	if b.mem != nil {
		unix.Munmap(b.mem)
		b.mem = nil
	}
	if b.ring != nil {
		unix.Munmap(b.ring)
		b.ring = nil
	}
}

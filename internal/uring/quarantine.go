//go:build linux && cgo && !ringloop_nouring

package uring

import (
	"sync"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Memory the kernel may still use after a Close that could not confirm
// every request ended (Close off the loop's thread, where a SINGLE_ISSUER
// ring cannot be drained, or a drain that timed out). The ring's teardown
// goes on in the kernel after close(2), and a late receive written into
// memory unmapped and mapped again for something else would corrupt it. So
// such memory is never unmapped: its pages are replaced by an inaccessible
// reservation (physical memory goes back, the addresses stay taken, a late
// access faults in the kernel and fails its request), and Go memory pinned
// for sends is kept reachable. Only a Close that went wrong pays this.

var quarantine struct {
	mu    sync.Mutex
	bytes int64
	held  [][]byte // pinned send buffers, kept alive
}

// QuarantinedBytes reports how much memory Close held back from reuse
// because the kernel might still have been using it (0 in normal use).
func QuarantinedBytes() int64 {
	quarantine.mu.Lock()
	defer quarantine.mu.Unlock()
	return quarantine.bytes
}

// quarantineAll holds back everything the kernel may touch (before release).
func (d *Driver) quarantineAll() {
	reserve := func(b []byte) []byte {
		if b != nil {
			neutralize(b)
		}
		return nil
	}
	d.bufs.mem = reserve(d.bufs.mem)
	d.bufs.ring = reserve(d.bufs.ring)
	d.misc = reserve(d.misc)
	for i, m := range d.ops.sa {
		d.ops.sa[i] = reserve(m)
	}
	for _, ch := range d.ops.chunks {
		for i := range ch {
			o := &ch[i]
			o.rbuf = reserve(o.rbuf)
			if o.pinned && o.p != nil {
				quarantine.mu.Lock()
				quarantine.held = append(quarantine.held, o.p)
				quarantine.bytes += int64(cap(o.p))
				quarantine.mu.Unlock()
			}
		}
	}
}

// neutralize maps an inaccessible, unbacked reservation over b (an mmap of
// ours), in place.
func neutralize(b []byte) {
	addr := uintptr(unsafe.Pointer(&b[0]))
	_, _, e := unix.Syscall6(unix.SYS_MMAP, addr, uintptr(len(b)), unix.PROT_NONE,
		unix.MAP_PRIVATE|unix.MAP_ANONYMOUS|unix.MAP_FIXED|unix.MAP_NORESERVE, ^uintptr(0), 0)
	_ = e // if the kernel refuses (out of mappings), b stays as it is: still never reused
	quarantine.mu.Lock()
	quarantine.bytes += int64(len(b))
	quarantine.mu.Unlock()
}

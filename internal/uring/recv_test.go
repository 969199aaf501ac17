//go:build linux && cgo && !ringloop_nouring

package uring

import (
	"crypto/sha256"
	"hash"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/ringloop/ringloop/internal/driver"
	"github.com/ringloop/ringloop/internal/drivertest"
)

// recvModes lists the receive variants this kernel can run, by name.
var recvModes = []struct {
	name string
	mode recvMode
}{
	{"multishot-bufring", recvMultiRing},
	{"single-bufring", recvSingleRing},
	{"polled", recvPolled},
	{"plain", recvPlain},
}

// TestRecvVariants: every receive variant delivers small and large streams
// intact (sha256) on several connections at once, with a pool of two tiny
// buffers so that receives run out of buffers (ENOBUFS), wait in the driver
// and are re-armed when buffers come back.
func TestRecvVariants(t *testing.T) {
	for _, rm := range recvModes {
		t.Run(rm.name, func(t *testing.T) {
			var d *Driver
			withRecvMode(rm.mode, func() {
				d = newLocked(t, driver.Config{BufferSize: 1024, BufferCount: 2})
			})
			// Where the kernel refuses the variant (buffer rings on
			// Debian's 5.10), the driver falls back, and the fallback must
			// deliver the same streams.
			if want := kernel(t).recvFallback(rm.mode); d.recv != want {
				t.Fatalf("forced %s, driver runs mode %d, want %d (%s)", rm.name, d.recv, want, d.Features())
			}
			h := drivertest.NewHarness(t, d)
			const conns = 4
			sizes := []int{1, 100, 1500, (4 << 20) / scale}
			type conn struct {
				op   *drivertest.Op
				want [32]byte
				hw   hash.Hash
				n    int
			}
			cs := make([]*conn, conns)
			for i := range cs {
				fd, peer := drivertest.TCPPair(t)
				h.Own(fd)
				c := &conn{hw: sha256.New()}
				c.op = h.Recv(fd, func(p []byte) { c.hw.Write(p) })
				var all []byte
				r := rand.New(rand.NewPCG(uint64(i), 7))
				for _, n := range sizes {
					b := make([]byte, n)
					for j := range b {
						b[j] = byte(r.Uint32())
					}
					all = append(all, b...)
				}
				c.n = len(all)
				c.want = sha256.Sum256(all)
				go func() {
					for off := 0; off < len(all); {
						n := min(len(all)-off, 1+r.IntN(64<<10))
						if _, err := peer.Write(all[off : off+n]); err != nil {
							return
						}
						off += n
					}
					peer.CloseWrite()
				}()
				cs[i] = c
			}
			h.Until(60*time.Second, "every stream's EOF", func() bool {
				for _, c := range cs {
					if !c.op.Done {
						return false
					}
				}
				return true
			})
			for i, c := range cs {
				if c.op.Res != 0 || c.op.Bytes != int64(c.n) {
					t.Fatalf("conn %d: ended with %s after %d of %d bytes", i, drivertest.ErrnoRes(c.op.Res), c.op.Bytes, c.n)
				}
				if got := c.hw.Sum(nil); [32]byte(got) != c.want {
					t.Fatalf("conn %d: sha256 %x, want %x", i, got[:4], c.want[:4])
				}
			}
			if rm.mode != recvPlain && d.Stats().NoBufs == 0 {
				t.Errorf("4 streams on 2 buffers never ran out of buffers: the ENOBUFS path went untested")
			}
			if st := d.Stats(); st.SilentErr != 0 {
				t.Errorf("%d buffer returns or cancels failed", st.SilentErr)
			}
			t.Logf("%s: %+v", rm.name, d.Stats())
		})
	}
}

// TestSilentBufferReturns: on a kernel without buffer rings (5.10), handing
// a buffer back must not end the next blocking Wait early: that Wait is one
// cgo call that sleeps its timeout.
func TestSilentBufferReturns(t *testing.T) {
	d := newLocked(t, driver.Config{Profile: driver.Kernel510})
	if d.recv != recvPolled {
		t.Fatalf("5.10 profile receives with mode %d", d.recv)
	}
	h := drivertest.NewHarness(t, d)
	fd, peer := drivertest.TCPPair(t)
	h.Own(fd)
	r := h.Recv(fd, nil)
	for i := 1; i <= 5; i++ {
		peer.Write([]byte("data"))
		h.Until(0, "data", func() bool { return r.Bytes == int64(4*i) })
		before := d.Stats()
		start := time.Now()
		if n := h.Wait(20 * time.Millisecond); n != 0 {
			t.Fatalf("idle Wait reported %d completions", n)
		}
		after := d.Stats()
		if el := time.Since(start); el < 20*time.Millisecond {
			t.Fatalf("Wait(20ms) returned after %v: woken by the buffer's return", el)
		}
		if runs := after.Runs - before.Runs; runs != 1 {
			t.Fatalf("Wait took %d cgo calls", runs)
		}
		if after.SilentErr != 0 {
			t.Fatalf("a silent completion failed: %+v", after)
		}
	}
	h.Cancel(r)
	h.Until(0, "cancel", func() bool { return r.Done })
}

// TestIdleReceivesHoldNoBuffer: without buffer rings (the 5.10 profile),
// receives waiting for data hold none of the driver's buffers, before and
// after they are cancelled, so more idle connections than buffers leave
// every buffer to the connections that have data (a buffer-select receive
// there keeps its buffer while it waits: package doc).
func TestIdleReceivesHoldNoBuffer(t *testing.T) {
	const buffers = 2
	d := newLocked(t, driver.Config{Profile: driver.Kernel510, BufferSize: 1024, BufferCount: buffers})
	if d.recv != recvPolled {
		t.Fatalf("5.10 profile receives with mode %d", d.recv)
	}
	h := drivertest.NewHarness(t, d)
	var idle []*drivertest.Op
	for range 4 * buffers {
		fd, _ := drivertest.TCPPair(t)
		h.Own(fd)
		idle = append(idle, h.Recv(fd, nil))
	}
	h.Wait(0) // the idle receives are in the kernel
	if n := len(d.bufs.idle); n != buffers {
		t.Fatalf("%d idle receives hold %d of %d buffers", len(idle), buffers-n, buffers)
	}
	fd, peer := drivertest.TCPPair(t)
	h.Own(fd)
	r := h.Recv(fd, nil)
	for i := 1; i <= 3; i++ {
		if _, err := peer.Write([]byte("hello")); err != nil {
			t.Fatal(err)
		}
		h.Until(0, "the new connection's data", func() bool { return r.Bytes == int64(5*i) })
	}
	for _, o := range idle {
		h.Cancel(o)
	}
	h.Until(0, "every idle receive cancelled", func() bool {
		for _, o := range idle {
			if !o.Done {
				return false
			}
		}
		return true
	})
	h.Cancel(r)
	h.Until(0, "the last receive cancelled", func() bool { return r.Done })
	if n := len(d.bufs.idle); n != buffers {
		t.Fatalf("after every receive ended, %d of %d buffers are free", n, buffers)
	}
}

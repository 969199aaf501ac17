//go:build linux && cgo && !ringloop_nouring

package uring

import (
	"errors"
	"testing"

	"github.com/ringloop/ringloop/cgo/liburing"
	"github.com/ringloop/ringloop/driver"
	"github.com/ringloop/ringloop/driver/drivertest"
)

// TestRebuildKeepsOldRingWhenNewCannotTakeBuffers: a Rebuild whose new ring
// cannot register the receive buffer ring fails before it touches the old
// ring, so receives go on there (no re-arm spin on a ring without buffers);
// a later Rebuild succeeds and they go on on the new ring.
func TestRebuildKeepsOldRingWhenNewCannotTakeBuffers(t *testing.T) {
	for _, rm := range recvModes[:2] { // the buffer-ring modes
		t.Run(rm.name, func(t *testing.T) {
			if !kernel(t).bufRing {
				t.Skip("this kernel refuses buffer rings: the driver uses PROVIDE_BUFFERS, which needs no registration")
			}
			var d *Driver
			withRecvMode(rm.mode, func() { d = newLocked(t, driver.Config{}) })
			h := drivertest.NewHarness(t, d)
			fd, peer := drivertest.TCPPair(t)
			h.Own(fd)
			var got []byte
			r := h.Recv(fd, func(p []byte) { got = append(got, p...) })
			h.Wait(0)

			refused := errors.New("injected: buffer ring refused")
			registerBufRing = func(*liburing.Ring, uintptr, uint32, uint16) error { return refused }
			err := d.Rebuild()
			registerBufRing = func(r *liburing.Ring, addr uintptr, entries uint32, bgid uint16) error {
				return r.RegisterBufRing(addr, entries, bgid)
			}
			if !errors.Is(err, refused) {
				t.Fatalf("Rebuild with the buffer ring refused: %v", err)
			}
			if _, err := peer.Write([]byte("still")); err != nil {
				t.Fatal(err)
			}
			h.Until(0, "receive on the kept ring", func() bool { return string(got) == "still" })
			if n := d.Stats().NoBufs; n != 0 {
				t.Fatalf("receives ran out of buffers %d times after the failed Rebuild", n)
			}

			if err := d.Rebuild(); err != nil {
				t.Fatalf("Rebuild: %v", err)
			}
			if _, err := peer.Write([]byte(" going")); err != nil {
				t.Fatal(err)
			}
			h.Until(0, "receive after the Rebuild", func() bool { return string(got) == "still going" })
			if r.Done {
				t.Fatalf("receive ended: %s", drivertest.ErrnoRes(r.Res))
			}
			h.Cancel(r)
			h.Until(0, "cancel", func() bool { return r.Done })
		})
	}
}

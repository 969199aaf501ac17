//go:build linux && cgo && !ringloop_nouring

package uring

import (
	"errors"
	"testing"
	"time"

	"github.com/ringloop/ringloop/internal/driver"
	"github.com/ringloop/ringloop/internal/drivertest"
	"golang.org/x/sys/unix"
)

// TestCancelAll: cancel by fd ends every op on that fd (a receive, a poll
// and a blocked send) with -ECANCELED and leaves ops on other fds armed,
// whether the kernel cancels by fd (5.19) or the driver cancels each op.
func TestCancelAll(t *testing.T) {
	forEachProfile(t, func(t *testing.T, p driver.Profile) {
		d := newLocked(t, driver.Config{Profile: p})
		h := drivertest.NewHarness(t, d)
		fd, peer := drivertest.TCPPair(t)
		h.Own(fd)
		drivertest.SetBuffers(t, fd, 8<<10, 0)
		peer.SetReadBuffer(8 << 10)
		other, otherPeer := drivertest.TCPPair(t)
		h.Own(other)
		r := h.Recv(fd, nil)
		pl := h.Poll(fd, unix.POLLIN)
		s := h.Send(fd, make([]byte, 4<<20))
		keep := h.Recv(other, nil)
		for i := 0; i < 3; i++ {
			h.Wait(time.Millisecond)
		}
		d.CancelAll(fd)
		h.Until(0, "cancel by fd", func() bool { return drivertest.AllDone(r, pl, s) })
		for _, op := range []*drivertest.Op{r, pl, s} {
			if op.Res != -int32(unix.ECANCELED) {
				t.Fatalf("%s ended with %s", op.Kind, drivertest.ErrnoRes(op.Res))
			}
		}
		otherPeer.Write([]byte("still armed"))
		h.Until(0, "the other fd's receive", func() bool { return keep.Bytes == 11 })
		if keep.Done {
			t.Fatal("CancelAll ended an op on another fd")
		}
		d.CancelAll(fd) // nothing left: a no-op
		h.Quiet(10*time.Millisecond, "second CancelAll")
	})
}

// TestCloseFromCallback: Close called inside a Wait callback takes effect
// when that Wait returns; nothing leaks and later calls see ErrClosed.
func TestCloseFromCallback(t *testing.T) {
	before := countFDs(t)
	d := newLocked(t, driver.Config{})
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_NONBLOCK|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	d.Recv(fds[1], 1)
	d.Send(fds[0], 2, []byte("abc"))
	d.Send(fds[0], 3, []byte("def"))
	calls := 0
	deadline := time.Now().Add(10 * time.Second)
	for {
		_, err := d.Wait(10*time.Millisecond, func(c *driver.Completion) {
			calls++
			if calls == 1 {
				d.Close()
				d.Send(fds[0], 4, []byte("ignored"))
			}
		})
		if errors.Is(err, driver.ErrClosed) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if time.Now().After(deadline) {
			t.Fatal("no completion")
		}
	}
	if err := d.Wake(); !errors.Is(err, driver.ErrClosed) {
		t.Fatalf("Wake after Close: %v", err)
	}
	unix.Close(fds[0])
	unix.Close(fds[1])
	if after := countFDs(t); after != before {
		t.Fatalf("fds: %d before, %d after", before, after)
	}
}

// TestSendFromMmap: Send takes memory outside the Go heap as well (pinning
// it is a no-op).
func TestSendFromMmap(t *testing.T) {
	d := newLocked(t, driver.Config{})
	h := drivertest.NewHarness(t, d)
	fd, peer := drivertest.TCPPair(t)
	h.Own(fd)
	m, err := unix.Mmap(-1, 0, 1<<16, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Munmap(m)
	copy(m, "from mmap")
	s := h.Send(fd, m[:9])
	h.Until(0, "send", func() bool { return s.Done })
	buf := make([]byte, 9)
	peer.SetReadDeadline(time.Now().Add(10 * time.Second))
	if _, err := peer.Read(buf); err != nil || string(buf) != "from mmap" {
		t.Fatalf("peer read %q, %v", buf, err)
	}
}

// TestPollingWait: a loop that only ever calls Wait(0) still sees every
// completion, including those the kernel defers to the submitter
// (DEFER_TASKRUN announces them with IORING_SQ_TASKRUN).
func TestPollingWait(t *testing.T) {
	forEachProfile(t, func(t *testing.T, p driver.Profile) {
		d := newLocked(t, driver.Config{Profile: p})
		fd, peer := drivertest.TCPPair(t)
		defer unix.Close(fd)
		d.Recv(fd, 1)
		got := 0
		fn := func(c *driver.Completion) { got += len(c.Data) }
		d.Wait(0, fn)
		for i := 0; i < 20; i++ {
			peer.Write([]byte("0123456789"))
			deadline := time.Now().Add(10 * time.Second)
			for got < 10*(i+1) {
				if time.Now().After(deadline) {
					t.Fatalf("round %d: Wait(0) never saw the data (%d bytes)", i, got)
				}
				if _, err := d.Wait(0, fn); err != nil {
					t.Fatal(err)
				}
			}
		}
	})
}

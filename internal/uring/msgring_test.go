//go:build linux && cgo && !ringloop_nouring

package uring

import (
	"errors"
	"runtime"
	"testing"
	"time"

	"github.com/ringloop/ringloop/internal/driver"
	"golang.org/x/sys/unix"
)

// TestMsgRing: one loop posts completions on another's ring with MSG_RING;
// the target, blocked in Wait(-1), reports each {Tag, Res} once, in order.
// Profiles before 5.18, and kernels without it, refuse with
// errors.ErrUnsupported.
func TestMsgRing(t *testing.T) {
	forEachProfile(t, func(t *testing.T, p driver.Profile) {
		src := newLocked(t, driver.Config{Profile: p})
		if err := src.Enable(); err != nil {
			t.Fatal(err)
		}
		target, err := New(driver.Config{Profile: p})
		if err != nil {
			t.Fatal(err)
		}
		if !kernel(t).msgRingUnder(p) {
			defer target.Close()
			if err := src.MsgRing(target, 1, 1, 2); !errors.Is(err, errors.ErrUnsupported) {
				t.Fatalf("MsgRing on %s: %v, want ErrUnsupported", p, err)
			}
			return
		}
		if err := src.MsgRing(target, 1, 1, 2); err == nil {
			t.Fatal("MsgRing to a ring not enabled yet succeeded")
		}
		if err := src.MsgRing(target, driver.Reserved|1, 1, 2); err == nil {
			t.Fatal("MsgRing with a reserved tag succeeded")
		}
		const n = 100
		type msg struct {
			tag driver.Tag
			res int32
		}
		got := make(chan []msg)
		ready := make(chan struct{})
		go func() {
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			var ms []msg
			if err := target.Enable(); err != nil {
				t.Error(err)
			}
			close(ready)
			for len(ms) < n {
				if _, err := target.Wait(driver.WaitForever, func(c *driver.Completion) {
					if c.More || c.Data != nil {
						t.Errorf("message %+v", *c)
					}
					ms = append(ms, msg{c.Tag, c.Res})
				}); err != nil {
					t.Error(err)
					break
				}
			}
			target.Close()
			got <- ms
		}()
		<-ready
		// The source reports each message posted, under its done tag.
		reported := 0
		onSrc := func(c *driver.Completion) {
			if c.Tag != driver.Tag(5000+reported) || c.Res != 0 || c.More {
				t.Errorf("source report %d: %+v", reported, *c)
			}
			reported++
		}
		for i := 0; i < n; i++ {
			if err := src.MsgRing(target, driver.Tag(1000+i), int32(i-50), driver.Tag(5000+i)); err != nil {
				t.Fatal(err)
			}
			if i%7 == 0 { // some one by one, some batched
				if _, err := src.Wait(0, onSrc); err != nil {
					t.Fatal(err)
				}
			}
		}
		for deadline := time.Now().Add(20 * time.Second); reported < n && time.Now().Before(deadline); {
			if _, err := src.Wait(10*time.Millisecond, onSrc); err != nil {
				t.Fatal(err)
			}
		}
		if reported != n {
			t.Fatalf("source reported %d of %d messages", reported, n)
		}
		select {
		case ms := <-got:
			for i, m := range ms {
				if m.tag != driver.Tag(1000+i) || m.res != int32(i-50) {
					t.Fatalf("message %d: %+v", i, m)
				}
			}
		case <-time.After(20 * time.Second):
			t.Fatal("target did not receive the messages")
		}
		if err := src.MsgRing(target, 1, 1, 2); !errors.Is(err, driver.ErrClosed) {
			t.Fatalf("MsgRing to a closed ring: %v", err)
		}
		if f := src.Stats().MsgRingFailed; f != 0 {
			t.Fatalf("%d messages failed", f)
		}
	})
}

// TestMsgRingRefusedIsReported: a message the kernel refuses after MsgRing
// returned (here: the target's ring fd is not a ring) is reported to the
// sender under its done tag with the errno, so what it carried is not lost.
func TestMsgRingRefusedIsReported(t *testing.T) {
	if !kernel(t).msgRingUnder(driver.Native) {
		t.Skip("this kernel has no IORING_OP_MSG_RING")
	}
	src := newLocked(t, driver.Config{})
	if err := src.Enable(); err != nil {
		t.Fatal(err)
	}
	target, err := New(driver.Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer target.Close()
	target.enabled.Store(true) // as if its loop had started
	var p [2]int
	if err := unix.Pipe2(p[:], unix.O_CLOEXEC); err != nil {
		t.Fatal(err)
	}
	defer unix.Close(p[0])
	defer unix.Close(p[1])
	ringFD := target.ringFD.Load()
	target.ringFD.Store(int32(p[0])) // the fd read at prep time is no ring
	err = src.MsgRing(target, 7, 42, 8)
	target.ringFD.Store(ringFD)
	if err != nil {
		t.Fatal(err)
	}
	var got []driver.Completion
	for deadline := time.Now().Add(10 * time.Second); len(got) == 0 && time.Now().Before(deadline); {
		if _, err := src.Wait(10*time.Millisecond, func(c *driver.Completion) { got = append(got, *c) }); err != nil {
			t.Fatal(err)
		}
	}
	if len(got) != 1 || got[0].Tag != 8 || got[0].Res >= 0 {
		t.Fatalf("reports %+v, want one {Tag: 8, Res: -errno}", got)
	}
	if f := src.Stats().MsgRingFailed; f != 1 {
		t.Fatalf("MsgRingFailed %d, want 1", f)
	}
}

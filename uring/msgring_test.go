//go:build linux && cgo

package uring

import (
	"errors"
	"runtime"
	"testing"
	"time"

	"github.com/ringloop/ringloop/driver"
)

// TestMsgRing: one loop posts completions on another's ring with MSG_RING;
// the target, blocked in Wait(-1), reports each {Tag, Res} once, in order.
// Profiles before 5.18 refuse with errors.ErrUnsupported.
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
		if !p.AtLeast(5, 18) {
			defer target.Close()
			if err := src.MsgRing(target, 1, 1); !errors.Is(err, errors.ErrUnsupported) {
				t.Fatalf("MsgRing on %s: %v, want ErrUnsupported", p, err)
			}
			return
		}
		if err := src.MsgRing(target, 1, 1); err == nil {
			t.Fatal("MsgRing to a ring not enabled yet succeeded")
		}
		if err := src.MsgRing(target, driver.Reserved|1, 1); err == nil {
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
		for i := 0; i < n; i++ {
			if err := src.MsgRing(target, driver.Tag(1000+i), int32(i-50)); err != nil {
				t.Fatal(err)
			}
			if i%7 == 0 { // some one by one, some batched
				if _, err := src.Wait(0, func(c *driver.Completion) { t.Errorf("source got %+v", *c) }); err != nil {
					t.Fatal(err)
				}
			}
		}
		if _, err := src.Wait(0, func(c *driver.Completion) { t.Errorf("source got %+v", *c) }); err != nil {
			t.Fatal(err)
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
		if err := src.MsgRing(target, 1, 1); !errors.Is(err, driver.ErrClosed) {
			t.Fatalf("MsgRing to a closed ring: %v", err)
		}
		if f := src.Stats().MsgRingFailed; f != 0 {
			t.Fatalf("%d messages failed", f)
		}
	})
}

package engine

import (
	"runtime"
	"testing"
	"time"
)

// withProcs runs the test at GOMAXPROCS n.
func withProcs(t *testing.T, n int) {
	old := runtime.GOMAXPROCS(n)
	t.Cleanup(func() { runtime.GOMAXPROCS(old) })
}

const us = int64(time.Microsecond)

// TestSpinLearnsTheGap: the window follows the idle gaps: twice a gap a
// blocking wait saw (if under the limit), grown by gaps a spin caught,
// halved each time it runs out, and off once it falls under a microsecond;
// gaps longer than the limit never turn it on.
func TestSpinLearnsTheGap(t *testing.T) {
	withProcs(t, 4)
	s := spinner{limit: 50 * us}
	if s.poll(0) {
		t.Fatal("spins before any gap was seen")
	}
	s.worked(80*us, false)
	if s.window != 0 || s.poll(0) {
		t.Fatalf("a gap over the limit turned the spin on (window %d)", s.window)
	}
	s.worked(10*us, false)
	if s.window != 20*us {
		t.Fatalf("window %d after a 10 µs gap, want 20 µs", s.window)
	}
	if !s.poll(5*us) || !s.slot {
		t.Fatal("no spin 5 µs into a 20 µs window")
	}
	s.worked(15*us, true) // caught: grows to twice the gap
	if s.window != 30*us || s.slot {
		t.Fatalf("after a caught 15 µs gap: window %d, slot %v; want 30 µs, released", s.window, s.slot)
	}
	s.worked(40*us, true) // capped by the limit
	if s.window != 50*us {
		t.Fatalf("window %d, want the 50 µs limit", s.window)
	}
	s.worked(2*us, true) // a shorter gap does not shrink it
	if s.window != 50*us {
		t.Fatalf("window %d after a short caught gap, want 50 µs", s.window)
	}
	for want := int64(25 * us); want > 0; want /= 2 {
		if !s.poll(0) {
			t.Fatal("no spin at the start of a window")
		}
		if s.poll(s.window) || s.slot {
			t.Fatal("spins past its window, or keeps the slot")
		}
		if want < minSpin {
			want = 0
		}
		if s.window != want {
			t.Fatalf("window %d after running out, want %d", s.window, want)
		}
	}
	if s.window != 0 || s.poll(0) {
		t.Fatal("still spinning after the window ran out under a microsecond")
	}
	if n := spinners.Load(); n != 0 {
		t.Fatalf("%d spinning slots held", n)
	}
}

// TestSpinSlots: at most GOMAXPROCS/2 loops spin at once, so none at
// GOMAXPROCS=1; a slot comes back when the spin ends.
func TestSpinSlots(t *testing.T) {
	withProcs(t, 1)
	a := spinner{limit: 50 * us, window: 20 * us}
	if a.poll(0) {
		t.Fatal("spins at GOMAXPROCS=1")
	}
	runtime.GOMAXPROCS(4)
	b := spinner{limit: 50 * us, window: 20 * us}
	c := spinner{limit: 50 * us, window: 20 * us}
	if !a.poll(0) || !b.poll(0) {
		t.Fatal("two spinners refused at GOMAXPROCS=4")
	}
	if c.poll(0) {
		t.Fatal("a third spinner at GOMAXPROCS=4")
	}
	a.worked(3*us, true)
	if !c.poll(0) {
		t.Fatal("no slot after one was given back")
	}
	b.release()
	c.release()
	if n := spinners.Load(); n != 0 {
		t.Fatalf("%d spinning slots held", n)
	}
	// The bound is cached; a spin that runs out (the loop is about to
	// block) reads GOMAXPROCS again, so a shrink is seen from the next spin.
	runtime.GOMAXPROCS(1)
	if a.poll(a.window) {
		t.Fatal("spins past its window")
	}
	if a.window == 0 || a.poll(0) {
		t.Fatalf("spins at GOMAXPROCS=1 after the bound was read again (window %d)", a.window)
	}
}

// TestSpinOnlyLockedWithoutBusyPoll: the spin is a locked loop's; parked
// loops, loops with WithBusyPoll or WithAdaptiveSpin(0) never spin, and a
// negative limit is refused.
func TestSpinOnlyLockedWithoutBusyPoll(t *testing.T) {
	for _, tc := range []struct {
		name string
		opts []Option
		want int64
	}{
		{"locked", []Option{WithThreading(ThreadingLocked)}, int64(DefaultSpinLimit)},
		{"locked 10µs", []Option{WithThreading(ThreadingLocked), WithAdaptiveSpin(10 * time.Microsecond)}, 10 * us},
		{"locked off", []Option{WithThreading(ThreadingLocked), WithAdaptiveSpin(0)}, 0},
		{"locked busy poll", []Option{WithThreading(ThreadingLocked), WithBusyPoll(time.Millisecond)}, 0},
		{"parked", []Option{WithThreading(ThreadingParked)}, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l, err := New(append(tc.opts, WithBackend(BackendEpoll))...)
			if err != nil {
				t.Fatal(err)
			}
			defer l.Close()
			if l.spin.limit != tc.want {
				t.Fatalf("spin limit %d, want %d", l.spin.limit, tc.want)
			}
		})
	}
	if _, err := New(WithAdaptiveSpin(-time.Microsecond)); err == nil {
		t.Fatal("a negative spin limit was accepted")
	}
}

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
	s.worked(80*us, false, 1)
	if s.window != 0 || s.poll(0) {
		t.Fatalf("a gap over the limit turned the spin on (window %d)", s.window)
	}
	s.worked(10*us, false, 1)
	if s.window != 20*us {
		t.Fatalf("window %d after a 10 µs gap, want 20 µs", s.window)
	}
	if !s.poll(5*us) || !s.slot {
		t.Fatal("no spin 5 µs into a 20 µs window")
	}
	s.worked(15*us, true, 1) // caught: grows to twice the gap
	if s.window != 30*us || s.slot {
		t.Fatalf("after a caught 15 µs gap: window %d, slot %v; want 30 µs, released", s.window, s.slot)
	}
	s.worked(40*us, true, 1) // capped by the limit
	if s.window != 50*us {
		t.Fatalf("window %d, want the 50 µs limit", s.window)
	}
	s.worked(2*us, true, 1) // a shorter gap does not shrink it
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
	a.worked(3*us, true, 1)
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

// TestSpinLimitOptions: loops of both threading modes may spin; loops with
// WithSpin with busy or a zero limit never do, and a negative limit is
// refused.
func TestSpinLimitOptions(t *testing.T) {
	for _, tc := range []struct {
		name string
		opts []Option
		want int64
	}{
		{"locked", []Option{WithThreading(ThreadingLocked)}, int64(defaultSpinLimit)},
		{"locked 10µs", []Option{WithThreading(ThreadingLocked), WithSpin(10*time.Microsecond, false)}, 10 * us},
		{"locked off", []Option{WithThreading(ThreadingLocked), WithSpin(0, false)}, 0},
		{"locked busy poll", []Option{WithThreading(ThreadingLocked), WithSpin(time.Millisecond, true)}, 0},
		{"parked", []Option{WithThreading(ThreadingParked)}, int64(defaultSpinLimit)},
		{"parked off", []Option{WithThreading(ThreadingParked), WithSpin(0, false)}, 0},
		{"parked busy poll", []Option{WithThreading(ThreadingParked), WithSpin(time.Millisecond, true)}, 0},
		{"busy, then adaptive", []Option{WithSpin(time.Millisecond, true), WithSpin(10*time.Microsecond, false)}, 10 * us},
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
	if _, err := New(WithSpin(-time.Microsecond, false)); err == nil {
		t.Fatal("a negative spin limit was accepted")
	}
}

// TestSpinRanksPolicies: a spinner spins only while epochs that spun ran
// faster than those that slept, tries the policy ranked second for one
// epoch in spinExplore and more rarely while it stays second, and follows
// the traffic when it changes.
func TestSpinRanksPolicies(t *testing.T) {
	withProcs(t, 4)
	s := spinner{limit: 50 * us}
	var spinGap, sleepGap int64
	spinWork, sleepWork := 1, 1
	// run simulates n busy iterations of a closed-loop peer: the idle gap
	// before each and the work it finds depend on whether the loop spun.
	// It returns the iterations the loop spun before.
	run := func(n int) (spun int) {
		for range n {
			gap, work := sleepGap, sleepWork
			if !s.off && s.window > 0 {
				gap, work = spinGap, spinWork
			}
			caught := false
			for idle := int64(0); idle < gap && s.poll(idle); idle += us {
				caught = true
			}
			if caught {
				spun++
			}
			s.worked(gap, caught, work)
		}
		return spun
	}
	const n = 64 * spinEpoch * spinExplore
	// Peer in another process: sleeping adds a wake-up (30 µs gaps), a spin
	// catches the reply at 12 µs.
	spinGap, sleepGap = 12*us, 30*us
	if got := run(n); got < n*8/10 {
		t.Fatalf("spun through %d of %d round trips where spinning halves the gap", got, n)
	}
	// Peer goroutine in the same process: spinning keeps the peer's thread
	// asleep (40 µs), sleeping lets it run the loop at once (8 µs).
	spinGap, sleepGap = 40*us, 8*us
	run(n / 2) // the means follow within a few explorations
	// Explorations that confirm the ranking come ever more rarely.
	if got := run(n); got > n/spinExplore/4 {
		t.Fatalf("spun through %d of %d round trips where spinning lengthens the gap (want at most %d, the explorations backed off)", got, n, n/spinExplore/4)
	} else if got == 0 {
		t.Fatal("never tried spinning again: a change in the traffic would go unseen")
	}
	// Spinning 5% faster: not worth its CPU, so the loop sleeps.
	spinGap, sleepGap = 19*us, 20*us
	run(n / 2)
	if got := run(n); got > n/spinExplore+n/100 {
		t.Fatalf("spun through %d of %d round trips where spinning gains too little", got, n)
	}
	// Many connections: a spin catches each completion sooner (5 µs), but
	// takes CPU from the goroutines that make the work, so that a loop that
	// sleeps finds eight at a time every 20 µs: per unit of work, sleeping
	// is faster.
	spinGap, sleepGap, spinWork, sleepWork = 5*us, 20*us, 1, 8
	run(n / 2)
	if got := run(n); got > n/spinExplore+n/100 {
		t.Fatalf("spun before %d of %d iterations where spinning makes less work", got, n)
	}
	spinWork, sleepWork = 1, 1
	// And back.
	spinGap, sleepGap = 12*us, 30*us
	run(n / 2)
	if got := run(n); got < n*8/10 {
		t.Fatalf("spun through %d of %d round trips after spinning became faster again", got, n)
	}
	s.release()
	if n := spinners.Load(); n != 0 {
		t.Fatalf("%d spinning slots held", n)
	}
}

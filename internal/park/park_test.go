package park_test

import (
	"encoding/binary"
	"errors"
	"fmt"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/ringloop/ringloop/internal/drivertest"
	"github.com/ringloop/ringloop/internal/park"
)

// counter is a pollable source: an eventfd whose reads are the "completions".
type counter struct {
	fd    int
	polls int
}

func newCounter(t testing.TB) *counter {
	fd, err := unix.Eventfd(0, unix.EFD_NONBLOCK|unix.EFD_CLOEXEC)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { unix.Close(fd) })
	return &counter{fd: fd}
}

func (c *counter) signal(t testing.TB) {
	var b [8]byte
	binary.NativeEndian.PutUint64(b[:], 1)
	if _, err := unix.Write(c.fd, b[:]); err != nil {
		t.Error(err)
	}
}

// poll consumes the eventfd's count and reports it as completions.
func (c *counter) poll() (int, error) {
	c.polls++
	var b [8]byte
	n, err := unix.Read(c.fd, b[:])
	if errors.Is(err, unix.EAGAIN) {
		return 0, nil
	}
	if err != nil || n != 8 {
		return 0, fmt.Errorf("read: %d %v", n, err)
	}
	return int(binary.NativeEndian.Uint64(b[:])), nil
}

// newWaiter returns a Waiter parking on c's eventfd, closed at cleanup.
func newWaiter(t *testing.T, c *counter) *park.Waiter {
	t.Helper()
	w := park.New(c.poll)
	if err := w.Use(c.fd); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(w.Close)
	return w
}

// TestUseBeforeTheFDTableFills: the duplicate is taken by Use, so a Wait
// with every descriptor in use still parks and wakes (it used to take the
// duplicate at the first Wait and fail with EMFILE there).
func TestUseBeforeTheFDTableFills(t *testing.T) {
	c := newCounter(t)
	w := newWaiter(t, c)
	drivertest.FillFDTable(t)
	go c.signal(t)
	if n, err := w.Wait(time.Minute); n != 1 || err != nil {
		t.Fatalf("Wait with the fd table full = %d, %v; want 1, nil", n, err)
	}
	if err := w.Use(c.fd); err != nil {
		t.Fatalf("Use of the fd in use again: %v", err)
	}
}

func TestWaitReturnsWhatPollFinds(t *testing.T) {
	c := newCounter(t)
	w := newWaiter(t, c)
	c.signal(t)
	c.signal(t)
	n, err := w.Wait(-1)
	if n != 2 || err != nil {
		t.Fatalf("Wait = %d, %v; want 2, nil", n, err)
	}
}

func TestWaitWakesOnSignalFromAnotherGoroutine(t *testing.T) {
	c := newCounter(t)
	w := newWaiter(t, c)
	for i := range 200 { // each round: park, then a signal must end the park
		done := make(chan struct{})
		go func() {
			defer close(done)
			c.signal(t)
		}()
		n, err := w.Wait(time.Minute)
		<-done
		if err != nil || n != 1 {
			t.Fatalf("round %d: Wait = %d, %v; want 1, nil", i, n, err)
		}
	}
}

func TestWakeEndsWaitWithNothingToReport(t *testing.T) {
	c := newCounter(t)
	w := newWaiter(t, c)
	w.Wake() // before the Wait: reported by it
	if n, err := w.Wait(-1); n != 0 || err != nil {
		t.Fatalf("Wait after Wake = %d, %v", n, err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		w.Wake()
		c.signal(t) // the fd edge that makes the parked Wait look
	}()
	n, err := w.Wait(time.Minute)
	// The Wake may end the Wait before the signal is written; joining
	// keeps that late write off the next test's eventfd, which can reuse
	// this descriptor number once cleanup closes it.
	<-done
	if err != nil || n > 1 {
		t.Fatalf("Wait = %d, %v", n, err)
	}
}

// TestWakeAloneEndsPark: Wake ends a parked Wait with no signal on the fd
// (it sets a past read deadline), with and without a timeout; afterwards a
// Wait parks again until its fd's signal or its own timeout, not returning
// early on the deadline a Wake left behind.
func TestWakeAloneEndsPark(t *testing.T) {
	c := newCounter(t)
	w := newWaiter(t, c)
	for i := 0; i < 200; i++ {
		timeout := time.Duration(-1)
		if i%2 == 1 {
			timeout = time.Hour
		}
		go w.Wake()
		if n, err := w.Wait(timeout); n != 0 || err != nil {
			t.Fatalf("round %d: Wait = %d, %v; want 0, nil", i, n, err)
		}
	}
	for i := 0; i < 20; i++ {
		go c.signal(t)
		if n, err := w.Wait(-1); n != 1 || err != nil {
			t.Fatalf("round %d: Wait = %d, %v; want the signal (1, nil)", i, n, err)
		}
	}
	w.Wake()
	if n, err := w.Wait(-1); n != 0 || err != nil {
		t.Fatalf("Wait = %d, %v; want 0, nil", n, err)
	}
	start := time.Now()
	if n, err := w.Wait(20 * time.Millisecond); n != 0 || err != nil {
		t.Fatalf("Wait = %d, %v; want 0, nil", n, err)
	}
	if el := time.Since(start); el < 20*time.Millisecond {
		t.Fatalf("returned after %v, before its 20ms timeout", el)
	}
}

func TestWaitTimesOut(t *testing.T) {
	c := newCounter(t)
	w := newWaiter(t, c)
	start := time.Now()
	n, err := w.Wait(20 * time.Millisecond)
	if n != 0 || err != nil {
		t.Fatalf("Wait = %d, %v; want 0, nil", n, err)
	}
	if el := time.Since(start); el < 20*time.Millisecond {
		t.Fatalf("returned after %v, before its 20ms timeout", el)
	}
}

func TestCloseReleasesTheDuplicate(t *testing.T) {
	c := newCounter(t)
	count := func() int {
		ents, err := readDir()
		if err != nil {
			t.Fatal(err)
		}
		return ents
	}
	before := count()
	w := park.New(c.poll)
	if err := w.Use(c.fd); err != nil {
		t.Fatal(err)
	}
	if count() != before+1 {
		t.Fatalf("fds %d → %d, want one duplicate while in use", before, count())
	}
	w.Close()
	if count() != before {
		t.Fatalf("fds %d → %d after Close", before, count())
	}
}

func TestNotPollableIsAnError(t *testing.T) {
	f, err := unix.Open("/dev/null", unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(f)
	w := park.New(func() (int, error) { return 0, nil })
	defer w.Close()
	if err := w.Use(f); err == nil {
		t.Fatal("parking on /dev/null (not pollable) did not fail")
	}
	if _, err := w.Wait(-1); err == nil {
		t.Fatal("Wait without a usable fd did not fail")
	}
}

// TestWaitAllocatesNothing: a park that a signal ends costs no allocation,
// with and without a deadline (the deadline path re-arms the poller's timer).
func TestWaitAllocatesNothing(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector allocates")
	}
	c := newCounter(t)
	w := newWaiter(t, c)
	for _, timeout := range []time.Duration{-1, time.Hour} {
		round := func() {
			c.signal(t)
			if n, err := w.Wait(timeout); n != 1 || err != nil {
				t.Fatalf("Wait = %d, %v; want 1, nil", n, err)
			}
		}
		round() // warms the poller's timer
		if a := testing.AllocsPerRun(1000, round); a != 0 {
			t.Errorf("timeout %v: %v allocations per Wait", timeout, a)
		}
		woken := func() {
			w.Wake()
			if n, err := w.Wait(timeout); n != 0 || err != nil {
				t.Fatalf("Wait = %d, %v; want 0, nil", n, err)
			}
		}
		if a := testing.AllocsPerRun(1000, woken); a != 0 {
			t.Errorf("timeout %v: %v allocations per Wake and Wait", timeout, a)
		}
	}
}

// TestDeadlineKeptAcrossParks: parks whose timeouts all end at one instant
// (a loop's next timer, which stays put while it serves traffic) set the
// fd's read deadline once, not once per park; a park with no timeout clears
// it, and a timeout that moves the instant sets it again.
func TestDeadlineKeptAcrossParks(t *testing.T) {
	c := newCounter(t)
	w := newWaiter(t, c)
	// A stopped clock: each park asks for exactly the same instant, as it
	// would on any machine if the loop's clock read and the Waiter's were
	// one. (On a real clock, a pause longer than deadlineEarly between the
	// two, as a slow emulated CPU makes, rightly sets the deadline again.)
	t0 := time.Now()
	w.SetClock(func() time.Time { return t0 })
	for i := 0; i < 100; i++ {
		c.signal(t)
		if n, err := w.Wait(time.Hour); n != 1 || err != nil {
			t.Fatalf("Wait = %d, %v; want 1, nil", n, err)
		}
	}
	if got := w.DeadlineSets(); got != 1 {
		t.Fatalf("100 parks toward one deadline set it %d times, want 1", got)
	}
	c.signal(t)
	if n, err := w.Wait(-1); n != 1 || err != nil {
		t.Fatalf("Wait = %d, %v; want 1, nil", n, err)
	}
	c.signal(t)
	if n, err := w.Wait(time.Minute); n != 1 || err != nil {
		t.Fatalf("Wait = %d, %v; want 1, nil", n, err)
	}
	if got := w.DeadlineSets(); got != 3 {
		t.Fatalf("deadline sets = %d after clearing it and asking an earlier one, want 3", got)
	}
}

// TestKeptDeadlineDoesNotEndParkEarly: a deadline kept from an earlier park
// that falls before the one asked for (the loop's next timer moved a little
// later) does not end the park before its timeout.
func TestKeptDeadlineDoesNotEndParkEarly(t *testing.T) {
	c := newCounter(t)
	w := newWaiter(t, c)
	first := time.Now().Add(30 * time.Millisecond)
	c.signal(t)
	if n, err := w.Wait(time.Until(first)); n != 1 || err != nil {
		t.Fatalf("Wait = %d, %v; want 1, nil", n, err)
	}
	want := first.Add(500 * time.Microsecond)
	n, err := w.Wait(time.Until(want))
	if n != 0 || err != nil {
		t.Fatalf("Wait = %d, %v; want 0, nil", n, err)
	}
	if early := time.Until(want); early > 0 {
		t.Fatalf("the park ended %v before its deadline", early)
	}
}

// resumer polls c like the drivers under WaitResume: after it hands out
// completions it runs the loop's work and, while that asks, goes on
// parking (Continue) without looking at the fd again.
type resumer struct {
	c       *counter
	w       *park.Waiter
	got     int
	rounds  int              // how many batches to go on parking after
	timeout time.Duration    // the Continue timeout
	during  func(r *resumer) // runs between the batch and Continue
}

func (r *resumer) poll() (int, error) {
	n, err := r.c.poll()
	if n == 0 || err != nil || r.rounds == 0 {
		return n, err
	}
	r.got += n
	r.rounds--
	if r.during != nil {
		r.during(r)
	}
	return 0, r.w.Continue(r.timeout)
}

func newResumer(t *testing.T) *resumer {
	r := &resumer{c: newCounter(t)}
	r.w = park.New(r.poll)
	if err := r.w.Use(r.c.fd); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(r.w.Close)
	return r
}

// TestContinueTakesTheNewDeadline: a park that goes on after a batch ends
// at the timeout Continue gave, not the one it began with (none).
func TestContinueTakesTheNewDeadline(t *testing.T) {
	r := newResumer(t)
	r.rounds, r.timeout = 1, 20*time.Millisecond
	go r.c.signal(t)
	start := time.Now()
	done := make(chan struct{})
	go func() {
		defer close(done)
		n, err := r.w.Wait(time.Hour)
		if n != 0 || err != nil || r.got != 1 {
			t.Errorf("Wait = %d, %v with %d handed out in between; want 0, nil, 1", n, err, r.got)
		}
		if waited := time.Since(start); waited < r.timeout {
			t.Errorf("Wait returned after %v, before the %v Continue gave", waited, r.timeout)
		}
	}()
	select {
	case <-done:
	case <-time.After(20 * time.Second):
		t.Fatal("the park kept the hour it began with, not the timeout Continue gave")
	}
}

// TestContinueKeepsEdges: an edge that comes after poll looked at the fd and
// before the park goes on ends it at once; the poller keeps it, which is
// what lets a going-on park skip the look. Each batch arrives inside the
// previous one's work.
func TestContinueKeepsEdges(t *testing.T) {
	r := newResumer(t)
	r.rounds, r.timeout = 3, -1
	r.during = func(r *resumer) { r.c.signal(t) } // the next batch, before Continue
	go r.c.signal(t)
	done := make(chan struct{})
	go func() {
		defer close(done)
		n, err := r.w.Wait(-1) // the fourth batch is returned
		if n != 1 || err != nil || r.got != 3 {
			t.Errorf("Wait = %d, %v with %d in between; want 1, nil, 3", n, err, r.got)
		}
	}()
	select {
	case <-done:
	case <-time.After(20 * time.Second):
		t.Fatal("an edge that came before Continue was lost: the park never ended")
	}
}

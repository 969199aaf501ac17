// Package park lets a driver's Wait sleep in Go's netpoller instead of in a
// blocking system call, for loops whose goroutine is not locked to an OS
// thread (the parked threading mode).
//
// A goroutine blocked in a system call keeps its thread and, once sysmon
// retakes its P, needs a thread hand-off to run again; a goroutine parked in
// the netpoller gives both back and is resumed by whichever thread polls the
// network next. The fd waited on must turn readable (a new edge for Go's
// edge-triggered poller) whenever a completion may be ready: the drivers
// wait on their epoll fd, which is itself pollable. A Wake needs no signal
// on the fd: it ends a park with a past read deadline (see Wake).
//
// The netpoller forgets an fd's readiness each time a wait on it begins
// (RawConn.Read), so a new Wait must poll the fd once before it can park,
// for what came before; while one Wait goes on, every edge is kept. A loop
// that works between its parks from inside the Wait (Continue) therefore
// parks again without that poll: one system call less per wake-up.
package park

import (
	"errors"
	"fmt"
	"os"
	"runtime"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// Waiter parks one driver's loop. Wait and Close belong to the loop's
// goroutine; Wake may be called from any goroutine.
type Waiter struct {
	woken atomic.Bool
	wf    atomic.Pointer[os.File] // f, for Wake

	fd   int // the driver's fd the file duplicates, -1 when none
	f    *os.File
	rc   syscall.RawConn
	dl   time.Time // the read deadline set on f, zero when none
	want time.Time // the deadline this Wait asked for, zero when none
	sets int       // deadlines set on f (tests)
	now  func() time.Time

	// The driver's poll and step are func values made once, so that a park
	// allocates nothing; the rest is one Wait's state, read by step.
	poll    func() (int, error)
	step    func(uintptr) bool
	polled  bool
	n       int
	pollErr error
}

// New returns a Waiter with no fd yet (see Use) whose Wait calls poll, the
// driver's non-blocking wait, which must consume the fd's pending readiness
// before it returns 0 (and the Waiter parks): readiness that came before the
// call raises no new edge. Once it has, poll may hand out completions, have
// the park go on (Continue) and return 0 without looking at the fd again:
// every edge since its look is kept and ends the park. Pass a method value
// made once per driver: a func value made per Wait would cost an allocation
// per park.
func New(poll func() (int, error)) *Waiter {
	w := &Waiter{fd: -1, poll: poll, now: time.Now}
	w.step = w.stepFn
	return w
}

// Wake makes a parked or the next Wait return. It ends a park by giving the
// fd a read deadline in the past, which readies the parked goroutine inside
// the runtime: no system call, no trip through the kernel's wait queues and
// Go's netpoll, and the loop goroutine goes to the waker's P to run next,
// where an eventfd write would have it found by whichever thread polls the
// network next. The driver need not signal the fd.
func (w *Waiter) Wake() {
	w.woken.Store(true) // before the deadline: a Wait that overwrites it sees the flag
	if f := w.wf.Load(); f != nil {
		_ = f.SetReadDeadline(longAgo) // fails only once Close closed f
	}
}

// Woken reports a Wake that no Wait has taken yet.
func (w *Waiter) Woken() bool { return w.woken.Load() }

// longAgo is the read deadline Wake sets: any instant in the past ends a
// park at once.
var longAgo = time.Unix(1, 0)

// Wait calls poll and, while poll finds nothing and nobody called Wake,
// parks until the fd given to Use turns readable or timeout passes
// (negative: no limit). It returns poll's total. A Wake made before Wait is
// reported by it: Wait then returns at once.
func (w *Waiter) Wait(timeout time.Duration) (int, error) {
	if w.f == nil {
		return 0, errors.New("park: Wait before Use")
	}
	if err := w.setDeadline(timeout); err != nil {
		return 0, err
	}
	for {
		w.polled, w.n, w.pollErr = false, 0, nil
		err := w.rc.Read(w.step)
		switch {
		case w.pollErr != nil:
			return w.n, w.pollErr
		case w.n > 0:
			return w.n, nil
		case w.woken.Swap(false):
			w.dl = longAgo // Wake's deadline, set or about to be
			if err != nil {
				// Wake readied this goroutine to run next on the waker's
				// P, ahead of the goroutines already runnable there: often
				// more work for this loop (other connections' handlers
				// about to hand it their writes). Yielding once lets them
				// run first, so one iteration serves them all, as when
				// the netpoller found the loop.
				runtime.Gosched()
			}
			return 0, nil
		case errors.Is(err, os.ErrDeadlineExceeded):
			// Timed out (perhaps before step ran): a last look.
			if !w.polled {
				if n, err := w.poll(); n > 0 || err != nil {
					return n, err
				}
			}
			if w.want.IsZero() || w.want.After(w.now()) {
				// A deadline kept from an earlier Wait came first, or a
				// Wake whose flag an earlier Wait took set its deadline
				// late: neither ends this park.
				if err := w.setFD(w.want); err != nil {
					return 0, err
				}
				continue
			}
			return 0, nil
		case err != nil:
			return 0, fmt.Errorf("park: waiting on fd %d: %w", w.fd, err)
		}
		// A Wake taken by an earlier Wait's last look: park again.
	}
}

// stepFn runs inside RawConn.Read: first after the poller forgot the fd's
// earlier readiness, then after each edge. Every call polls: an edge that
// comes after a poll's drain is kept by the poller and ends the next wait,
// so none is lost, and one RawConn.Read serves a park and its wake-up.
func (w *Waiter) stepFn(uintptr) bool {
	w.polled = true
	w.n, w.pollErr = w.poll()
	return w.n > 0 || w.pollErr != nil || w.woken.Load()
}

// Continue, called by poll, makes the Wait go on parking, up to timeout from
// now (negative: no limit), once poll returns 0: the driver handed out
// completions and the loop, having run its work, would wait again. Staying
// in the wait keeps the fd's readiness, so the next park needs no poll of
// the fd first. A Wake made since the Wait began still ends it.
func (w *Waiter) Continue(timeout time.Duration) error {
	return w.setDeadline(timeout)
}

// Use makes the Waiter park on fd from now on: it registers a duplicate of
// fd with the netpoller. A driver calls it when it creates or replaces the
// fd, not at its first Wait: a duplicate taken then could fail with the
// process's fd table full (EMFILE), and a loop that cannot park could not
// run at all, not even to serve the connections it holds.
func (w *Waiter) Use(fd int) error {
	if fd == w.fd && w.f != nil {
		return nil
	}
	dup, err := unix.FcntlInt(uintptr(fd), unix.F_DUPFD_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("park: dup fd %d: %w", fd, err)
	}
	if err := unix.SetNonblock(dup, true); err != nil {
		unix.Close(dup)
		return fmt.Errorf("park: fd %d non-blocking: %w", fd, err)
	}
	f := os.NewFile(uintptr(dup), "ringloop-park")
	rc, err := f.SyscallConn()
	if err != nil {
		f.Close()
		return fmt.Errorf("park: fd %d: %w", fd, err)
	}
	if err := f.SetReadDeadline(time.Time{}); err != nil {
		f.Close() // not in the netpoller: parking would block the thread
		return fmt.Errorf("park: fd %d is not pollable: %w", fd, err)
	}
	w.Close() // the previous fd's duplicate, once the new one is in place
	w.fd, w.f, w.rc, w.dl = fd, f, rc, time.Time{}
	w.wf.Store(f)
	return nil
}

// deadlineLate is how much later than asked a deadline already set on the
// fd may end a park. The loop's nearest timer (a connection's idle timeout,
// the send-buffer sweep) stays put across thousands of parks while the
// timeout each park gets from it shrinks, so each park's deadline differs
// from the last only by the time between the loop's clock read and this
// one. Setting it again would cost a runtime timer update per park.
const deadlineLate = 20 * time.Microsecond

// deadlineEarly is how much earlier than asked a deadline already set may
// fall (the loop's next timer moved a little later): a park it ends early
// sets the one asked for and goes on parking, once, which costs less than
// setting it at every park.
const deadlineEarly = time.Millisecond

// setDeadline gives the fd the read deadline timeout from now (none when
// negative), keeping the one set if it is still ahead and within
// deadlineLate after, or deadlineEarly before, the one asked for; Wait
// parks again if the kept one ends it early.
func (w *Waiter) setDeadline(timeout time.Duration) error {
	w.want = time.Time{}
	if timeout <= 0 {
		if w.dl.IsZero() {
			return nil
		}
		return w.setFD(time.Time{})
	}
	now := w.now()
	w.want = now.Add(timeout)
	if !w.dl.IsZero() && w.dl.After(now) && !w.dl.After(w.want.Add(deadlineLate)) && w.want.Sub(w.dl) <= deadlineEarly {
		return nil
	}
	return w.setFD(w.want)
}

func (w *Waiter) setFD(t time.Time) error {
	w.dl = t
	w.sets++
	return w.f.SetReadDeadline(t)
}

// Close releases the duplicate fd.
func (w *Waiter) Close() {
	if w.f != nil {
		w.wf.Store(nil)
		w.f.Close()
		w.f, w.rc, w.fd, w.dl = nil, nil, -1, time.Time{}
	}
}

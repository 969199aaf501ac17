package engine

import (
	"runtime"
	"sync/atomic"
	"time"
)

// defaultSpinLimit is the longest a loop polls its driver before it
// blocks, when its recent idle gaps say work comes back that soon
// (WithSpin).
const defaultSpinLimit = 50 * time.Microsecond

// minSpin is the shortest window worth spinning; below it the loop blocks.
const minSpin = int64(time.Microsecond)

// spinners counts the loops spinning now, in the whole process. At
// most GOMAXPROCS/2 spin at once, the bound Go's scheduler puts on its own
// spinning threads, so that spinning never takes the last P from the
// process's other goroutines (none spin at GOMAXPROCS=1).
var spinners atomic.Int32

// spinner is a loop's adaptive spin: after work, the loop polls its driver
// without blocking for a window learnt from its idle gaps (the time from
// the end of one busy iteration to the next work), instead of going to
// sleep at once. A sleeping loop costs a wake-up (microseconds of scheduler
// and, on virtual machines, hypervisor time; for a locked loop also a P
// that sysmon may retake); a gap shorter than that is cheaper spent
// polling. The window grows to twice a gap the spin caught (or a blocking
// wait saw and a spin would have caught), up to the limit, and halves each
// time it runs out, so that a loop whose work comes less often than the
// limit stops spinning: an idle loop spins at most once, for the window.
//
// Spinning can also slow the loop down: where the peer is a goroutine of
// the same process (in-process clients, a parked loop handing requests to
// goroutines and back), a loop that sleeps lets the peer's thread run the
// loop next, on the same thread with no wake-up at all, while a loop
// spinning on its own P leaves the peer's thread to sleep and be woken for
// every reply. So the spinner measures both policies on the loop's own
// traffic, by epochs of spinEpoch busy iterations: the epoch's wall time
// per unit of work (completions and tasks; each idle gap counted up to
// twice the limit, past which neither policy changes it), a running mean
// per policy. Per unit of work, not per iteration: a spin that catches work
// sooner makes more, smaller iterations, and where it takes CPU from the
// goroutines that make the work it makes less work in all. It spins while
// spinning measures at least a tenth faster, else sleeps at once (cheaper
// in CPU where the two are even, as under a steady request rate), and runs
// the policy ranked second for one epoch in spinExplore (less often while
// it stays second) to follow a change in the traffic.
//
// It is loop-only state; only the slot count is shared.
type spinner struct {
	limit  int64 // the longest window; 0: never spin
	window int64 // the current window; 0: block at once
	slot   bool  // this loop holds one of the process's spinning slots
	// slots caches GOMAXPROCS/2: reading GOMAXPROCS takes the scheduler's
	// lock, so it is read again only on the way to a blocking wait (a spin
	// refused or run out), which costs far more.
	slots int32

	per        [2]int64 // mean ns per unit of work, sleeping [0] and spinning [1]; 0: not measured
	off        bool     // this epoch sleeps at once
	epochTime  int64    // this epoch's wall time so far (ns, gaps clamped)
	epochWork  int64    // completions and tasks in this epoch
	epochIters int32    // busy iterations in this epoch
	epochs     uint32
	explore    uint32 // epochs between explorations, spinExplore to spinExploreMax
	exploring  bool   // this epoch runs the policy ranked second
}

// spinEpoch is how many busy iterations an epoch of one policy lasts:
// enough that an epoch's mean is not one iteration's noise, few enough that
// the ranking follows a change in the traffic within a fraction of a
// second. spinExplore is how often (one epoch in so many) the policy ranked
// second runs at first. An exploration costs what the slower policy loses
// for an epoch, so each one that confirms the ranking doubles the interval,
// up to spinExploreMax; one whose epoch alone ranks the other way brings it
// back to spinExplore. spin_test.go checks the rules; what they cost and
// win is measured by make bench-compare (see the package doc, Adaptive
// spin).
const (
	spinEpoch      = 64
	spinExplore    = 32
	spinExploreMax = 512
)

// poll reports whether the loop, with nothing to do and idle for idle
// nanoseconds, should poll once more rather than block.
func (s *spinner) poll(idle int64) bool {
	if s.off {
		return false
	}
	if s.window == 0 || idle >= s.window {
		if s.window != 0 {
			// Ran out: the gap is longer than the window.
			if s.window /= 2; s.window < minSpin {
				s.window = 0
			}
			s.slots = procSlots()
		}
		s.release()
		return false
	}
	if !s.slot {
		n := spinners.Load()
		if n >= s.slots {
			// Refused by the cached bound: GOMAXPROCS may have grown.
			if s.slots = procSlots(); n >= s.slots {
				return false
			}
		}
		if !spinners.CompareAndSwap(n, n+1) {
			return false
		}
		s.slot = true
	}
	return true
}

// procSlots is how many loops may spin at once: GOMAXPROCS/2.
func procSlots() int32 { return int32(runtime.GOMAXPROCS(0) / 2) }

// worked records work (completions and tasks) that ended an idle gap of gap
// nanoseconds (since the last work), found by a spin (spun) or after a
// blocking wait.
func (s *spinner) worked(gap int64, spun bool, work int) {
	s.release()
	if s.limit == 0 || gap <= 0 {
		return
	}
	switch w := min(s.limit, 2*gap); {
	case spun && w > s.window:
		s.window = w
	case !spun && gap < s.limit && w >= minSpin:
		s.window = w // a spin would have caught it
	}
	s.rank(gap, work)
}

// rank adds a busy iteration to the epoch and, at its end, ranks the
// policies and picks the next epoch's.
func (s *spinner) rank(gap int64, work int) {
	s.epochTime += min(gap, 2*s.limit)
	s.epochWork += int64(max(work, 1))
	if s.epochIters++; s.epochIters < spinEpoch {
		return
	}
	i := 1
	if s.off {
		i = 0
	}
	per := s.epochTime / s.epochWork
	if m := &s.per[i]; *m == 0 {
		*m = per
	} else {
		*m += (min(per, 2*(*m)) - *m) / 4 // one stalled epoch moves it a quarter at most
	}
	s.epochTime, s.epochWork, s.epochIters = 0, 0, 0
	if s.exploring {
		// An exploration whose epoch alone ranks its policy first makes
		// the next ones come soon; one that confirms the ranking, later.
		epoch := s.per
		epoch[i] = per
		if spinWins(epoch) == (i == 1) {
			s.explore = spinExplore
		} else {
			s.explore = min(2*s.explore, spinExploreMax)
		}
	}
	s.epochs++
	s.exploring = false
	switch {
	case s.per[0] == 0 || s.per[1] == 0:
		s.off = s.per[0] == 0 // measure the policy not measured yet
		s.explore = spinExplore
	case s.epochs%s.explore == 0:
		s.off, s.exploring = spinWins(s.per), true // the one ranked second
	default:
		s.off = !spinWins(s.per)
	}
}

// spinWins ranks the policies by their time per unit of work (sleeping,
// spinning): spinning wins if it is at least a tenth faster, as sleeping
// costs less CPU.
func spinWins(per [2]int64) bool { return 10*per[1] <= 9*per[0] }

// release gives the spinning slot back.
func (s *spinner) release() {
	if s.slot {
		s.slot = false
		spinners.Add(-1)
	}
}

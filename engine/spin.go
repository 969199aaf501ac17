package engine

import (
	"runtime"
	"sync/atomic"
	"time"
)

// DefaultSpinLimit is the longest a locked loop polls its driver before it
// blocks, when its recent idle gaps say work comes back that soon
// (WithAdaptiveSpin).
const DefaultSpinLimit = 50 * time.Microsecond

// minSpin is the shortest window worth spinning; below it the loop blocks.
const minSpin = int64(time.Microsecond)

// spinners counts the locked loops spinning now, in the whole process. At
// most GOMAXPROCS/2 spin at once, the bound Go's scheduler puts on its own
// spinning threads, so that spinning never takes the last P from the
// process's other goroutines (none spin at GOMAXPROCS=1).
var spinners atomic.Int32

// spinner is a locked loop's adaptive spin: after work, the loop polls its
// driver without blocking for a window learnt from its idle gaps (the time
// from the end of one busy iteration to the next work), instead of going to
// sleep in the kernel at once. A sleeping locked thread costs a wake-up
// (microseconds of scheduler and, on virtual machines, hypervisor time) and
// a P that sysmon may retake; a gap shorter than that is cheaper spent
// polling. The window grows to twice a gap the spin caught (or a blocking
// wait saw and a spin would have caught), up to the limit, and halves each
// time it runs out, so that a loop whose work comes less often than the
// limit stops spinning: an idle loop spins at most once, for the window.
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
}

// poll reports whether the loop, with nothing to do and idle for idle
// nanoseconds, should poll once more rather than block.
func (s *spinner) poll(idle int64) bool {
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

// worked records work that ended an idle gap of gap nanoseconds, found by a
// spin (spun) or after a blocking wait.
func (s *spinner) worked(gap int64, spun bool) {
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
}

// release gives the spinning slot back.
func (s *spinner) release() {
	if s.slot {
		s.slot = false
		spinners.Add(-1)
	}
}

package park

import "time"

// DeadlineSets reports how many read deadlines w has set on its fd.
func (w *Waiter) DeadlineSets() int { return w.sets }

// SetClock makes w read the time from now instead of time.Now, so that a
// test can ask for one deadline at every park however slow the machine.
func (w *Waiter) SetClock(now func() time.Time) { w.now = now }

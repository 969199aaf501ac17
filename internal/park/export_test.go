package park

// DeadlineSets reports how many read deadlines w has set on its fd.
func (w *Waiter) DeadlineSets() int { return w.sets }

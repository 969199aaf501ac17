package engine

// State is a loop's lifecycle state; the order matters (comparisons use >=).
type State uint32

// The five states of Netty's SingleThreadEventExecutor.
const (
	NotStarted State = iota + 1
	Started
	ShuttingDown
	Shutdown
	Terminated
)

var stateNames = []string{NotStarted: "not started", Started: "started", ShuttingDown: "shutting down",
	Shutdown: "shut down", Terminated: "terminated"}

// String names the state.
func (s State) String() string { return spell(stateNames, s, "State") }

// ctl packs the state (high 32 bits) with the number of producers that are
// offering a task right now (low 32 bits). Producers announce themselves with
// one atomic add that also reads the state; the loop moves to Shutdown and then
// waits for the count to reach zero before its final drain, so a task accepted
// before Shutdown is never left behind in a ring.
const (
	ctlStateShift = 32
	ctlCountMask  = 1<<ctlStateShift - 1
	ctlOne        = uint64(1)
	ctlMinusOne   = ^uint64(0)
)

func stateOf(ctl uint64) State      { return State(ctl >> ctlStateShift) }
func producersOf(ctl uint64) uint64 { return ctl & ctlCountMask }
func withState(ctl uint64, s State) uint64 {
	return uint64(s)<<ctlStateShift | ctl&ctlCountMask
}

// State returns the loop's current state: compare with >= (State() >=
// ShuttingDown once a shutdown has begun, >= Shutdown once tasks are refused,
// == Terminated once Done is closed).
func (l *Loop) State() State { return stateOf(l.ctl.Load()) }

// casState moves the state from "from" to "to", keeping the producer count.
func (l *Loop) casState(from, to State) bool {
	for {
		v := l.ctl.Load()
		if stateOf(v) != from {
			return false
		}
		if l.ctl.CompareAndSwap(v, withState(v, to)) {
			return true
		}
	}
}

// raiseState moves the state up to at least s and reports the state before.
func (l *Loop) raiseState(s State) State {
	for {
		v := l.ctl.Load()
		old := stateOf(v)
		if old >= s {
			return old
		}
		if l.ctl.CompareAndSwap(v, withState(v, s)) {
			return old
		}
	}
}

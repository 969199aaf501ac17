package peers

import "github.com/ringloop/ringloop/engine"

// ThreadingEnv is the operator override ringloop honours for the threading
// mode of its loops.
const ThreadingEnv = engine.ThreadingEnv

// RingloopModes lists the threading modes ringloop offers: each is its own
// row in every ringloop case.
func RingloopModes() []string {
	return []string{engine.ThreadingParked.String(), engine.ThreadingLocked.String()}
}

// ringloopThreading returns the option that selects the mode a ringloop
// server runs in: the flag, else none, so that RINGLOOP_THREADING or the
// engine's default for its backend decides, as for any program. Servers
// report the mode their loop runs (Loop.Threading).
func ringloopThreading(mode string) ([]engine.Option, error) {
	t, err := engine.ParseThreading(mode)
	if err != nil || t == 0 {
		return nil, err
	}
	return []engine.Option{engine.WithThreading(t)}, nil
}

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

// ringloopThreading resolves the mode a ringloop server runs in (the flag,
// else RINGLOOP_THREADING, else the engine's default, as the engine itself
// resolves it) and the option that selects it.
func ringloopThreading(mode string) (string, []engine.Option, error) {
	t, err := engine.ParseThreading(mode)
	if err != nil {
		return "", nil, err
	}
	if t, err = engine.ResolveThreading(t); err != nil {
		return "", nil, err
	}
	return t.String(), []engine.Option{engine.WithThreading(t)}, nil
}

package peers

import (
	"sync"

	"github.com/ringloop/ringloop/engine"
)

// ThreadingEnv is the operator override ringloop honours for the threading
// mode of its loops.
const ThreadingEnv = "RINGLOOP_THREADING"

// RingloopModes lists the threading modes ringloop offers: each is its own
// row in every ringloop case.
func RingloopModes() []string {
	return []string{engine.ThreadingParked.String(), engine.ThreadingLocked.String()}
}

// benchLoop builds the one loop a ringloop server runs on: in the mode the
// flag names, else none, so that RINGLOOP_THREADING or the engine's default
// for its backend decides, as for any program (servers report the mode
// their loop runs: BackendInfo.Threading).
func benchLoop(c Config, opts ...engine.Option) (*engine.Loop, error) {
	var t engine.Threading
	if err := t.UnmarshalText([]byte(c.Threading)); err != nil {
		return nil, err
	}
	base := []engine.Option{engine.WithName("bench")}
	if t != 0 {
		base = append(base, engine.WithThreading(t))
	}
	return engine.New(append(base, opts...)...)
}

// DefaultThreading names the mode a loop on backend b runs when nothing
// chooses one: what a program that forces the backend and nothing else
// gets. It asks a loop (BackendInfo.Threading) rather than restating the
// engine's choice, which the engine may make per backend; "" if b cannot
// run here.
func DefaultThreading(b engine.Backend) string {
	defaults.once.Do(func() {
		defaults.mode = map[engine.Backend]string{}
		for _, b := range Backends {
			l, err := engine.New(engine.WithBackend(b))
			if err != nil {
				continue
			}
			defaults.mode[b] = l.Backend().Threading.String()
			_ = l.Close()
		}
	})
	return defaults.mode[b]
}

var defaults struct {
	once sync.Once
	mode map[engine.Backend]string
}

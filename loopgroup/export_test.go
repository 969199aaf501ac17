package loopgroup

import "github.com/ringloop/ringloop/engine"

// SetNewLoop makes New build its loops with fn (a test injects a failure
// into one loop) and returns the function that restores engine.New.
func SetNewLoop(fn func(...engine.Option) (*engine.Loop, error)) (restore func()) {
	newLoop = fn
	return func() { newLoop = engine.New }
}

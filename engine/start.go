package engine

import (
	"fmt"
	"runtime"

	"golang.org/x/sys/unix"

	"github.com/ringloop/ringloop/internal/driver"
)

// start moves NotStarted → Started and launches the loop goroutine; a failed
// start rolls the state back and returns the error.
func (l *Loop) start() error {
	if !l.casState(NotStarted, Started) {
		return nil
	}
	ready := make(chan error, 1)
	go l.main(ready)
	if err := <-ready; err != nil {
		if !l.casState(Started, NotStarted) {
			// A ShutdownGracefully came meanwhile, saw Started and left
			// the ending to the loop goroutine, which has exited: end here.
			l.terminate()
		}
		return fmt.Errorf("engine: starting loop: %w", err)
	}
	return nil
}

// main is the loop goroutine: bind a locked loop to its thread, start the
// driver there, run.
func (l *Loop) main(ready chan<- error) {
	if l.threading == ThreadingLocked {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
	}
	if s, ok := l.drv.(driver.Starter); ok {
		if err := s.Enable(); err != nil {
			ready <- err
			return
		}
	}
	if l.threading == ThreadingLocked {
		l.tid.Store(int32(gettid()))
	}
	l.g.Store(curg())
	l.watch()
	l.lastExec = now()
	ready <- nil
	l.run()
}

// startForShutdown starts the goroutine of a loop that was never started,
// so that it runs the shutdown path and releases the driver.
func (l *Loop) startForShutdown() error {
	ready := make(chan error, 1)
	go l.main(ready)
	return <-ready
}
func gettid() int { return unix.Gettid() }

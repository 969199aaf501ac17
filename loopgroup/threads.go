package loopgroup

import (
	"context"
	"fmt"
	"os"
	"runtime"

	"golang.org/x/sys/unix"

	"github.com/ringloop/ringloop/engine"
	"github.com/ringloop/ringloop/tasks"
)

// initThreads runs the thread settings as the first task of every loop and
// waits for them; the first error wins.
func (g *Group) initThreads(c *Threads) error {
	if !c.any() {
		return nil
	}
	fs := make([]tasks.Future[struct{}], len(g.loops))
	for i, l := range g.loops {
		fs[i] = engine.Submit(l, func() (struct{}, error) { return struct{}{}, setupThread(c, i, l) })
	}
	var first error
	for i, f := range fs {
		if _, err := f.Await(context.Background()); err != nil && first == nil {
			first = fmt.Errorf("loopgroup: setting up loop %d: %w", i, err)
		}
	}
	return first
}

// setupThread runs on loop i's thread. Once it changes the thread, the loop
// goroutine takes a second lock on it, never released, so the thread ends
// with the loop instead of going back to the Go scheduler's pool with a
// changed name or affinity.
func setupThread(c *Threads, i int, l *engine.Loop) error {
	if len(c.CPUs) > 0 || c.Names {
		runtime.LockOSThread()
	}
	if len(c.CPUs) > 0 {
		cpu := c.CPUs[i%len(c.CPUs)]
		var set unix.CPUSet
		set.Zero()
		set.Set(cpu)
		if err := unix.SchedSetaffinity(0, &set); err != nil {
			return fmt.Errorf("pinning to CPU %d: %w", cpu, err)
		}
	}
	if c.Names {
		name := l.Name()
		if len(name) > 15 {
			name = name[:15]
		}
		comm := fmt.Sprintf("/proc/self/task/%d/comm", unix.Gettid())
		if err := os.WriteFile(comm, []byte(name), 0); err != nil {
			return fmt.Errorf("naming thread %q: %w", name, err)
		}
	}
	if c.Init != nil {
		return c.Init(i, l)
	}
	return nil
}

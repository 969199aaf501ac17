package engine

import "github.com/ringloop/ringloop/tasks"

type hook struct {
	id uint64
	fn func()
}

// AddShutdownHook registers fn to run on the loop while it shuts down, in
// the order added, and returns the function that removes it: remove reports
// whether fn was still waiting to run (as context.AfterFunc's stop does).
// Hooks may add or remove hooks.
func (l *Loop) AddShutdownHook(fn func()) (remove func() bool) {
	l.hooksMu.Lock()
	defer l.hooksMu.Unlock()
	l.hookSeq++
	id := l.hookSeq
	l.hooks = append(l.hooks, hook{id, fn})
	return func() bool { return l.removeShutdownHook(id) }
}

// removeShutdownHook removes a hook that has not run yet.
func (l *Loop) removeShutdownHook(id uint64) bool {
	l.hooksMu.Lock()
	defer l.hooksMu.Unlock()
	for i, h := range l.hooks {
		if h.id == id {
			l.hooks = append(l.hooks[:i], l.hooks[i+1:]...)
			return true
		}
	}
	return false
}

// runShutdownHooks runs the hooks one at a time, in order, until none is
// left (hooks may add or remove hooks).
func (l *Loop) runShutdownHooks() bool {
	ran := false
	for {
		l.hooksMu.Lock()
		if len(l.hooks) == 0 {
			l.hooksMu.Unlock()
			break
		}
		h := l.hooks[0]
		l.hooks[0] = hook{}
		l.hooks = l.hooks[1:]
		l.hooksMu.Unlock()
		l.safeRun(tasks.Func(h.fn), pieceHook)
		ran = true
	}
	if ran {
		l.lastExec = now()
	}
	return ran
}

package engine

import "github.com/ringloop/ringloop/tasks"

// taskBatch is how many tasks run between clock reads (Netty's 0x3F mask); it
// is also the least a loop runs per iteration when tasks wait and no I/O ran.
const taskBatch = 64

// runTasks drains the control ring, runs due timers and queued tasks for up
// to budget nanoseconds (negative: no limit; the clock is read every 64
// tasks, so at least 64 run), then drains the tail and control rings without
// a limit. It returns how many ran. The control ring is drained first too,
// so that a flood of user tasks cannot hold the library's own work back.
func (l *Loop) runTasks(start, budget int64) int {
	ran := l.runControl()
	l.fetchDue(start)
	deadline := start + budget
	for {
		t, kind := l.pollTask()
		if t == nil {
			break
		}
		l.safeRun(t, kind)
		ran++
		if budget >= 0 && ran%taskBatch == 0 {
			if now() >= deadline {
				break
			}
		}
	}
	for t := l.tailQ.Poll(); t != nil; t = l.tailQ.Poll() {
		l.safeRun(t, pieceTail)
		ran++
	}
	ran += l.runControl()
	if ran > 0 {
		end := now()
		l.lastExec = end
		l.stats.tasks.Add(uint64(ran))
		l.stats.taskNanos.Add(uint64(end - start))
	}
	return ran
}

// runControl drains the control ring and returns how many tasks ran.
func (l *Loop) runControl() int {
	ran := 0
	for t := l.ctlQ.Poll(); t != nil; t = l.ctlQ.Poll() {
		l.safeRun(t, pieceControl)
		ran++
	}
	return ran
}

// runAllTasks runs every due timer and queued task with no budget, until the
// rings are empty; used while shutting down.
func (l *Loop) runAllTasks() bool {
	any := false
	for l.runTasks(now(), -1) > 0 {
		any = true
	}
	return any
}

// fetchDue moves the timers due at now into the task run (Netty's
// fetchFromScheduledTaskQueue), in deadline order, ahead of queued tasks.
func (l *Loop) fetchDue(at int64) {
	if l.dueHead == len(l.due) {
		clear(l.due)
		l.due, l.dueHead = l.due[:0], 0
	}
	l.heap.PollDue(at, l.appendDue)
}

func (l *Loop) appendDueTask(t tasks.Task) { l.due = append(l.due, t) }

// pollTask takes the next due timer, else the next queued task, and says
// which (for the stall detector).
func (l *Loop) pollTask() (tasks.Task, uint64) {
	if l.dueHead < len(l.due) {
		t := l.due[l.dueHead]
		l.due[l.dueHead] = nil
		l.dueHead++
		return t, pieceTimer
	}
	return l.taskQ.Poll(), pieceTask
}

// safeRun runs one task, recovering and reporting a panic (Netty's
// safeExecute); an engine task's panic stops the loop instead. With the
// stall detector on it publishes the piece of work it runs (kind) for the
// watchdog (watchdog.go).
func (l *Loop) safeRun(t tasks.Task, kind uint64) {
	watched := l.cfg.stallThreshold > 0
	if watched {
		l.enter(kind)
	}
	defer func() {
		if watched {
			l.leave()
		}
		if p := recover(); p != nil {
			if _, ok := t.(engineTask); ok {
				l.engineFault(p)
				return
			}
			l.reportPanic("task", p)
		}
	}()
	if h := l.cfg.testFault; h != nil {
		if _, ok := t.(engineTask); ok {
			h("engine task")
		}
	}
	t.Run()
}

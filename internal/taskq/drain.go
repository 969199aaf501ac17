package taskq

import "github.com/ringloop/ringloop/tasks"

// DrainAll polls q until it returns nil and runs every task, with run when
// it is not nil (an engine passes a function that recovers panics and
// reports them) or with Task.Run. It returns how many tasks ran.
//
// These are the semantics of Netty's tail-task queue (afterRunningAllTasks →
// runAllTasksFrom(tailTasks)): the engine calls DrainAll on the tail queue
// after each iteration's normal tasks, also when no normal task ran, and
// without a time budget. Tasks added while draining, including by the tail
// tasks themselves, run in the same drain; a task that always re-adds itself
// therefore never lets DrainAll return. A task whose producer has claimed a
// position but not yet published it ends the drain; that producer wakes the
// loop, so it runs in the next iteration. A panic in run (or in Task.Run
// when run is nil) propagates to the caller and leaves the remaining tasks
// queued.
func DrainAll(q Queue, run func(tasks.Task)) int {
	n := 0
	for {
		t := q.Poll()
		if t == nil {
			return n
		}
		n++
		if run != nil {
			run(t)
		} else {
			t.Run()
		}
	}
}

// Drain is DrainAll with a limit: it runs at most max tasks (none when max
// <= 0), for an engine that bounds a batch, for example by the tasks that
// were queued when the batch began (q.Len()), or checks its time budget
// between batches.
func Drain(q Queue, max int, run func(tasks.Task)) int {
	n := 0
	for n < max {
		t := q.Poll()
		if t == nil {
			break
		}
		n++
		if run != nil {
			run(t)
		} else {
			t.Run()
		}
	}
	return n
}

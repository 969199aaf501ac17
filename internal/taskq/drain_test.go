package taskq

import (
	"testing"

	"github.com/ringloop/ringloop/tasks"
)

func TestDrainAllRunsTasksAddedWhileDraining(t *testing.T) {
	q := NewUnbounded(0)
	var log []int
	q.Offer(tasks.Func(func() {
		log = append(log, 1)
		q.Offer(tasks.Func(func() { log = append(log, 3) })) // tail task adds a tail task
	}))
	q.Offer(tasks.Func(func() { log = append(log, 2) }))
	eq(t, DrainAll(q, nil), 3, "tasks run")
	eq(t, len(log), 3, "log")
	for i, v := range log {
		eq(t, v, i+1, "order")
	}
	eq(t, DrainAll(q, nil), 0, "empty drain")
}

func TestDrainWrapperAndLimit(t *testing.T) {
	q := NewBounded(16)
	it := items(0, 5)
	for _, x := range it {
		q.Offer(x)
	}
	var seen []tasks.Task
	eq(t, Drain(q, 2, func(x tasks.Task) { seen = append(seen, x) }), 2, "Drain(2)")
	eq(t, len(seen), 2, "wrapper calls")
	eq(t, it[0].ran.Load(), int32(0), "wrapper decides whether Run is called")
	eq(t, Drain(q, 0, nil), 0, "Drain(0)")
	eq(t, Drain(q, 10, nil), 3, "Drain(10)")
	eq(t, it[4].ran.Load(), int32(1), "Run called without a wrapper")
}

func TestDrainAllPanicLeavesRest(t *testing.T) {
	q := NewUnbounded(0)
	ran := false
	q.Offer(tasks.Func(func() { panic("task bug") }))
	q.Offer(tasks.Func(func() { ran = true }))
	func() {
		defer func() { must(t, recover() != nil, "panic swallowed") }()
		DrainAll(q, nil)
	}()
	must(t, !ran, "task after the panic ran")
	eq(t, DrainAll(q, nil), 1, "remaining task")
	must(t, ran, "remaining task ran")
}

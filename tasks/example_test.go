package tasks_test

import (
	"context"
	"fmt"

	"github.com/ringloop/ringloop/tasks"
)

// counter is a pre-built task: offering it allocates nothing.
type counter struct{ n int }

func (c *counter) Run() { c.n++ }

func Example() {
	// An event loop's two queues: normal tasks and tail tasks.
	q := tasks.NewQueue(0) // unbounded, as Netty's default
	tail := tasks.NewQueue(0)

	c := &counter{}
	for range 3 {
		q.Offer(c)
	}
	q.Offer(tasks.Func(func() { fmt.Println("plain func task") }))
	tail.Offer(tasks.Func(func() { fmt.Println("tail task: flush") }))

	// One loop iteration: the tasks, then the tail tasks.
	tasks.DrainAll(q, nil)
	tasks.DrainAll(tail, nil)
	fmt.Println("counter:", c.n)

	// A promise completed elsewhere: a waiter sees the value, and a
	// listener added once it is done runs at once.
	p := tasks.NewPromise[string](nil)
	go p.Succeed("hello")
	v, err := p.Await(context.Background())
	fmt.Println("Await got", v, err)
	p.AddListener(nil, func(f tasks.Future[string]) {
		v, _, _ := f.Poll()
		fmt.Println("listener got", v)
	})

	// A full bounded queue rejects.
	b := tasks.NewBounded(1) // rounded up to 16
	for b.Offer(c) {
	}
	err = tasks.Enqueue(b, c, tasks.Reject(), nil, false)
	fmt.Println(b.Cap(), err)
	// Output:
	// plain func task
	// tail task: flush
	// counter: 3
	// Await got hello <nil>
	// listener got hello
	// 16 tasks: task rejected: queue full
}

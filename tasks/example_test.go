package tasks_test

import (
	"context"
	"errors"
	"fmt"

	"github.com/ringloop/ringloop/tasks"
)

func Example() {
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

	// A cancelled future fails with ErrCancelled, which is also
	// context.Canceled.
	q := tasks.NewPromise[int](nil)
	q.Cancel()
	fmt.Println(errors.Is(q.Err(), tasks.ErrCancelled), errors.Is(q.Err(), context.Canceled))
	// Output:
	// Await got hello <nil>
	// listener got hello
	// true true
}

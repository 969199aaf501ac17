package loopgroup

import (
	"fmt"
	"runtime"

	"github.com/ringloop/ringloop/engine"
	"github.com/ringloop/ringloop/internal/loopctl"
	"github.com/ringloop/ringloop/tasks"
)

// NewExecutorGroup builds a group for blocking work (Netty's
// DefaultEventExecutorGroup, as RocketMQ uses it for handlers that call a
// database or the disk): loops with task rings and timers that never do
// I/O. Each loop is an engine loop on the epoll backend, forced over any
// WithBackend: an idle epoll driver costs one epoll fd and one eventfd and
// sleeps in epoll_wait, where an io_uring driver would map a ring and a
// buffer ring for nothing. A task that blocks holds only its own loop's
// locked OS thread, never an I/O loop's. The default size is 2 × GOMAXPROCS
// (Netty's 2 × cores): blocked threads wait rather than compute. Hand work
// to it and the result back with Offload.
func NewExecutorGroup(opts ...Option) (*Group, error) {
	c := config{}
	for _, o := range opts {
		if err := o(&c); err != nil {
			return nil, err
		}
	}
	all := append([]Option(nil), opts...)
	if c.loops == 0 {
		all = append(all, WithLoops(2*max(1, runtime.GOMAXPROCS(0))))
	}
	all = append(all, WithEngineOptions(engine.WithBackend(engine.BackendEpoll)))
	return New(all...)
}

// Offload runs work on a loop of ex (a blocking executor group, or one of its
// loops to keep a connection's requests in order) and then done on c's own
// loop, where it may use c.Write and every other on-the-loop method. The
// handler's loop never waits: it returns at once and serves other
// connections meanwhile. If c's loop has shut down by the time work
// finishes, done is not called (the loop's shutdown closed c); a full task
// ring on c's loop never stops it (the result travels on the loop's control
// ring, apart from user tasks). Offload returns the executor's refusal
// (ErrShutdown, ErrRejected), in which case neither function runs.
//
// When the answer is only bytes to send, the work may instead call
// c.AsyncWrite itself, from the executor loop: it copies the bytes and
// writes them on c's loop, keeping the order of one goroutine's writes.
// Either way, pin a connection to one executor loop (ex.Next() in OnOpen,
// kept with Conn.SetValue) when its answers must keep the request order.
func Offload[T any](ex engine.Loops, c *engine.Conn, work func() (T, error), done func(c *engine.Conn, v T, err error)) error {
	return ex.Next().Execute(&offloadTask[T]{c: c, work: work, done: done})
}

type offloadTask[T any] struct {
	c    *engine.Conn
	work func() (T, error)
	done func(*engine.Conn, T, error)
	v    T
	err  error
	back bool
}

// Run runs work on the executor loop, then done on the connection's loop. A
// panic in work becomes done's error (wrapping tasks.ErrPanicked).
func (t *offloadTask[T]) Run() {
	if t.back {
		t.done(t.c, t.v, t.err)
		return
	}
	t.back = true
	defer func() {
		if p := recover(); p != nil {
			var zero T
			t.v, t.err = zero, fmt.Errorf("%w: %v", tasks.ErrPanicked, p)
		}
		// Back on the connection's loop through its control ring (package
		// loopctl), which a bounded task ring (WithMaxPendingTasks) cannot
		// refuse; refused only once that loop has shut down, which closed
		// the connection: done is then not called, as documented.
		_ = loopctl.Run(t.c.Loop(), t)
	}()
	t.v, t.err = t.work()
}

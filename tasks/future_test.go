package tasks

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ringloop/ringloop/internal/loopctl"
)

func TestPromiseSucceed(t *testing.T) {
	p := NewPromise[int](nil)
	_, done, err := p.Poll()
	must(t, !done && err == nil, "pending Poll: done %v err %v", done, err)
	must(t, !p.IsDone() && p.Err() == nil, "pending promise looks done")
	must(t, p.Succeed(42), "Succeed on pending")
	must(t, !p.Succeed(1), "second Succeed accepted")
	must(t, !p.Fail(errors.New("x")), "Fail after Succeed accepted")
	must(t, !p.Cancel(), "Cancel after Succeed accepted")
	v, done, err := p.Poll()
	must(t, done && v == 42 && err == nil, "Poll: %v %v %v", v, err, done)
	v, err = p.Await(context.Background())
	must(t, v == 42 && err == nil, "Await: %v %v", v, err)
	must(t, p.IsDone() && !p.IsCancelled() && p.Err() == nil, "state after success")
	must(t, p.done == nil, "a channel was allocated without a blocking Await")
}

func TestPromiseFailAndCancel(t *testing.T) {
	boom := errors.New("boom")
	p := NewPromise[string](nil)
	must(t, p.Fail(boom), "Fail on pending")
	v, err := p.Await(context.Background())
	must(t, v == "" && err == boom, "Await after Fail: %q %v", v, err)
	must(t, p.Err() == boom && !p.IsCancelled(), "Err after Fail")

	c := NewPromise[string](nil)
	must(t, c.Cancel(), "Cancel on pending")
	must(t, !c.Cancel(), "second Cancel")
	must(t, !c.Succeed("late"), "Succeed after Cancel accepted")
	must(t, c.IsCancelled() && c.IsDone(), "state after Cancel")
	must(t, errors.Is(c.Err(), ErrCancelled) && errors.Is(c.Err(), context.Canceled), "Err after Cancel: %v", c.Err())
	_, err = c.Await(context.Background())
	must(t, errors.Is(err, context.Canceled), "Await after Cancel: %v", err)

	u := NewPromise[int](nil)
	must(t, u.SetUncancellable(), "SetUncancellable on pending")
	must(t, !u.Cancel() && !u.IsDone(), "Cancel of an uncancellable promise")
	must(t, u.Succeed(3), "Succeed of an uncancellable promise")
	must(t, !c.SetUncancellable(), "SetUncancellable after Cancel")
	must(t, p.SetUncancellable(), "SetUncancellable after Fail")

	for _, f := range []func(){
		func() { NewPromise[int](nil).Fail(nil) },
		func() { Failed[int](nil) },
	} {
		func() {
			defer func() { must(t, recover() != nil, "Fail(nil) did not panic") }()
			f()
		}()
	}
}

func TestSucceededFailed(t *testing.T) {
	s := Succeeded("v")
	v, done, err := s.Poll()
	must(t, done && v == "v" && err == nil, "Succeeded: %v %v %v", v, err, done)
	boom := errors.New("boom")
	f := Failed[int](boom)
	_, err = f.Await(context.Background())
	must(t, err == boom && f.IsDone() && f.Err() == boom, "Failed: %v", err)
	ran := 0
	s.AddListener(nil, func(Future[string]) { ran++ })
	f.AddListener(nil, func(Future[int]) { ran++ })
	eq(t, ran, 2, "listeners of done futures run at once")
}

func TestAwaitBlocksUntilDone(t *testing.T) {
	p := NewPromise[int](nil)
	go func() {
		// Complete only once Await blocks (it made the channel), or after
		// a deadline, which the test then notices.
		deadline := time.Now().Add(20 * time.Second)
		for time.Now().Before(deadline) {
			p.mu.Lock()
			blocked := p.done != nil
			p.mu.Unlock()
			if blocked {
				break
			}
			time.Sleep(time.Millisecond)
		}
		p.Succeed(7)
	}()
	v, err := p.Await(context.Background())
	must(t, v == 7 && err == nil, "Await: %v %v", v, err)
	must(t, p.done != nil, "Await returned without blocking")
}

func TestAwaitContext(t *testing.T) {
	p := NewPromise[int](nil)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	_, err := p.Await(ctx)
	must(t, errors.Is(err, context.DeadlineExceeded), "Await past deadline: %v", err)

	q := NewPromise[int](nil)
	done, stop := context.WithCancel(context.Background())
	stop()
	_, err = q.Await(done)
	must(t, errors.Is(err, context.Canceled), "Await with a done context: %v", err)
	must(t, q.done == nil, "a done context still allocated a channel")

	q.Succeed(1)
	v, err := q.Await(done)
	must(t, v == 1 && err == nil, "a done future wins over a done context: %v %v", v, err)
}

func TestAwaitDeadlock(t *testing.T) {
	ex := newQueueExecutor()
	ex.onLoop.Store(true)
	p := NewPromise[int](ex)
	_, err := p.Await(context.Background())
	must(t, errors.Is(err, ErrDeadlock), "Await on its own loop: %v", err)
	p.Succeed(5)
	v, err := p.Await(context.Background())
	must(t, v == 5 && err == nil, "Await of a done promise on its loop: %v %v", v, err)
}

func TestListeners(t *testing.T) {
	var order []int
	p := NewPromise[int](nil)
	for i := range 4 {
		p.AddListener(nil, func(f Future[int]) {
			v, done, _ := f.Poll()
			must(t, done && v == 9, "listener saw %v %v", v, done)
			order = append(order, i)
		})
	}
	eq(t, len(order), 0, "listeners ran before completion")
	p.Succeed(9)
	eq(t, len(order), 4, "listeners run")
	for i, v := range order {
		eq(t, v, i, "listener order")
	}
	p.AddListener(nil, func(Future[int]) { order = append(order, 4) })
	eq(t, len(order), 5, "listener added after completion runs at once")
	p.Succeed(1)
	eq(t, len(order), 5, "listeners ran twice")
}

func TestListenerExecutors(t *testing.T) {
	ex := newQueueExecutor()
	p := NewPromise[int](ex)
	must(t, !Inline.InEventLoop(), "Inline claims to be a loop")
	var onEx, inline, explicit atomic.Int32
	p.AddListener(nil, func(Future[int]) { onEx.Add(1) })      // promise's executor
	p.AddListener(Inline, func(Future[int]) { inline.Add(1) }) // forced inline
	other := newQueueExecutor()
	p.AddListener(other, func(Future[int]) { explicit.Add(1) }) // a given executor
	p.Succeed(1)
	eq(t, inline.Load(), int32(1), "Inline listener ran at once")
	eq(t, onEx.Load(), int32(0), "executor listener ran before its executor")
	eq(t, ex.run(), 1, "tasks on the promise's executor")
	eq(t, onEx.Load(), int32(1), "executor listener ran")
	eq(t, other.run(), 1, "tasks on the other executor")
	eq(t, explicit.Load(), int32(1), "explicit executor listener ran")

	// On its own loop a listener runs inline, without a hop.
	ex.onLoop.Store(true)
	p.AddListener(nil, func(Future[int]) { onEx.Add(1) })
	eq(t, onEx.Load(), int32(2), "listener on its own loop ran inline")
	eq(t, ex.len(), 0, "no task queued")

}

// TestRefusedListenerRunsOffTheCompleter: a listener its executor refuses
// (shut down, or full with no listener path) still runs, but never on the
// goroutine that completes the promise, which may be another loop: here the
// listener waits until Succeed has returned, so running it inline would
// hang Succeed.
func TestRefusedListenerRunsOffTheCompleter(t *testing.T) {
	for _, why := range []error{ErrShutdown, ErrRejected} {
		ex := newQueueExecutor()
		ex.reject = why
		p := NewPromise[int](ex)
		succeeded, ran := make(chan struct{}), make(chan int, 1)
		p.AddListener(nil, func(f Future[int]) {
			<-succeeded
			v, _, _ := f.Poll()
			ran <- v
		})
		go func() { p.Succeed(7); close(succeeded) }()
		select {
		case v := <-ran:
			eq(t, v, 7, "listener's value")
		case <-time.After(30 * time.Second):
			t.Fatalf("%v: the refused listener never ran, or ran inside Succeed", why)
		}
		// Added after completion: the same, off the caller.
		p.AddListener(nil, func(Future[int]) { ran <- 8 })
		select {
		case v := <-ran:
			eq(t, v, 8, "late listener")
		case <-time.After(30 * time.Second):
			t.Fatalf("%v: the late refused listener never ran", why)
		}
	}
}

// listenerExecutor refuses tasks but takes listeners on its control ring
// (loopctl.Loop), as a loop with a full bounded ring does.
type listenerExecutor struct{ *queueExecutor }

func (e listenerExecutor) Control(t loopctl.Task) error {
	e.offer(t.Unwrap())
	return nil
}

// TestListenerExecutorTakesListeners: an executor with a control ring gets
// its listeners there even when Execute refuses.
func TestListenerExecutorTakesListeners(t *testing.T) {
	ex := listenerExecutor{newQueueExecutor()}
	ex.reject = ErrRejected
	p := NewPromise[int](ex)
	var ran atomic.Int32
	p.AddListener(nil, func(Future[int]) { ran.Add(1) })
	p.Succeed(1)
	eq(t, ran.Load(), int32(0), "listener ran before its executor")
	eq(t, ex.run(), 1, "listeners on the executor")
	eq(t, ran.Load(), int32(1), "listener ran")
}

func TestListenerPanicDoesNotStopOthers(t *testing.T) {
	var buf bytes.Buffer
	old := slog.Default()
	slog.SetDefault(slog.New(slog.NewTextHandler(&buf, nil)))
	defer slog.SetDefault(old)
	p := NewPromise[int](nil)
	ran := 0
	p.AddListener(nil, func(Future[int]) { panic("listener bug") })
	p.AddListener(nil, func(Future[int]) { ran++ })
	must(t, p.Succeed(1), "Succeed")
	eq(t, ran, 1, "listener after a panicking one")
	must(t, strings.Contains(buf.String(), "listener bug"), "panic not reported: %q", buf.String())
}

// TestConcurrentCompletion races completions, Cancel, AddListener and Await:
// exactly one completion wins and every listener runs exactly once.
func TestConcurrentCompletion(t *testing.T) {
	rounds := 300
	if raceEnabled {
		rounds = 50
	}
	for range rounds {
		p := NewPromise[int](nil)
		var wins, calls atomic.Int32
		var wg sync.WaitGroup
		const listeners = 8
		for i := range 4 {
			wg.Add(3)
			go func() {
				defer wg.Done()
				var ok bool
				switch i {
				case 0:
					ok = p.Cancel()
				case 1:
					ok = p.Fail(errors.New("f"))
				default:
					ok = p.Succeed(i)
				}
				if ok {
					wins.Add(1)
				}
			}()
			go func() {
				defer wg.Done()
				for range listeners / 4 {
					p.AddListener(nil, func(Future[int]) { calls.Add(1) })
				}
			}()
			go func() {
				defer wg.Done()
				_, err := p.Await(context.Background())
				_, done, err2 := p.Poll()
				if !done || err != err2 {
					t.Errorf("Await and Poll disagree: %v %v %v", err, err2, done)
				}
			}()
		}
		wg.Wait()
		eq(t, wins.Load(), int32(1), "completions that won")
		eq(t, calls.Load(), int32(listeners), "listener calls")
	}
}

// TestPromisesCostNoGoroutine: pending promises with listeners own no
// goroutine and no channel.
func TestPromisesCostNoGoroutine(t *testing.T) {
	before := runtime.NumGoroutine()
	ps := make([]*Promise[int], 1000)
	for i := range ps {
		ps[i] = NewPromise[int](nil)
		ps[i].AddListener(nil, func(Future[int]) {})
	}
	must(t, runtime.NumGoroutine() <= before, "pending promises started goroutines: %d before, %d after", before, runtime.NumGoroutine())
	for _, p := range ps {
		p.Succeed(1)
		must(t, p.done == nil, "channel allocated")
	}
	allocs := testing.AllocsPerRun(100, func() {
		p := NewPromise[int](nil)
		p.Succeed(1)
		p.Poll()
	})
	eq(t, allocs, 1.0, "allocations of a promise completed without waiting (the promise itself)")
}

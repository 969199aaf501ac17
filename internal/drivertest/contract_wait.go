package drivertest

import (
	"sync"
	"testing"
	"time"

	"github.com/ringloop/ringloop/internal/driver"
)

// testWakeStorm: in each round 16 goroutines call Wake while the loop is in
// (or about to enter) Wait(-1); the Wait returns every round. A lost wake
// hangs the round, and a watchdog fails the test.
func testWakeStorm(t *testing.T, e *Env) {
	h := e.New(t)
	rounds := 100
	if raceEnabled {
		rounds = 30
	}
	const wakers = 16
	var start sync.WaitGroup
	var done sync.WaitGroup
	go1 := make([]chan struct{}, wakers)
	for i := range go1 {
		go1[i] = make(chan struct{})
	}
	quit := make(chan struct{})
	defer close(quit)
	for i := 0; i < wakers; i++ {
		go func(c chan struct{}) {
			for {
				select {
				case <-quit:
					return
				case <-c:
				}
				start.Done()
				if err := h.D.Wake(); err != nil {
					t.Errorf("Wake: %v", err)
				}
				done.Done()
			}
		}(go1[i])
	}
	for r := 0; r < rounds; r++ {
		start.Add(wakers)
		done.Add(wakers)
		for _, c := range go1 {
			c <- struct{}{}
		}
		if r%2 == 0 {
			start.Wait() // wakers are running; some wake before Wait blocks
		}
		returned := make(chan struct{})
		watchdog := time.AfterFunc(20*time.Second, func() {
			select {
			case <-returned:
			default:
				t.Errorf("round %d: Wait(-1) did not return after 16 wakes", r)
				h.D.Wake()
			}
		})
		h.Wait(driver.WaitForever)
		close(returned)
		watchdog.Stop()
		done.Wait()
		h.Wait(0) // absorb the round's leftover wakes
	}
}

// testWakeBeforeWait: a Wake with no Wait running makes the next Wait(-1)
// return; a Wake during a long Wait ends it early.
func testWakeBeforeWait(t *testing.T, e *Env) {
	h := e.New(t)
	if err := h.D.Wake(); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	watchdog := time.AfterFunc(20*time.Second, func() {
		select {
		case <-done:
		default:
			t.Error("Wait(-1) ignored an earlier Wake")
			h.D.Wake()
		}
	})
	h.Wait(driver.WaitForever)
	close(done)
	watchdog.Stop()

	h.Wait(0)
	go func() {
		time.Sleep(5 * time.Millisecond)
		h.D.Wake()
	}()
	start := time.Now()
	h.Wait(30 * time.Second)
	if el := time.Since(start); el > 15*time.Second {
		t.Fatalf("Wake did not end a 30 s Wait (took %v)", el)
	}
}

// testWaitTimeouts: with armed but idle ops, Wait(d) returns no completion
// and never before d (sub-millisecond, millisecond-fraction and whole
// milliseconds), and Wait(0) does not block.
func testWaitTimeouts(t *testing.T, e *Env) {
	h := e.New(t)
	fd, _ := TCPPair(t)
	h.Own(fd)
	r := h.Recv(fd, nil)
	lfd, _ := Listen(t, 8)
	h.Own(lfd)
	a := h.Accept(lfd)
	h.Wait(0)
	for i := 0; i < 3; i++ {
		start := time.Now()
		if n := h.Wait(0); n != 0 {
			t.Fatalf("Wait(0) on idle ops: %d completions", n)
		}
		if el := time.Since(start); el > time.Second {
			t.Fatalf("Wait(0) blocked for %v", el)
		}
	}
	for _, d := range []time.Duration{100 * time.Microsecond, 250 * time.Microsecond, 1500 * time.Microsecond, 2*time.Millisecond + 300*time.Microsecond, 15 * time.Millisecond} {
		for i := 0; i < 3; i++ {
			start := time.Now()
			n := h.Wait(d)
			el := time.Since(start)
			if n != 0 {
				t.Fatalf("Wait(%v) on idle ops: %d completions", d, n)
			}
			if el < d {
				t.Fatalf("Wait(%v) returned early, after %v", d, el)
			}
			if el > d+10*time.Second {
				t.Fatalf("Wait(%v) took %v", d, el)
			}
		}
	}
	h.Cancel(r)
	h.Cancel(a)
	h.Until(0, "cancels", func() bool { return r.Done && a.Done })
}

// testWaitReturnsCompletions: a Wait with a long timeout returns as soon as
// an op completes, and reports how many completions it handed over.
func testWaitReturnsCompletions(t *testing.T, e *Env) {
	h := e.New(t)
	fd, _ := TCPPair(t)
	h.Own(fd)
	ops := []*Op{h.Send(fd, []byte("a")), h.Send(fd, nil)}
	start := time.Now()
	got := 0
	for !AllDone(ops...) {
		got += h.Wait(30 * time.Second)
		if time.Since(start) > 15*time.Second {
			t.Fatal("Wait did not return for ready completions")
		}
	}
	if got != 2 {
		t.Fatalf("Wait reported %d completions, want 2", got)
	}
}

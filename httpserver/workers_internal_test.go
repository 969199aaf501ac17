package httpserver

import (
	"runtime"
	"testing"
	"time"

	"github.com/ringloop/ringloop/internal/testenv"
)

// goid is the running goroutine's number, from its stack's header.
func goid() string {
	var b [64]byte
	s := string(b[:runtime.Stack(b[:], false)])
	s = s[len("goroutine "):]
	for i := range s {
		if s[i] == ' ' {
			return s[:i]
		}
	}
	return s
}

// recordJob tells which goroutine ran it.
type recordJob chan string

func (j recordJob) run() { j <- goid() }

// TestWorkersReuseAndTrim: a request runs on the worker the previous one
// left idle; a worker idle through a whole period is released at the next
// trim, one taken meanwhile is kept; close releases the rest, and a busy
// worker exits when its request ends.
func TestWorkersReuseAndTrim(t *testing.T) {
	testenv.CheckLeaks(t)
	var ws workers
	idle := func(n int) {
		t.Helper()
		testenv.Eventually(t, 30*time.Second, "idle workers", func() bool { return ws.idleCount() == n })
	}
	j := make(recordJob, 1)
	ws.run(j)
	first := <-j
	idle(1)
	for range 10 {
		ws.run(j)
		if g := <-j; g != first {
			t.Fatalf("request ran on goroutine %s, want the idle worker %s", g, first)
		}
		idle(1)
	}

	p := int64(workerIdlePeriod)
	t0 := time.Now().UnixNano()
	ws.trim(t0) // starts a period: the worker idle now is counted
	ws.trim(t0 + p/2)
	idle(1)   // not a period yet
	ws.run(j) // taken during the period: kept
	<-j
	idle(1)
	ws.trim(t0 + p)
	idle(1)
	ws.trim(t0 + 2*p) // idle through the whole period since
	idle(0)

	// Two at once: two workers; close releases them.
	block := make(chan struct{})
	b1, b2 := blockJob{block, make(chan struct{})}, blockJob{block, make(chan struct{})}
	ws.run(b1)
	ws.run(b2)
	<-b1.started
	<-b2.started
	close(block)
	idle(2)
	ws.close()
	idle(0)

	// Busy at close: exits when done.
	block = make(chan struct{})
	var ws2 workers
	b3 := blockJob{block, make(chan struct{})}
	ws2.run(b3)
	<-b3.started
	ws2.close()
	close(block)
	// CheckLeaks waits for its goroutine to end.
}

type blockJob struct{ block, started chan struct{} }

func (j blockJob) run() { close(j.started); <-j.block }

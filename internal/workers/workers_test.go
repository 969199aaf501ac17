package workers

import (
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/ringloop/ringloop/engine"
	"github.com/ringloop/ringloop/internal/testenv"
)

// goid is the running goroutine's number, from its stack's header.
func goid() string {
	var b [64]byte
	s := strings.TrimPrefix(string(b[:runtime.Stack(b[:], false)]), "goroutine ")
	return s[:strings.IndexByte(s, ' ')]
}

// recordJob tells which goroutine ran it.
type recordJob chan string

func (j recordJob) Run() { j <- goid() }

// blockJob runs until block closes.
type blockJob struct{ block, started chan struct{} }

func (j blockJob) Run() { close(j.started); <-j.block }

func waitIdle(t *testing.T, p *Pool, n int) {
	t.Helper()
	testenv.Eventually(t, 30*time.Second, "idle workers", func() bool { return p.Idle() == n })
}

// TestReuse: a job runs on the worker the previous one left idle.
func TestReuse(t *testing.T) {
	testenv.CheckLeaks(t)
	p := &Pool{}
	defer p.Close()
	j := make(recordJob, 1)
	p.Go(j)
	first := <-j
	waitIdle(t, p, 1)
	for range 10 {
		p.Go(j)
		if g := <-j; g != first {
			t.Fatalf("job ran on goroutine %s, want the idle worker %s", g, first)
		}
		waitIdle(t, p, 1)
	}
}

// TestTrim: a worker idle through a whole period is released at the next
// trim; one taken during the period is kept.
func TestTrim(t *testing.T) {
	testenv.CheckLeaks(t)
	p := &Pool{}
	defer p.Close()
	j := make(recordJob, 1)
	p.Go(j)
	<-j
	waitIdle(t, p, 1)
	trim := func(now int64) {
		p.mu.Lock()
		p.trim(now)
		p.mu.Unlock()
	}
	per := int64(IdlePeriod)
	p.mu.Lock()
	t0 := p.lastTrim
	p.mu.Unlock()
	trim(t0 + per/2) // not a period yet
	waitIdle(t, p, 1)
	p.Go(j) // taken during the period: kept
	<-j
	waitIdle(t, p, 1)
	trim(t0 + per)
	waitIdle(t, p, 1)
	trim(t0 + 2*per) // idle through the whole period since
	waitIdle(t, p, 0)
}

// TestIdleExpire: without trims from a test, the pool's timer releases an
// idle worker after about two periods.
func TestIdleExpire(t *testing.T) {
	testenv.CheckLeaks(t)
	p := &Pool{}
	defer p.Close()
	j := make(recordJob, 1)
	p.Go(j)
	<-j
	waitIdle(t, p, 1)
	waitIdle(t, p, 0)
}

// TestClose: close releases idle workers; a busy one exits when its job
// ends (CheckLeaks waits for both).
func TestClose(t *testing.T) {
	testenv.CheckLeaks(t)
	p := &Pool{}
	block := make(chan struct{})
	b1, b2 := blockJob{block, make(chan struct{})}, blockJob{block, make(chan struct{})}
	p.Go(b1)
	p.Go(b2)
	<-b1.started
	<-b2.started
	close(block)
	waitIdle(t, p, 2)
	b3 := blockJob{make(chan struct{}), make(chan struct{})}
	p.Go(b3)
	<-b3.started
	p.Close()
	waitIdle(t, p, 0)
	close(b3.block)
}

// TestForLoop: a loop's pool is one, and its shutdown closes it.
func TestForLoop(t *testing.T) {
	testenv.ForEach(t, func(t *testing.T, c testenv.Combo) {
		testenv.CheckLeaks(t)
		l, err := engine.New(c.Options()...)
		if err != nil {
			t.Fatal(err)
		}
		p := For(l)
		if For(l) != p {
			t.Fatal("two pools for one loop")
		}
		j := make(recordJob, 1)
		p.Go(j)
		<-j
		waitIdle(t, p, 1)
		if err := l.Close(); err != nil {
			t.Fatal(err)
		}
		waitIdle(t, p, 0)
		if _, ok := pools.Load(l); ok {
			t.Fatal("a shut-down loop's pool is still listed")
		}
	})
}

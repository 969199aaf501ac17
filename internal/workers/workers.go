// Package workers keeps, per loop, the goroutines that run what a loop hands
// off because it may block: an adapter request's handler (httpserver), a TLS
// handshake (looptls).
//
// A goroutine started per job begins on the runtime's small starting stack
// and grows it, copying it each time, on its way down to the handler or
// through crypto/tls, and an exiting goroutine's grown stack is freed, so
// every job paid it again: a profile of httpserver's adapter under
// keep-alive load, or of TLS handshakes, shows it as runtime.copystack
// under runtime.morestack (perf record -e cpu-clock). A worker keeps its
// stack between jobs; the garbage collector halves a parked one that uses
// little of it, so an idle worker costs a few KB.
//
// Idle workers wait last in, first out (the most recently used, whose
// stack is warm, runs next), at most MaxIdle of them; those that stayed
// idle through a whole IdlePeriod exit, so a burst leaves no standing
// crowd. A loop's shutdown closes its pool: idle workers exit at once, busy
// ones when their job ends.
//
// The pools are kept here, by loop, rather than in a field of engine.Loop:
// the packages that share a loop's workers (httpserver's adapter, looptls's
// handshakes) import engine, and a field would make engine import this
// package and hand its pool out through a second exported method. An entry
// lives from a loop's first job to its shutdown hook.
package workers

import (
	"sync"
	"time"

	"github.com/ringloop/ringloop/engine"
)

// Job is what a worker runs.
type Job interface{ Run() }

const (
	MaxIdle    = 1024 // per pool
	IdlePeriod = time.Second
)

// Pool runs jobs on workers; its methods may be called from any goroutine.
type Pool struct {
	mu       sync.Mutex
	idle     []*worker
	low      int // fewest idle since the last trim: idle[:low] stayed idle all period
	lastTrim int64
	timer    *time.Timer // armed while some worker is idle
	closed   bool
}

// worker is one goroutine's mailbox: a job, or nil to exit.
type worker struct{ next chan Job }

var pools sync.Map // *engine.Loop → *Pool

// For returns l's pool, made on first use; l's shutdown closes it.
func For(l *engine.Loop) *Pool {
	if p, ok := pools.Load(l); ok {
		return p.(*Pool)
	}
	p := &Pool{}
	if q, loaded := pools.LoadOrStore(l, p); loaded {
		return q.(*Pool)
	}
	l.AddShutdownHook(func() {
		pools.Delete(l)
		p.Close()
	})
	return p
}

// Go runs j on an idle worker, or on a new one.
func (p *Pool) Go(j Job) {
	p.mu.Lock()
	if n := len(p.idle); n > 0 {
		w := p.idle[n-1]
		p.idle[n-1] = nil
		p.idle = p.idle[:n-1]
		p.low = min(p.low, n-1)
		p.mu.Unlock()
		w.next <- j // buffered: never blocks
		return
	}
	p.mu.Unlock()
	go p.work(j)
}

func (p *Pool) work(j Job) {
	w := &worker{next: make(chan Job, 1)}
	for j != nil {
		j.Run()
		j = nil // done: keep nothing of it while idle
		if !p.park(w) {
			return
		}
		j = <-w.next
	}
}

// park lists w as idle, unless the pool closed or enough wait already.
func (p *Pool) park(w *worker) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed || len(p.idle) >= MaxIdle {
		return false
	}
	p.idle = append(p.idle, w)
	if p.timer == nil {
		p.lastTrim, p.low = time.Now().UnixNano(), len(p.idle)
		p.timer = time.AfterFunc(IdlePeriod, p.onTimer)
	}
	return true
}

func (p *Pool) onTimer() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return
	}
	p.trim(time.Now().UnixNano())
	if len(p.idle) == 0 {
		p.timer = nil
		return
	}
	p.timer.Reset(IdlePeriod)
}

// trim releases the workers idle since the last trim, once a period has
// passed. Under p.mu.
func (p *Pool) trim(now int64) {
	if now-p.lastTrim < int64(IdlePeriod) {
		return
	}
	p.lastTrim = now
	k := min(p.low, len(p.idle))
	for _, w := range p.idle[:k] {
		w.next <- nil
	}
	n := copy(p.idle, p.idle[k:])
	clear(p.idle[n:])
	p.idle = p.idle[:n]
	p.low = n
}

// Close releases every idle worker and keeps busy ones from parking.
func (p *Pool) Close() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.closed = true
	if p.timer != nil {
		p.timer.Stop()
	}
	for _, w := range p.idle {
		w.next <- nil
	}
	clear(p.idle)
	p.idle, p.low = p.idle[:0], 0
}

// Idle returns how many workers wait.
func (p *Pool) Idle() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.idle)
}

package httpserver

import (
	"sync"
	"time"
)

// workers runs one loop's adapter requests on goroutines that outlive a
// request. A goroutine started per request begins on the runtime's small
// starting stack and grows it, copying it each time, on its way down to the
// handler: at 50 keep-alive connections that copying was 11% of the
// server's CPU (perf record -e cpu-clock, runtime.copystack under
// runtime.morestack), every request, because an exiting goroutine's grown
// stack is freed. A worker keeps its stack between requests; the garbage
// collector halves a parked one that uses little of it, so an idle worker
// costs a few KB.
//
// Idle workers wait last in, first out (the most recently used run next),
// at most maxIdleWorkers of them; those that stayed idle through a whole
// workerIdlePeriod (the loop's tick checks) exit, so a burst leaves no
// standing crowd. Closing the server releases the idle ones, and a busy one
// exits when its request ends.
type workers struct {
	mu       sync.Mutex
	idle     []*worker
	low      int // fewest idle since the last trim: idle[:low] stayed idle all period
	lastTrim int64
	closed   bool
}

// worker is one goroutine's mailbox: a request to run, or nil to exit.
type worker struct{ next chan job }

// job is a request to run (a *stdRequest; an interface for tests).
type job interface{ run() }

const (
	maxIdleWorkers   = 1024 // per loop
	workerIdlePeriod = time.Second
)

// run runs j on an idle worker, or on a new one.
func (ws *workers) run(j job) {
	ws.mu.Lock()
	if n := len(ws.idle); n > 0 {
		w := ws.idle[n-1]
		ws.idle[n-1] = nil
		ws.idle = ws.idle[:n-1]
		ws.low = min(ws.low, n-1)
		ws.mu.Unlock()
		w.next <- j // buffered: never blocks
		return
	}
	ws.mu.Unlock()
	go ws.work(j)
}

func (ws *workers) work(j job) {
	w := &worker{next: make(chan job, 1)}
	for j != nil {
		j.run()
		j = nil // the request is done: keep nothing of it while idle
		if !ws.park(w) {
			return
		}
		j = <-w.next
	}
}

// park lists w as idle, unless the server closed or enough wait already.
func (ws *workers) park(w *worker) bool {
	ws.mu.Lock()
	defer ws.mu.Unlock()
	if ws.closed || len(ws.idle) >= maxIdleWorkers {
		return false
	}
	ws.idle = append(ws.idle, w)
	return true
}

// trim releases the workers idle since the last trim, once a period has
// passed; on the loop's tick.
func (ws *workers) trim(now int64) {
	ws.mu.Lock()
	defer ws.mu.Unlock()
	if now-ws.lastTrim < int64(workerIdlePeriod) {
		return
	}
	ws.lastTrim = now
	k := min(ws.low, len(ws.idle))
	for _, w := range ws.idle[:k] {
		w.next <- nil
	}
	n := copy(ws.idle, ws.idle[k:])
	clear(ws.idle[n:])
	ws.idle = ws.idle[:n]
	ws.low = n
}

// close releases every idle worker and keeps busy ones from parking.
func (ws *workers) close() {
	ws.mu.Lock()
	defer ws.mu.Unlock()
	ws.closed = true
	for _, w := range ws.idle {
		w.next <- nil
	}
	clear(ws.idle)
	ws.idle, ws.low = ws.idle[:0], 0
}

// idleCount is for tests.
func (ws *workers) idleCount() int {
	ws.mu.Lock()
	defer ws.mu.Unlock()
	return len(ws.idle)
}

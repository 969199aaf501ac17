// Package asyncq is the queue other goroutines write to for a socket served
// by a loop: engine.Conn's AsyncWrite and package packet's off-loop WriteTo
// share it, so both keep the same order, bound and close rules.
package asyncq

import (
	"sync"

	"github.com/ringloop/ringloop/internal/loopctl"
)

// MaxIdleBuffer caps the buffers a socket keeps between bursts (an outbound
// buffer, an async queue's spare): steady traffic allocates nothing, and an
// idle socket holds no more than this each.
const MaxIdleBuffer = 256 << 10

// Queue is what other goroutines append to: bytes under Mu, and one drain
// per batch queued on the loop's control ring, which is unbounded but so
// holds at most one drain per queue.
type Queue struct {
	Mu     sync.Mutex
	Buf    []byte // accepted, not yet moved to the loop's side
	Spare  []byte // the previous Buf, reused by the next batch
	Cost   int    // what Buf counts against the limit where not len(Buf)
	Queued bool   // a drain is queued on the loop
	Err    error  // non-nil once closing: what writes return
	// MaxIdle, when set, replaces MaxIdleBuffer for Spare (a datagram
	// socket keeps up to its write limit: see package packet).
	MaxIdle int
}

// Queue ends an append: it is called with Mu held, releases it, and asks l
// to run drain for the first append of a batch. Only a loop past its
// shutdown refuses, and by then its close has taken the bytes (Err is set)
// or will drop them, reporting it; if none took them, nobody will send
// them: Queue drops them and returns the refusal.
func (q *Queue) Queue(l loopctl.Loop, drain interface{ Run() }) error {
	first := !q.Queued
	q.Queued = true
	q.Mu.Unlock()
	if !first {
		return nil
	}
	err := loopctl.Run(l, drain)
	if err == nil {
		return nil
	}
	q.Mu.Lock()
	defer q.Mu.Unlock()
	if q.Err != nil {
		return nil
	}
	q.Buf, q.Cost, q.Queued = q.Buf[:0], 0, false
	return err
}

// Take returns the accepted bytes and, when closeErr is non-nil, makes
// writes refuse from now on with it (on the loop).
func (q *Queue) Take(closeErr error) []byte {
	q.Mu.Lock()
	defer q.Mu.Unlock()
	if closeErr != nil && q.Err == nil {
		q.Err = closeErr
	}
	b := q.Buf
	q.Buf, q.Spare, q.Cost, q.Queued = q.Spare[:0], nil, 0, false
	return b
}

// Recycle keeps b, which Take returned, for the next batch unless it grew
// past MaxIdleBuffer (or MaxIdle).
func (q *Queue) Recycle(b []byte) {
	if cap(b) > max(MaxIdleBuffer, q.MaxIdle) {
		return
	}
	q.Mu.Lock()
	if q.Spare == nil {
		q.Spare = b[:0]
	}
	q.Mu.Unlock()
}

package client

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ringloop/ringloop/bench/stats"
)

// OpenLoopConfig is one open-loop run: requests arrive at Rate per second in
// total, spread evenly over Conns keep-alive connections, whatever the server
// does; a request's latency runs from the time it was due, not the time it
// could be sent, so a stalled server is charged for the requests queued
// behind the stall (no coordinated omission).
type OpenLoopConfig struct {
	Addr     string
	Conns    int
	Rate     float64 // requests per second, all connections together
	Warmup   time.Duration
	Duration time.Duration
}

// OpenLoopResult is what an open-loop run measured over its window.
type OpenLoopResult struct {
	Target   float64       `json:"target_rps"`
	Achieved float64       `json:"achieved_rps"` // the window's responses per second until the last arrived
	Reqs     int64         `json:"reqs"`
	Total    int64         `json:"total_reqs"`
	Seconds  float64       `json:"seconds"`
	Latency  stats.Latency `json:"latency"`
}

// RunOpenLoop drives an HTTP plaintext server at a constant arrival rate.
func RunOpenLoop(ctx context.Context, c OpenLoopConfig) (OpenLoopResult, error) {
	if c.Conns <= 0 || c.Rate <= 0 {
		return OpenLoopResult{}, fmt.Errorf("open loop: need conns and rate > 0, have %d and %g", c.Conns, c.Rate)
	}
	conns, err := dialAll(ctx, "open loop", c.Addr, c.Conns, nil)
	if err != nil {
		return OpenLoopResult{}, err
	}
	defer closeAll(conns)
	interval := time.Duration(float64(time.Second) * float64(c.Conns) / c.Rate) // per connection
	rec := stats.NewRecorder()
	var reqs, total, lastDone atomic.Int64
	start := time.Now()
	from, until := start.Add(c.Warmup), start.Add(c.Warmup+c.Duration)
	errs := make(chan error, c.Conns)
	var wg sync.WaitGroup
	for i, cn := range conns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if deadline, ok := ctx.Deadline(); ok {
				_ = cn.SetDeadline(deadline)
			}
			r := newReader(cn)
			// Stagger the connections across one interval.
			due := start.Add(interval * time.Duration(i) / time.Duration(c.Conns))
			for ; due.Before(until); due = due.Add(interval) {
				if wait := time.Until(due); wait > 0 {
					time.Sleep(wait)
				}
				if _, err := cn.Write([]byte(PlaintextRequest)); err != nil {
					errs <- err
					return
				}
				resp, err := ReadResponse(r)
				if err == nil {
					err = CheckPlaintext(resp)
				}
				if err != nil {
					errs <- fmt.Errorf("open loop: connection %d: %w", i, err)
					return
				}
				done := time.Now()
				total.Add(1)
				if !due.Before(from) {
					reqs.Add(1)
					rec.Record(done.Sub(due))
					for t := done.UnixNano(); ; {
						if old := lastDone.Load(); old >= t || lastDone.CompareAndSwap(old, t) {
							break
						}
					}
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	if err := errors.Join(collect(errs)...); err != nil {
		return OpenLoopResult{}, err
	}
	r := OpenLoopResult{Target: c.Rate, Reqs: reqs.Load(), Total: total.Load(), Seconds: c.Duration.Seconds(), Latency: rec.Summary()}
	// A server slower than the rate finishes the window's requests late:
	// the achieved rate counts the time it took.
	if span := time.Unix(0, lastDone.Load()).Sub(from).Seconds(); r.Reqs > 0 && span > 0 {
		r.Achieved = float64(r.Reqs) / max(span, r.Seconds)
	}
	return r, nil
}

package client

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ringloop/ringloop/bench/stats"
)

// BroadcastConfig is one broadcast run: Conns WebSocket connections join
// the server's room on Path; the first also sends, Size-byte messages, each
// broadcast by the server to every member (the sender too).
type BroadcastConfig struct {
	Addr     string
	Path     string
	Conns    int
	Size     int // at least 16: a sequence number and the send time
	Window   int // messages in flight: the next waits until every member has the one Window back
	Warmup   time.Duration
	Duration time.Duration
}

// broadcastProbe marks a join probe: sent until every member has seen
// one, so no member joins after the measured messages begin.
const broadcastProbe = ^uint64(0)

// RunBroadcast measures delivered messages per second and the latency of
// each delivery, from the send time the payload carries (one clock: sender
// and receivers share this process) to its arrival at each member. The
// result is an EchoResult: Msgs and Rate count deliveries of messages sent
// in the measured window; Total counts every delivery.
func RunBroadcast(ctx context.Context, c BroadcastConfig) (EchoResult, error) {
	if c.Conns <= 0 || c.Size < 16 {
		return EchoResult{}, fmt.Errorf("broadcast: need conns > 0 and size >= 16, have %d and %d", c.Conns, c.Size)
	}
	c.Window = max(c.Window, 1)
	conns, err := dialAll(ctx, "broadcast", c.Addr, c.Conns, func(cn net.Conn) (net.Conn, error) {
		ws, err := wsHandshake(cn, c.Path)
		if err != nil {
			cn.Close()
		}
		return ws, err
	})
	if err != nil {
		return EchoResult{}, err
	}
	defer closeAll(conns)

	start := time.Now()
	var from, until time.Time // set once every member has joined
	var window atomic.Pointer[[2]time.Time]
	rec := stats.NewRecorder()
	var measured, total atomic.Int64
	var joined atomic.Int64
	joinedAll := make(chan struct{})
	counts := make([]atomic.Int64, c.Window)
	done := make(chan uint64, c.Window*2)
	n := int64(c.Conns)
	var wg sync.WaitGroup
	for _, cn := range conns {
		ws := cn.(*wsConn)
		if deadline, ok := ctx.Deadline(); ok {
			_ = ws.SetDeadline(deadline)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			buf := make([]byte, c.Size)
			seen := false
			for {
				p, err := ws.readMessage(buf)
				if err != nil || len(p) < 16 {
					return
				}
				seq := binary.LittleEndian.Uint64(p)
				if seq == broadcastProbe {
					if !seen {
						seen = true
						if joined.Add(1) == n {
							close(joinedAll)
						}
					}
					continue
				}
				sent := start.Add(time.Duration(binary.LittleEndian.Uint64(p[8:])))
				total.Add(1)
				if w := window.Load(); w != nil && !sent.Before(w[0]) && sent.Before(w[1]) {
					measured.Add(1)
					rec.Record(time.Since(sent))
				}
				if counts[seq%uint64(c.Window)].Add(1) == n {
					done <- seq
				}
			}
		}()
	}

	sender := conns[0]
	msg := make([]byte, c.Size)
	send := func(seq uint64) error {
		binary.LittleEndian.PutUint64(msg, seq)
		binary.LittleEndian.PutUint64(msg[8:], uint64(time.Since(start)))
		_, err := sender.Write(msg)
		return err
	}
	// Join: probes until every member has seen one.
	for joining := true; joining; {
		if err := send(broadcastProbe); err != nil {
			return EchoResult{}, fmt.Errorf("broadcast: send: %w", err)
		}
		select {
		case <-joinedAll:
			joining = false
		case <-time.After(50 * time.Millisecond):
		case <-ctx.Done():
			return EchoResult{}, fmt.Errorf("broadcast: %d of %d members joined: %w", joined.Load(), n, ctx.Err())
		}
	}
	from = time.Now().Add(c.Warmup)
	until = from.Add(c.Duration)
	window.Store(&[2]time.Time{from, until})

	// Closed loop: the next message waits until every member has the one
	// Window back, so no member falls behind by more than Window messages.
	complete := make([]bool, c.Window)
	wait := func(seq uint64) error {
		slot := seq % uint64(c.Window)
		for !complete[slot] {
			select {
			case s := <-done:
				complete[s%uint64(c.Window)] = true
			case <-time.After(30 * time.Second):
				return fmt.Errorf("broadcast: message %d reached %d of %d members in 30 s (a member dropped?)", seq, counts[slot].Load(), n)
			}
		}
		complete[slot] = false
		counts[slot].Store(0)
		return nil
	}
	var seq uint64
	for ; time.Now().Before(until); seq++ {
		if seq >= uint64(c.Window) {
			if err := wait(seq - uint64(c.Window)); err != nil {
				return EchoResult{}, err
			}
		}
		if err := send(seq); err != nil {
			return EchoResult{}, fmt.Errorf("broadcast: send: %w", err)
		}
	}
	for s := seq - min(seq, uint64(c.Window)); s < seq; s++ {
		if err := wait(s); err != nil {
			return EchoResult{}, err
		}
	}
	closeAll(conns)
	wg.Wait()
	if measured.Load() == 0 {
		return EchoResult{}, errors.New("broadcast: no delivery in the measured window")
	}
	r := EchoResult{Msgs: measured.Load(), Total: total.Load(), Seconds: c.Duration.Seconds(), Latency: rec.Summary()}
	r.Rate = float64(r.Msgs) / r.Seconds
	return r, nil
}

// Package client holds the load generators: the echo ping-pong client, the
// open-loop HTTP latency client, the idle-connection holder, and the wrk
// runner with its output parser.
package client

import (
	"context"
	"crypto/sha256"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ringloop/ringloop/bench/stats"
)

// EchoConfig is one echo run: Conns connections, each writing Size bytes and
// reading them back, again and again, for Warmup then Duration.
type EchoConfig struct {
	Addr     string
	Conns    int
	Size     int
	Warmup   time.Duration
	Duration time.Duration
	// Verify varies every message and checks the SHA-256 of all bytes
	// received against all bytes sent, per connection; each connection then
	// exchanges at least one message, however late it starts.
	Verify bool
	// TLS speaks TLS 1.3 on every connection, the server's certificate
	// unchecked (a loopback benchmark). Handshakes finish before the
	// clock starts: the run measures record traffic, not handshakes.
	TLS bool
	// WebSocket upgrades every connection (path /echo) before the clock
	// starts; each message is then one masked binary frame, echoed as one.
	WebSocket bool
}

// EchoResult is what an echo run measured. Msgs and the latencies count the
// measured window only; Total counts warm-up too (costs divide by it).
type EchoResult struct {
	Msgs    int64         `json:"msgs"`
	Total   int64         `json:"total_msgs"`
	Seconds float64       `json:"seconds"`
	Rate    float64       `json:"msgs_per_sec"`
	Latency stats.Latency `json:"latency"`
	// Checked counts the messages whose echo was compared with what was
	// sent (Verify); Verified says every message of every connection was,
	// each connection had at least one, and all matched.
	Checked  int64 `json:"checked_msgs"`
	Verified bool  `json:"verified"`
}

// RunEcho drives an echo server and measures it.
func RunEcho(ctx context.Context, c EchoConfig) (EchoResult, error) {
	if c.Conns <= 0 || c.Size <= 0 {
		return EchoResult{}, fmt.Errorf("echo: need conns and size > 0, have %d and %d", c.Conns, c.Size)
	}
	var handshake func(net.Conn) (net.Conn, error)
	if c.TLS {
		handshake = func(cn net.Conn) (net.Conn, error) {
			tc := tls.Client(cn, &tls.Config{InsecureSkipVerify: true, MinVersion: tls.VersionTLS13})
			if err := tc.HandshakeContext(ctx); err != nil {
				cn.Close()
				return nil, fmt.Errorf("TLS handshake: %w", err)
			}
			return tc, nil
		}
	}
	if c.WebSocket {
		handshake = func(cn net.Conn) (net.Conn, error) {
			ws, err := wsHandshake(cn, "/echo")
			if err != nil {
				cn.Close()
				return nil, err
			}
			return ws, nil
		}
	}
	conns, err := dialAll(ctx, "echo", c.Addr, c.Conns, handshake) // every connection is up before the clock starts
	if err != nil {
		return EchoResult{}, err
	}
	defer closeAll(conns)
	rec := stats.NewRecorder()
	var measured, total, checked atomic.Int64
	var unchecked atomic.Int32 // connections that compared nothing
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
			n, err := pingPong(cn, i, c, from, until, rec, &measured, &total)
			if err != nil {
				errs <- fmt.Errorf("echo: connection %d: %w", i, err)
			}
			checked.Add(n)
			if n == 0 {
				unchecked.Add(1)
			}
		}()
	}
	wg.Wait()
	close(errs)
	if err := errors.Join(collect(errs)...); err != nil {
		return EchoResult{}, err
	}
	r := EchoResult{Msgs: measured.Load(), Total: total.Load(), Seconds: c.Duration.Seconds(), Latency: rec.Summary(), Checked: checked.Load()}
	r.Verified = c.Verify && unchecked.Load() == 0 && r.Checked == r.Total
	if r.Seconds > 0 {
		r.Rate = float64(r.Msgs) / r.Seconds
	}
	return r, nil
}

// pingPong runs one connection and returns how many messages it checked
// (Verify) against what it sent: all of them, or none when verification
// failed or was not asked for.
func pingPong(cn net.Conn, id int, c EchoConfig, from, until time.Time, rec *stats.Recorder, measured, total *atomic.Int64) (int64, error) {
	msg, buf := make([]byte, c.Size), make([]byte, c.Size)
	hs, hr := sha256.New(), sha256.New()
	var n int64
	for j := 0; ; j++ {
		if c.Verify {
			for k := range msg {
				msg[k] = byte(id + j + k)
			}
		}
		t := time.Now()
		if !t.Before(until) && (j > 0 || !c.Verify) {
			break
		}
		if _, err := cn.Write(msg); err != nil {
			return 0, err
		}
		if _, err := io.ReadFull(cn, buf); err != nil {
			return 0, err
		}
		done := time.Now()
		total.Add(1)
		if !t.Before(from) && t.Before(until) {
			measured.Add(1)
			rec.Record(done.Sub(t))
		}
		if c.Verify {
			hs.Write(msg)
			hr.Write(buf)
			n++
		}
	}
	if c.Verify && string(hs.Sum(nil)) != string(hr.Sum(nil)) {
		return 0, errors.New("echoed bytes differ from the bytes sent (SHA-256)")
	}
	return n, nil
}

func collect(errs <-chan error) []error {
	var out []error
	for err := range errs {
		out = append(out, err)
	}
	return out
}

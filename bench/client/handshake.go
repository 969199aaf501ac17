package client

import (
	"bytes"
	"context"
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

// HandshakeConfig is one handshake run: Dialers goroutines each dial,
// complete a full TLS 1.3 handshake, exchange one Size-byte echo and close,
// again and again, for Warmup then Duration.
type HandshakeConfig struct {
	Addr     string
	Dialers  int
	Size     int
	Warmup   time.Duration
	Duration time.Duration
}

// HandshakeResult is what a handshake run measured. Handshakes and the
// latencies (dial to echo received) count the measured window only; Total
// counts warm-up too (costs divide by it).
type HandshakeResult struct {
	Handshakes int64         `json:"handshakes"`
	Total      int64         `json:"total_handshakes"`
	Seconds    float64       `json:"seconds"`
	Rate       float64       `json:"handshakes_per_sec"`
	Latency    stats.Latency `json:"latency"`
}

// helloSize is the echo each connection makes when the config gives none.
const helloSize = 32

// RunHandshakes drives a TLS echo server with connections that live for one
// full handshake and one echo. Every connection gets a tls.Config of its
// own with no session cache, so no handshake resumes (a resumed one is an
// error), and the echo makes sure the server finished its side of the
// handshake (in TLS 1.3 the client is done a flight before the server).
func RunHandshakes(ctx context.Context, c HandshakeConfig) (HandshakeResult, error) {
	if c.Dialers <= 0 {
		return HandshakeResult{}, fmt.Errorf("handshake: need dialers > 0, have %d", c.Dialers)
	}
	if c.Size <= 0 {
		c.Size = helloSize
	}
	rec := stats.NewRecorder()
	var measured, total atomic.Int64
	start := time.Now()
	from, until := start.Add(c.Warmup), start.Add(c.Warmup+c.Duration)
	errs := make(chan error, c.Dialers)
	var wg sync.WaitGroup
	for i := range c.Dialers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			msg, buf := bytes.Repeat([]byte{byte('a' + i%26)}, c.Size), make([]byte, c.Size)
			for j := 0; ; j++ {
				t := time.Now()
				if !t.Before(until) && j > 0 { // every dialer completes one at least
					return
				}
				if err := oneHandshake(ctx, c.Addr, msg, buf); err != nil {
					errs <- fmt.Errorf("handshake: dialer %d, connection %d: %w", i, j+1, err)
					return
				}
				done := time.Now()
				total.Add(1)
				if !t.Before(from) && t.Before(until) {
					measured.Add(1)
					rec.Record(done.Sub(t))
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	if err := errors.Join(collect(errs)...); err != nil {
		return HandshakeResult{}, err
	}
	r := HandshakeResult{Handshakes: measured.Load(), Total: total.Load(), Seconds: c.Duration.Seconds(), Latency: rec.Summary()}
	if r.Seconds > 0 {
		r.Rate = float64(r.Handshakes) / r.Seconds
	}
	return r, nil
}

// oneHandshake dials addr, completes a full handshake, echoes msg (buf
// receives it) and closes with close_notify.
func oneHandshake(ctx context.Context, addr string, msg, buf []byte) error {
	var d net.Dialer
	cn, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return err
	}
	defer cn.Close()
	if deadline, ok := ctx.Deadline(); ok {
		_ = cn.SetDeadline(deadline)
	}
	tc := tls.Client(cn, freshClientConfig())
	if err := tc.HandshakeContext(ctx); err != nil {
		return fmt.Errorf("TLS handshake: %w", err)
	}
	if tc.ConnectionState().DidResume {
		return errors.New("the handshake resumed a session: not a full handshake")
	}
	if _, err := tc.Write(msg); err != nil {
		return err
	}
	if _, err := io.ReadFull(tc, buf); err != nil {
		return err
	}
	if !bytes.Equal(msg, buf) {
		return errors.New("echoed bytes differ from the bytes sent")
	}
	return tc.Close()
}

// freshClientConfig is a TLS 1.3 client configuration shared with no other
// connection and with no session cache: every handshake is a full one.
// The certificate is not checked (a loopback benchmark).
func freshClientConfig() *tls.Config {
	return &tls.Config{InsecureSkipVerify: true, MinVersion: tls.VersionTLS13}
}

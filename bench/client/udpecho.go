package client

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"os"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/ringloop/ringloop/bench/stats"
)

// UDPEchoConfig is one UDP echo run: Sockets client sockets, each keeping
// InFlight datagrams of Size bytes out at the server and sending the next
// as each comes back, for Warmup then Duration.
type UDPEchoConfig struct {
	Addr     string
	Sockets  int
	InFlight int
	Size     int // at least udpHeader bytes: each datagram carries its number and send time
	Warmup   time.Duration
	Duration time.Duration
	// LossAfter is how long a datagram may stay unanswered before it is
	// counted lost and replaced, so a loss does not shrink the window for
	// good (default 200 ms: far beyond any echo's latency here).
	LossAfter time.Duration
	// Verify fills every datagram with bytes of its own and checks each
	// echo byte for byte (off in measured runs: it costs the client CPU).
	Verify bool
}

// UDPEchoResult is what a UDP echo run measured. Msgs and the latencies
// count the measured window; Total, Sent, Lost and Late the whole run,
// warm-up included (costs divide by Total).
type UDPEchoResult struct {
	Msgs    int64         `json:"msgs"`
	Total   int64         `json:"total_msgs"` // echoes received in time
	Sent    int64         `json:"sent"`
	Lost    int64         `json:"lost"` // never came back
	Late    int64         `json:"late"` // came back after LossAfter, already replaced (not lost)
	Seconds float64       `json:"seconds"`
	Rate    float64       `json:"msgs_per_sec"`
	Latency stats.Latency `json:"latency"`
	// RcvbufErrors is the rise of the kernel's Udp RcvbufErrors
	// (/proc/net/snmp) over the run, -1 when unreadable: datagrams a full
	// receive buffer dropped, the server's or the client's (and any other
	// UDP socket's on the host).
	RcvbufErrors int64 `json:"rcvbuf_errors"`
	Verified     bool  `json:"verified"` // Verify asked and every echo matched
}

// udpHeader is the bytes each datagram starts with: its number, then its
// send time (ns since the run's start).
const udpHeader = 16

// RunUDPEcho drives a UDP echo server and measures it.
func RunUDPEcho(ctx context.Context, c UDPEchoConfig) (UDPEchoResult, error) {
	if c.Sockets <= 0 || c.InFlight <= 0 || c.Size < udpHeader {
		return UDPEchoResult{}, fmt.Errorf("udp echo: need sockets, in flight > 0 and size >= %d, have %d, %d and %d", udpHeader, c.Sockets, c.InFlight, c.Size)
	}
	if c.LossAfter <= 0 {
		c.LossAfter = 200 * time.Millisecond
	}
	raddr, err := net.ResolveUDPAddr("udp", c.Addr)
	if err != nil {
		return UDPEchoResult{}, err
	}
	conns := make([]*net.UDPConn, 0, c.Sockets)
	defer func() {
		for _, cn := range conns {
			cn.Close()
		}
	}()
	for i := range c.Sockets {
		cn, err := net.DialUDP("udp", nil, raddr)
		if err != nil {
			return UDPEchoResult{}, fmt.Errorf("udp echo: socket %d of %d: %w", i+1, c.Sockets, err)
		}
		conns = append(conns, cn)
	}
	snmp0, snmpErr := ReadRcvbufErrors()
	rec := stats.NewRecorder()
	var res udpCounts
	start := time.Now()
	w := udpWindow{c: c, start: start, from: start.Add(c.Warmup), until: start.Add(c.Warmup + c.Duration), rec: rec, counts: &res}
	if deadline, ok := ctx.Deadline(); ok && deadline.Before(w.until.Add(c.LossAfter)) {
		return UDPEchoResult{}, errors.New("udp echo: the context ends before the run")
	}
	errs := make(chan error, c.Sockets)
	var wg sync.WaitGroup
	for i, cn := range conns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := w.run(ctx, cn); err != nil {
				errs <- fmt.Errorf("udp echo: socket %d: %w", i, err)
			}
		}()
	}
	wg.Wait()
	close(errs)
	if err := errors.Join(collect(errs)...); err != nil {
		return UDPEchoResult{}, err
	}
	r := UDPEchoResult{Msgs: res.measured.Load(), Total: res.total.Load(), Sent: res.sent.Load(), Lost: res.lost.Load(), Late: res.late.Load(),
		Seconds: c.Duration.Seconds(), Latency: rec.Summary(), RcvbufErrors: -1, Verified: c.Verify}
	if snmp1, err := ReadRcvbufErrors(); err == nil && snmpErr == nil {
		r.RcvbufErrors = snmp1 - snmp0
	}
	if r.Seconds > 0 {
		r.Rate = float64(r.Msgs) / r.Seconds
	}
	return r, nil
}

// udpCounts are a run's counters, summed over its sockets.
type udpCounts struct{ measured, total, sent, lost, late atomic.Int64 }

// udpWindow is what every socket of a run shares.
type udpWindow struct {
	c                  UDPEchoConfig
	start, from, until time.Time
	rec                *stats.Recorder
	counts             *udpCounts
}

// slot is a datagram out at the server.
type slot struct {
	seq  uint64
	sent time.Time
}

// run keeps c.InFlight datagrams out on cn until the window ends, then
// waits up to 5 × LossAfter for those still out; what never comes back is
// lost.
func (w *udpWindow) run(ctx context.Context, cn *net.UDPConn) error {
	c := w.c
	msg, buf := make([]byte, c.Size), make([]byte, c.Size+1) // one more: a longer echo shows
	out := make([]slot, 0, c.InFlight)
	var seq uint64
	send := func(now time.Time) error {
		binary.LittleEndian.PutUint64(msg, seq)
		binary.LittleEndian.PutUint64(msg[8:], uint64(now.Sub(w.start)))
		if c.Verify {
			fill(msg[udpHeader:], seq)
		}
		if _, err := cn.Write(msg); err != nil {
			return err
		}
		out = append(out, slot{seq, now})
		seq++
		w.counts.sent.Add(1)
		return nil
	}
	now := time.Now()
	for range c.InFlight {
		if err := send(now); err != nil {
			return err
		}
	}
	check := c.LossAfter / 4 // how often the unanswered are looked over
	next := now.Add(check)
	if err := cn.SetReadDeadline(next); err != nil {
		return err
	}
	// got takes an echo received at now: it answers a datagram out, which
	// the next one replaces while the window lasts.
	got := func(b []byte, now time.Time) error {
		i, err := w.answer(b, out)
		if err != nil || i < 0 {
			return err
		}
		w.counts.total.Add(1)
		if s := out[i].sent; !s.Before(w.from) && s.Before(w.until) {
			w.counts.measured.Add(1)
			w.rec.Record(now.Sub(s))
		}
		out[i] = out[len(out)-1]
		out = out[:len(out)-1]
		if now.Before(w.until) {
			return send(now)
		}
		return nil
	}
	rc, err := cn.SyscallConn()
	if err != nil {
		return err
	}
	for len(out) > 0 {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		n, err := cn.Read(buf)
		now = time.Now()
		if err != nil {
			var ne net.Error
			if !errors.As(err, &ne) || !ne.Timeout() {
				return err
			}
		} else if err := got(buf[:n], now); err != nil {
			return err
		}
		if now.Before(next) {
			continue
		}
		// Take what the socket holds first: a datagram waiting in this
		// client's own buffer (its goroutine was not scheduled) is not
		// lost. Then the overdue are lost, and replaced while the window
		// lasts.
		if err := cn.SetReadDeadline(time.Time{}); err != nil { // a passed deadline fails raw reads too
			return err
		}
		if err := drain(rc, buf, got); err != nil {
			return err
		}
		now = time.Now()
		next = now.Add(check)
		if err := cn.SetReadDeadline(next); err != nil {
			return err
		}
		// Once the window is over nothing is replaced: the last datagrams
		// get five times as long before they count as lost (a server
		// descheduled for a while is slow, not lossy).
		limit := c.LossAfter
		if !now.Before(w.until) {
			limit *= 5
		}
		for i := 0; i < len(out); {
			if now.Sub(out[i].sent) < limit {
				i++
				continue
			}
			w.counts.lost.Add(1)
			out[i] = out[len(out)-1]
			out = out[:len(out)-1]
			if now.Before(w.until) {
				if err := send(now); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// drain hands got every datagram the socket holds now, without waiting.
func drain(rc syscall.RawConn, buf []byte, got func([]byte, time.Time) error) error {
	for {
		var n int
		var rerr error
		if err := rc.Read(func(fd uintptr) bool {
			n, rerr = unix.Read(int(fd), buf) // the socket is non-blocking: EAGAIN when empty
			return true
		}); err != nil {
			return err
		}
		if rerr == unix.EAGAIN {
			return nil
		}
		if rerr != nil {
			return rerr
		}
		if err := got(buf[:n], time.Now()); err != nil {
			return err
		}
	}
}

// answer finds the datagram b echoes among out: its index, or -1 for one
// already counted lost (then counted late instead).
func (w *udpWindow) answer(b []byte, out []slot) (int, error) {
	if len(b) != w.c.Size {
		return -1, fmt.Errorf("echo of %d bytes, sent %d", len(b), w.c.Size)
	}
	seq := binary.LittleEndian.Uint64(b)
	for i, s := range out {
		if s.seq != seq {
			continue
		}
		if sent := binary.LittleEndian.Uint64(b[8:]); sent != uint64(s.sent.Sub(w.start)) {
			return -1, fmt.Errorf("datagram %d: echo carries another send time", seq)
		}
		if w.c.Verify && !filled(b[udpHeader:], seq) {
			return -1, fmt.Errorf("datagram %d: echoed bytes differ from the bytes sent", seq)
		}
		return i, nil
	}
	w.counts.late.Add(1)
	w.counts.lost.Add(-1)
	return -1, nil
}

// fill writes datagram seq's own bytes into b.
func fill(b []byte, seq uint64) {
	for k := range b {
		b[k] = byte(seq*7 + uint64(k))
	}
}

// filled reports whether b holds datagram seq's bytes.
func filled(b []byte, seq uint64) bool {
	for k := range b {
		if b[k] != byte(seq*7+uint64(k)) {
			return false
		}
	}
	return true
}

// ReadRcvbufErrors reads the kernel's Udp RcvbufErrors counter from
// /proc/net/snmp: datagrams dropped because a socket's receive buffer was
// full (every UDP socket of the network namespace).
func ReadRcvbufErrors() (int64, error) {
	b, err := os.ReadFile("/proc/net/snmp")
	if err != nil {
		return 0, err
	}
	return ParseRcvbufErrors(string(b))
}

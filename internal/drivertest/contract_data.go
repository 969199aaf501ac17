package drivertest

import (
	"bytes"
	"crypto/sha256"
	"errors"
	"io"
	"math/rand/v2"
	"net"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// randomBytes returns n deterministic pseudo-random bytes.
func randomBytes(seed uint64, n int) []byte {
	r := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	p := make([]byte, n)
	for i := 0; i+8 <= n; i += 8 {
		v := r.Uint64()
		for j := 0; j < 8; j++ {
			p[i+j] = byte(v >> (8 * j))
		}
	}
	for i := n &^ 7; i < n; i++ {
		p[i] = byte(r.Uint32())
	}
	return p
}

// testRecvChecksum: a peer writes thousands of small writes and then large
// ones; the multishot receive sees every byte (SHA-256 equal), each
// intermediate completion has Res == len(Data) > 0, and the peer's FIN ends
// the receive with Res 0.
func testRecvChecksum(t *testing.T, e *Env) {
	h := e.New(t)
	fd, peer := TCPPair(t)
	h.Own(fd)
	peer.SetNoDelay(true)
	small := 2000
	if raceEnabled {
		small = 500
	}
	r := rand.New(rand.NewPCG(1, 2))
	var chunks [][]byte
	for i := 0; i < small; i++ {
		chunks = append(chunks, randomBytes(uint64(i), 1+r.IntN(200)))
	}
	for i, n := range []int{1 << 20, 3<<20 + 17, 65537, 1} {
		chunks = append(chunks, randomBytes(uint64(10000+i), n))
	}
	want := sha256.New()
	total := 0
	for _, c := range chunks {
		want.Write(c)
		total += len(c)
	}
	errc := make(chan error, 1)
	go func() {
		for _, c := range chunks {
			if _, err := peer.Write(c); err != nil {
				errc <- err
				return
			}
		}
		errc <- peer.CloseWrite()
	}()
	got := sha256.New()
	op := h.Recv(fd, func(p []byte) { got.Write(p) })
	h.Until(60*time.Second, "receive to EOF", func() bool { return op.Done })
	if err := <-errc; err != nil {
		t.Fatalf("peer: %v", err)
	}
	if op.Res != 0 {
		t.Fatalf("receive ended with %s, want 0 (EOF)", ErrnoRes(op.Res))
	}
	if op.Bytes != int64(total) || !bytes.Equal(got.Sum(nil), want.Sum(nil)) {
		t.Fatalf("received %d bytes (sha %x), sent %d (sha %x)", op.Bytes, got.Sum(nil), total, want.Sum(nil))
	}
}

// testRecvReset: a peer that resets the connection ends the receive with
// -ECONNRESET.
func testRecvReset(t *testing.T, e *Env) {
	h := e.New(t)
	fd, peer := TCPPair(t)
	h.Own(fd)
	op := h.Recv(fd, nil)
	h.Wait(0)
	peer.SetLinger(0)
	peer.Close()
	h.Until(0, "receive ended by reset", func() bool { return op.Done })
	if op.Res != -int32(unix.ECONNRESET) {
		t.Fatalf("receive after reset ended with %s, want -ECONNRESET", ErrnoRes(op.Res))
	}
}

// slowReader reads exactly n bytes from c in small reads and returns their
// hash.
func slowReader(c net.Conn, n int, out chan<- []byte, errc chan<- error) {
	h := sha256.New()
	buf := make([]byte, 4096)
	for n > 0 {
		m := len(buf)
		if m > n {
			m = n
		}
		k, err := c.Read(buf[:m])
		h.Write(buf[:k])
		n -= k
		if err != nil {
			errc <- err
			return
		}
	}
	out <- h.Sum(nil)
}

// testSendPartialLarge: 8 MiB in one Send to a slow reader through small
// socket buffers completes with Res == len(p), continuing after partial
// writes; then sends of other sizes, one at a time; the reader's SHA-256
// equals the sender's. The buffers (64 KiB send, 128 KiB receive) are small
// against 8 MiB but not against loopback's 64 KiB MSS: below that, TCP
// itself stalls on delayed ACKs, which would test TCP, not the driver.
func testSendPartialLarge(t *testing.T, e *Env) {
	h := e.New(t)
	fd, peer := TCPPair(t)
	h.Own(fd)
	SetBuffers(t, fd, 64<<10, 0)
	peer.SetReadBuffer(128 << 10)
	bufs := [][]byte{randomBytes(7, 8<<20), randomBytes(8, 1), randomBytes(9, 100<<10+3), {}, randomBytes(10, 1<<20)}
	want := sha256.New()
	total := 0
	for _, b := range bufs {
		want.Write(b)
		total += len(b)
	}
	sum, errc := make(chan []byte, 1), make(chan error, 1)
	go slowReader(peer, total, sum, errc)
	for i, b := range bufs {
		s := h.Send(fd, b)
		h.Until(60*time.Second, "send", func() bool { return s.Done })
		if s.Res != int32(len(b)) {
			t.Fatalf("send %d of %d bytes: %s", i, len(b), ErrnoRes(s.Res))
		}
	}
	select {
	case got := <-sum:
		if !bytes.Equal(got, want.Sum(nil)) {
			t.Fatalf("peer read sha %x, sent %x", got, want.Sum(nil))
		}
	case err := <-errc:
		t.Fatalf("peer: %v", err)
	case <-time.After(30 * time.Second):
		t.Fatal("peer did not read everything")
	}
}

// testSendEmpty: a Send of no bytes completes with Res 0.
func testSendEmpty(t *testing.T, e *Env) {
	h := e.New(t)
	fd, _ := TCPPair(t)
	h.Own(fd)
	s := h.Send(fd, nil)
	h.Until(0, "empty send", func() bool { return s.Done })
	if s.Res != 0 {
		t.Fatalf("empty send: %s, want 0", ErrnoRes(s.Res))
	}
}

// testEchoFromCallbacks: the driver echoes what it receives, arming each
// Send from inside the Wait callback (as an engine does), one send in
// flight at a time; the peer gets back exactly what it sent.
func testEchoFromCallbacks(t *testing.T, e *Env) {
	h := e.New(t)
	fd, peer := TCPPair(t)
	h.Own(fd)
	total := 2 << 20
	if raceEnabled {
		total = 1 << 20
	}
	data := randomBytes(42, total)
	var queued []byte // received, not yet handed to a Send
	var inflight *Op
	var send func()
	send = func() {
		if inflight != nil || len(queued) == 0 {
			return
		}
		p := queued
		queued = nil
		inflight = h.Send(fd, p)
		inflight.OnFinal = func(op *Op) {
			if op.Res != int32(op.Len) {
				t.Errorf("echo send: %s", ErrnoRes(op.Res))
			}
			inflight = nil
			send()
		}
	}
	rop := h.Recv(fd, func(p []byte) {
		queued = append(queued, p...)
		send()
	})
	errc := make(chan error, 2)
	go func() {
		r := rand.New(rand.NewPCG(3, 4))
		for off := 0; off < total; {
			n := 1 + r.IntN(64<<10)
			if off+n > total {
				n = total - off
			}
			if _, err := peer.Write(data[off : off+n]); err != nil {
				errc <- err
				return
			}
			off += n
		}
		errc <- peer.CloseWrite()
	}()
	back := make([]byte, 0, total)
	go func() {
		buf := make([]byte, 64<<10)
		for {
			n, err := peer.Read(buf)
			back = append(back, buf[:n]...)
			if err != nil {
				if errors.Is(err, io.EOF) {
					err = nil
				}
				errc <- err
				return
			}
		}
	}()
	h.Until(60*time.Second, "echo to EOF", func() bool { return rop.Done && inflight == nil && len(queued) == 0 })
	if rop.Res != 0 {
		t.Fatalf("echo receive ended with %s", ErrnoRes(rop.Res))
	}
	if err := <-errc; err != nil {
		t.Fatalf("peer writer: %v", err)
	}
	unix.Shutdown(fd, unix.SHUT_WR)
	if err := <-errc; err != nil {
		t.Fatalf("peer reader: %v", err)
	}
	if !bytes.Equal(back, data) {
		t.Fatalf("echoed %d bytes, sent %d; contents differ", len(back), len(data))
	}
}

// testRecvRearm: bytes that arrive while no receive is armed (after a
// Cancel, as an engine pausing reads does) reach the next Recv, though no
// new data arrives to announce them.
func testRecvRearm(t *testing.T, e *Env) {
	h := e.New(t)
	fd, peer := TCPPair(t)
	h.Own(fd)
	var got []byte
	collect := func(p []byte) { got = append(got, p...) }
	r := h.Recv(fd, collect)
	peer.Write([]byte("one"))
	h.Until(0, "first bytes", func() bool { return len(got) == 3 })
	h.Cancel(r)
	h.Until(0, "cancel", func() bool { return r.Done })
	peer.Write([]byte("two"))
	h.Wait(5 * time.Millisecond) // the bytes arrive with nothing armed
	for i := 0; i < 3; i++ {
		r = h.Recv(fd, collect)
		want := "onetwo" + strings.Repeat("x", i)
		h.Until(0, "bytes that arrived while paused", func() bool { return len(got) == len(want) })
		if string(got) != want {
			t.Fatalf("got %q, want %q", got, want)
		}
		h.Cancel(r)
		h.Until(0, "cancel", func() bool { return r.Done })
		peer.Write([]byte("x"))
		h.Wait(2 * time.Millisecond)
	}
}

// testSendToResetPeer: sends to a peer that reset the connection end with
// an error (-EPIPE or -ECONNRESET), not a signal that kills the process.
func testSendToResetPeer(t *testing.T, e *Env) {
	h := e.New(t)
	fd, peer := TCPPair(t)
	h.Own(fd)
	peer.SetLinger(0)
	peer.Close()
	p := make([]byte, 64<<10)
	for i := 0; ; i++ {
		s := h.Send(fd, p)
		h.Until(0, "send to a reset peer", func() bool { return s.Done })
		if s.Res < 0 {
			if s.Res != -int32(unix.EPIPE) && s.Res != -int32(unix.ECONNRESET) {
				t.Fatalf("send to a reset peer: %s, want -EPIPE or -ECONNRESET", ErrnoRes(s.Res))
			}
			return
		}
		if i == 10 {
			t.Fatal("sends to a reset peer keep succeeding")
		}
	}
}

// echoConn echoes what a Recv gets on fd with one Send in flight at a time,
// as an engine's write path does, arming sends from inside the callback.
type echoConn struct {
	h        *Harness
	fd       int
	queued   []byte
	inflight *Op
	recv     *Op
	failed   int32
}

func newEchoConn(h *Harness, fd int) *echoConn {
	c := &echoConn{h: h, fd: fd}
	c.recv = h.Recv(fd, func(p []byte) {
		c.queued = append(c.queued, p...)
		c.send()
	})
	return c
}

func (c *echoConn) send() {
	if c.inflight != nil || len(c.queued) == 0 {
		return
	}
	p := c.queued
	c.queued = nil
	c.inflight = c.h.Send(c.fd, p)
	c.inflight.OnFinal = func(op *Op) {
		if op.Res != int32(op.Len) {
			c.failed = op.Res
		}
		c.inflight = nil
		c.send()
	}
}

func (c *echoConn) idle() bool { return c.inflight == nil && len(c.queued) == 0 }

// testManyConnsEcho: 64 connections stream through the driver at once, each
// echoed from callbacks; every peer gets back exactly what it sent. This
// keeps many receives busy together (a driver's receive buffers run short).
func testManyConnsEcho(t *testing.T, e *Env) {
	h := e.New(t)
	conns, size := 64, 256<<10
	if raceEnabled {
		conns, size = 32, 128<<10
	}
	echoes := make([]*echoConn, conns)
	errc := make(chan error, conns)
	for i := range echoes {
		fd, peer := TCPPair(t)
		h.Own(fd)
		echoes[i] = newEchoConn(h, fd)
		data := randomBytes(uint64(100+i), size)
		go func() {
			werr := make(chan error, 1)
			go func() {
				r := rand.New(rand.NewPCG(uint64(i), 5))
				for off := 0; off < size; {
					n := min(1+r.IntN(32<<10), size-off)
					if _, err := peer.Write(data[off : off+n]); err != nil {
						werr <- err
						return
					}
					off += n
				}
				werr <- nil
			}()
			back := make([]byte, size)
			_, err := io.ReadFull(peer, back)
			if err == nil {
				err = <-werr
			}
			if err == nil && !bytes.Equal(back, data) {
				err = errors.New("echoed bytes differ")
			}
			errc <- err
		}()
	}
	got := 0
	h.Until(60*time.Second, "every connection echoed", func() bool {
		for {
			select {
			case err := <-errc:
				if err != nil {
					t.Fatalf("peer: %v", err)
				}
				got++
				continue
			default:
			}
			return got == conns
		}
	})
	for _, c := range echoes {
		if c.failed != 0 {
			t.Fatalf("echo send failed: %s", ErrnoRes(c.failed))
		}
		if c.recv.Done || !c.idle() {
			t.Fatalf("connection state: recv done %v (%s), idle %v", c.recv.Done, ErrnoRes(c.recv.Res), c.idle())
		}
		h.Cancel(c.recv)
	}
	h.Until(0, "cancels", func() bool {
		for _, c := range echoes {
			if !c.recv.Done {
				return false
			}
		}
		return true
	})
}

// testSendBlockedWaits: a Send to a peer that reads nothing, on an fd with
// no other op, fills the socket and then waits for EPOLLOUT: a Wait with a
// timeout returns (a driver that retried the send without registering the
// fd for writability spun inside that Wait forever); once the peer reads,
// the send completes.
func testSendBlockedWaits(t *testing.T, e *Env) {
	h := e.New(t)
	fd, peer := TCPPair(t)
	h.Own(fd)
	SetBuffers(t, fd, 64<<10, 0)
	peer.SetReadBuffer(64 << 10)
	p := randomBytes(11, 4<<20)
	s := h.Send(fd, p)
	returned := make(chan struct{})
	watchdog := time.AfterFunc(60*time.Second, func() {
		select {
		case <-returned:
		default:
			panic("drivertest: Wait(50ms) has not returned in 60s with a send blocked on a peer that reads nothing: the driver spins")
		}
	})
	for range 3 {
		h.Wait(50 * time.Millisecond)
	}
	close(returned)
	watchdog.Stop()
	if s.Done {
		t.Fatalf("a 4 MiB send to a peer that reads nothing completed: %s", ErrnoRes(s.Res))
	}
	sum, errc := make(chan []byte, 1), make(chan error, 1)
	go slowReader(peer, len(p), sum, errc)
	h.Until(60*time.Second, "the send, once the peer reads", func() bool { return s.Done })
	if s.Res != int32(len(p)) {
		t.Fatalf("send: %s, want %d", ErrnoRes(s.Res), len(p))
	}
	select {
	case <-sum:
	case err := <-errc:
		t.Fatalf("peer: %v", err)
	case <-time.After(30 * time.Second):
		t.Fatal("peer did not read everything")
	}
}

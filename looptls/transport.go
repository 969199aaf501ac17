package looptls

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"sync/atomic"
	"time"

	"github.com/ringloop/ringloop/engine"
	"github.com/ringloop/ringloop/internal/loopctl"
	"github.com/ringloop/ringloop/internal/workers"
)

// transport is a TLS connection's engine.Transport: crypto/tls's tls.Conn
// over a pipe, its handshake on a worker goroutine, its records read and
// written on the loop.
type transport struct {
	s    *side
	w    engine.Wire
	c    *engine.Conn
	tc   *tls.Conn
	p    pipe
	st   trState
	done atomic.Bool // the handshake completed: State may read tc from any goroutine

	hsErr    error // the handshake goroutine's result, read by hsDone on the loop
	closeErr error // the connection's end, when it came during the handshake
	hsDone   hsDone
}

type trState uint8

const (
	stHandshake trState = iota
	stOpen
	stFailed // the handshake or a record failed: no close_notify follows crypto/tls's alert
	stClosed // the engine connection closed
)

func (s *side) newTransport(w engine.Wire) engine.Transport {
	t := &transport{s: s, w: w, c: w.Conn()}
	t.p.init(w, s.o.maxHandshake)
	if s.client {
		t.tc = tls.Client(&t.p, s.cfg)
	} else {
		t.tc = tls.Server(&t.p, s.cfg)
	}
	t.hsDone.t = t
	return t
}

// Open starts the handshake on one of the loop's workers and holds the
// handler's OnOpen back until it completes (hsDone).
func (t *transport) Open() bool {
	workers.For(t.c.Loop()).Go(handshakeJob{t})
	return false
}

// handshakeJob runs a connection's handshake on one of its loop's workers,
// a goroutine whose stack crypto/tls has grown already (package
// internal/workers).
type handshakeJob struct{ t *transport }

func (j handshakeJob) Run() { j.t.handshake() }

// handshake runs on a goroutine: crypto/tls's handshake cannot be resumed
// after its reader fails, so it must block for the peer's flights where
// blocking is allowed. The loop feeds it (Decode); it ends within the
// handshake timeout, or when the connection closes.
//
// The timeout closes the pipe, as crypto/tls does when a context ends; a
// context with a deadline would cost a watching goroutine per handshake
// inside crypto/tls, and a timer besides.
func (t *transport) handshake() {
	var timedOut atomic.Bool
	timer := time.AfterFunc(t.s.o.handshakeTimeout, func() {
		timedOut.Store(true)
		_ = t.p.Close()
	})
	err := t.tc.HandshakeContext(context.Background())
	if !timer.Stop() || timedOut.Load() { // fired: the pipe is closed, even if the handshake got through
		err = ErrHandshakeTimeout
	}
	if err != nil {
		err = fmt.Errorf("%w: %w", ErrHandshake, err)
	}
	t.hsErr = err
	// Refused only once the loop has shut down, which closed the
	// connection: nothing is left to do.
	_ = loopctl.Run(t.c.Loop(), &t.hsDone)
}

// hsDone carries the handshake's result to the loop, behind the ciphertext
// the handshake wrote (both ride on the loop's control ring, in order).
type hsDone struct{ t *transport }

func (d *hsDone) Run() {
	t := d.t
	switch {
	case t.st == stClosed: // the connection ended during the handshake
		t.failed(t.closeErr)
	case t.hsErr != nil:
		t.st = stFailed
		defer func() { _ = t.c.CloseWithError(t.hsErr) }() // after the handler's answer, even if it panics
		t.failed(nil)
	default:
		t.p.establish()
		t.st = stOpen
		t.done.Store(true)
		t.w.Open()
	}
}

// failed tells the handler of a handshake that did not complete (on the
// loop, once the handshake goroutine has ended).
func (t *transport) failed(closeErr error) {
	if t.s.hh == nil {
		return
	}
	err := t.hsErr
	if err == nil { // the handshake completed as the connection closed
		err = closeErr
	}
	if !errors.Is(err, ErrHandshake) {
		err = fmt.Errorf("%w: %w", ErrHandshake, err)
	}
	t.s.hh.OnHandshakeError(t.c, err)
}

// maxPlaintext is the most plaintext a record carries: a read of
// crypto/tls's given room for it takes a whole record's.
const maxPlaintext = 16384

// Decode feeds the handshake while it runs; once established it decrypts
// the whole records received (the pipe holds a record's start until its
// end arrives) into out, as many as fit whole, reading the engine's buffer
// in place and stashing what it does not read. The peer's close_notify,
// or its FIN at a record boundary, is io.EOF; a FIN inside a record
// io.ErrUnexpectedEOF; a record that fails closes the connection behind
// the alert crypto/tls wrote.
func (t *transport) Decode(in []byte, eof bool, out []byte) (int, error) {
	switch t.st {
	case stHandshake:
		if len(in) > 0 {
			t.p.feed(in)
		}
		if eof {
			// The handshake may still complete on what came before the
			// FIN (a client's Finished and its first requests, sent in
			// one go); those records are then delivered before the end.
			t.p.closeWith(io.EOF)
		}
		return 0, nil
	case stOpen:
	default:
		return 0, nil
	}
	t.p.deliver(in)
	if eof {
		t.p.closeWith(io.EOF) // crypto/tls judges whether the stream stopped inside a record
	}
	n := 0
	for len(out)-n >= maxPlaintext && t.p.more() {
		m, err := t.tc.Read(out[n:])
		n += m
		if m > 0 {
			t.p.readOne()
		}
		if err == nil {
			continue
		}
		if err == errWouldBlock {
			break
		}
		t.p.stash()
		if err == io.EOF || err == io.ErrUnexpectedEOF {
			return n, err
		}
		t.st = stFailed
		return n, fmt.Errorf("looptls: %w", err)
	}
	t.p.stash()
	return n, nil
}

// Encode encrypts p into records written below the transport.
func (t *transport) Encode(p []byte) error {
	if t.st != stOpen {
		return engine.ErrConnClosed
	}
	_, err := t.tc.Write(p)
	return err
}

// CloseWrite sends close_notify, unless the handshake or a record failed.
func (t *transport) CloseWrite() {
	if t.st == stOpen {
		_ = t.tc.CloseWrite()
	}
}

// Close follows the engine connection's close: a handshake under way
// reads what the peer sent before it went (an alert, most often) and then
// err, and hsDone reports it; an established connection lets its buffers
// go.
func (t *transport) Close(err error) {
	st := t.st
	t.st, t.closeErr = stClosed, err
	if st == stHandshake {
		t.p.closeWith(err)
		return
	}
	t.p.release()
}

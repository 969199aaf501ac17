package websocket

import (
	"sync"

	"github.com/ringloop/ringloop/engine"
	"github.com/ringloop/ringloop/looptls"
)

// transport is what a Conn reads its frames from and writes them to: the
// engine connection itself (ws), or the looptls connection on it (wss),
// which encrypts what it is given and decrypts what it delivers, on the
// same loop. The frame code is the same for both; only these methods
// branch. Two pointers and a branch rather than an interface, as
// httpserver's link: a ws connection pays no dispatch, and the bytes a
// frame is written from (a header, a masked chunk on the caller's stack)
// stay where they are, which they could not through an interface (escape
// analysis would move them to the heap, an allocation per frame).
type transport struct {
	ec *engine.Conn
	tc *looptls.Conn // nil for ws
}

// Write writes p (a whole frame, or frames); over TLS it is staged.
func (t transport) Write(p []byte) error {
	if t.tc == nil {
		_, err := t.ec.Write(p)
		return err
	}
	return t.stage(nil, p, false, [4]byte{})
}

// tlsStage is a TLS record's most plaintext: what stage writes at a time.
const tlsStage = 16 << 10

// stagePool holds the buffers stage copies through, one per loop at work
// and none per connection.
var stagePool = sync.Pool{New: func() any { b := make([]byte, tlsStage); return &b }}

// stage writes header h and payload p (masked with key for a client) to
// the TLS connection through a pooled buffer, a record's most at a time:
// a small frame is one record, not a header's and a payload's, and
// crypto/tls's Write, which makes its argument escape to the heap (it
// hashes through interfaces), never sees the caller's memory.
func (t transport) stage(h, p []byte, masked bool, key [4]byte) error {
	bp := stagePool.Get().(*[]byte)
	defer stagePool.Put(bp)
	buf := append((*bp)[:0], h...)
	pos := 0
	for {
		n := copy(buf[len(buf):cap(buf)], p)
		if masked {
			pos = maskBytes(key, pos, buf[len(buf):len(buf)+n])
		}
		buf, p = buf[:len(buf)+n], p[n:]
		if _, err := t.tc.Write(buf); err != nil {
			return err
		}
		if len(p) == 0 {
			return nil
		}
		buf = buf[:0]
	}
}

func (t transport) AsyncWrite(p []byte) error {
	if t.tc == nil {
		return t.ec.AsyncWrite(p)
	}
	return t.tc.AsyncWrite(p)
}

// HoldAsync, ReleaseAsync and DiscardAsync keep other goroutines' frames
// out of the stream while a fragmented message is sent (on the loop).
func (t transport) HoldAsync() {
	if t.tc == nil {
		t.ec.HoldAsync()
		return
	}
	t.tc.HoldAsync()
}

func (t transport) ReleaseAsync() {
	if t.tc == nil {
		t.ec.ReleaseAsync()
		return
	}
	t.tc.ReleaseAsync()
}

func (t transport) DiscardAsync() int {
	if t.tc == nil {
		return t.ec.DiscardAsync()
	}
	return t.tc.DiscardAsync()
}

// Keep and Reading are for the OnData that frames are parsed in.
func (t transport) Keep(p []byte) error {
	if t.tc == nil {
		return t.ec.Keep(p)
	}
	return t.tc.Keep(p)
}

func (t transport) Reading() bool {
	if t.tc == nil {
		return t.ec.Reading()
	}
	return t.tc.Reading()
}

func (t transport) PauseRead() {
	if t.tc == nil {
		t.ec.PauseRead()
		return
	}
	t.tc.PauseRead()
}

func (t transport) ResumeRead() {
	if t.tc == nil {
		t.ec.ResumeRead()
		return
	}
	t.tc.ResumeRead()
}

// Close and CloseWithError flush what was written first (and, over TLS,
// send close_notify after it); Abort drops it.
func (t transport) Close() error {
	if t.tc == nil {
		return t.ec.Close()
	}
	return t.tc.Close()
}

func (t transport) CloseWithError(err error) error {
	if t.tc == nil {
		return t.ec.CloseWithError(err)
	}
	return t.tc.CloseWithError(err)
}

func (t transport) Abort() error {
	if t.tc == nil {
		return t.ec.Abort()
	}
	return t.tc.Abort()
}

// engineSide is the engine.Handler of a ws connection: the same struct as
// Conn, with the engine's callbacks kept off Conn's API.
type engineSide Conn

func (s *engineSide) OnOpen(ec *engine.Conn)                      { (*Conn)(s).opened(transport{ec: ec}) }
func (s *engineSide) OnData(_ *engine.Conn, b []byte)             { (*Conn)(s).data(b) }
func (s *engineSide) OnClose(_ *engine.Conn, err error)           { (*Conn)(s).closed(err) }
func (s *engineSide) OnShutdown(*engine.Conn)                     { (*Conn)(s).shutdown() }
func (s *engineSide) OnWritabilityChanged(_ *engine.Conn, w bool) { (*Conn)(s).writability(w) }

// tlsSide is the looptls.Handler of a wss connection: records are
// decrypted and encrypted on the loop, so a wss connection costs no
// goroutine either.
type tlsSide Conn

func (s *tlsSide) OnOpen(tc *looptls.Conn)                      { (*Conn)(s).opened(transport{ec: tc.Engine(), tc: tc}) }
func (s *tlsSide) OnData(_ *looptls.Conn, b []byte)             { (*Conn)(s).data(b) }
func (s *tlsSide) OnClose(_ *looptls.Conn, err error)           { (*Conn)(s).closed(err) }
func (s *tlsSide) OnShutdown(*looptls.Conn)                     { (*Conn)(s).shutdown() }
func (s *tlsSide) OnWritabilityChanged(_ *looptls.Conn, w bool) { (*Conn)(s).writability(w) }

package httpserver

import (
	"crypto/tls"
	"net"

	"github.com/ringloop/ringloop/engine"
	"github.com/ringloop/ringloop/looptls"
)

// link is a connection as the server reads and writes it: the engine
// connection, and over TLS the looptls connection on it, which encrypts
// what the server writes and must be the one paused, resumed and closed
// (records it holds are still to be delivered; Close sends close_notify).
// A value of two pointers with a branch per call: plain connections pay no
// interface dispatch.
type link struct {
	ec *engine.Conn
	tc *looptls.Conn // nil on a plain connection

	state *tls.ConnectionState // over TLS: the handshake's outcome, made once (conn.tlsState)
}

func (l link) Write(p []byte) (int, error) {
	if l.tc != nil {
		return l.tc.Write(p)
	}
	return l.ec.Write(p)
}

func (l link) Close() error {
	if l.tc != nil {
		return l.tc.Close()
	}
	return l.ec.Close()
}

func (l link) Abort() error {
	if l.tc != nil {
		return l.tc.Abort()
	}
	return l.ec.Abort()
}

// release removes cs as the connection's value, once another handler has
// the connection (Upgrade, Hijack): the server's state for it, parser
// included, is not kept alive by it.
func (l link) release(cs *conn) {
	if l.tc != nil {
		if l.tc.Value() == cs {
			l.tc.SetValue(nil)
		}
		return
	}
	if l.ec.Value() == cs {
		l.ec.SetValue(nil)
	}
}

// hold makes cs the connection's value again: a hand-over that failed
// leaves the connection the server's.
func (l link) hold(cs *conn) {
	if l.tc != nil {
		l.tc.SetValue(cs)
		return
	}
	l.ec.SetValue(cs)
}

// CloseWrite half-closes; over TLS it sends close_notify first.
func (l link) CloseWrite() error {
	if l.tc != nil {
		return l.tc.CloseWrite()
	}
	return l.ec.CloseWrite()
}

func (l link) PauseRead() {
	if l.tc != nil {
		l.tc.PauseRead()
		return
	}
	l.ec.PauseRead()
}

func (l link) ResumeRead() {
	if l.tc != nil {
		l.tc.ResumeRead()
		return
	}
	l.ec.ResumeRead()
}

// Writable and Buffered count what waits for the socket: ciphertext over
// TLS, which is what the watermarks bound.
func (l link) Writable() bool       { return l.ec.Writable() }
func (l link) Buffered() int        { return l.ec.Buffered() }
func (l link) Loop() *engine.Loop   { return l.ec.Loop() }
func (l link) LocalAddr() net.Addr  { return l.ec.LocalAddr() }
func (l link) RemoteAddr() net.Addr { return l.ec.RemoteAddr() }

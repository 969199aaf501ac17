package websocket

import (
	"github.com/ringloop/ringloop/engine"
	"github.com/ringloop/ringloop/looptls"
)

// transport is what a Conn reads its frames from and writes them to: the
// engine connection itself (ws), or the looptls connection on it (wss),
// which encrypts what it is given and decrypts what it delivers, on the
// same loop. *engine.Conn and *looptls.Conn are both one, so the frame
// code is the same for either and a plain connection pays one interface
// call per write, no wrapper.
type transport interface {
	Write(p []byte) (int, error)
	AsyncWrite(p []byte) error
	// Keep and Reading are for the OnData that frames are parsed in.
	Keep(p []byte) error
	Reading() bool
	PauseRead()
	ResumeRead()
	// Close and CloseWithError flush what was written first (and, over
	// TLS, send close_notify after it); Abort drops it.
	Close() error
	CloseWithError(err error) error
	Abort() error
}

var (
	_ transport = (*engine.Conn)(nil)
	_ transport = (*looptls.Conn)(nil)
)

// engineSide is the engine.Handler of a ws connection: the same struct as
// Conn, with the engine's callbacks kept off Conn's API.
type engineSide Conn

func (s *engineSide) OnOpen(ec *engine.Conn)                      { (*Conn)(s).opened(ec, ec) }
func (s *engineSide) OnData(_ *engine.Conn, b []byte)             { (*Conn)(s).data(b) }
func (s *engineSide) OnClose(_ *engine.Conn, err error)           { (*Conn)(s).closed(err) }
func (s *engineSide) OnShutdown(*engine.Conn)                     { (*Conn)(s).shutdown() }
func (s *engineSide) OnWritabilityChanged(_ *engine.Conn, w bool) { (*Conn)(s).writability(w) }

// tlsSide is the looptls.Handler of a wss connection: records are
// decrypted and encrypted on the loop, so a wss connection costs no
// goroutine either.
type tlsSide Conn

func (s *tlsSide) OnOpen(tc *looptls.Conn)                      { (*Conn)(s).opened(tc.Engine(), tc) }
func (s *tlsSide) OnData(_ *looptls.Conn, b []byte)             { (*Conn)(s).data(b) }
func (s *tlsSide) OnClose(_ *looptls.Conn, err error)           { (*Conn)(s).closed(err) }
func (s *tlsSide) OnShutdown(*looptls.Conn)                     { (*Conn)(s).shutdown() }
func (s *tlsSide) OnWritabilityChanged(_ *looptls.Conn, w bool) { (*Conn)(s).writability(w) }

package httpserver

import (
	"errors"
	"net/http"
	"strings"

	"github.com/ringloop/ringloop/engine"
	"github.com/ringloop/ringloop/internal/loopctl"
)

// errUpgradeArgs: Upgrade needs both.
var errUpgradeArgs = errors.New("httpserver: Upgrade needs a handler and a protocol")

// ErrNotAdapter is what Upgrade and CanUpgrade return for an
// http.ResponseWriter that is not this package's adapter's (New), nor
// a wrapper whose Unwrap leads to one: net/http's own, a test recorder. A
// connection can be handed to a loop only where it already is on one; on
// net/http, Hijack it instead (a goroutine per connection).
var ErrNotAdapter = errors.New("httpserver: the http.ResponseWriter is not the adapter's (httpserver.New): its connection is on no loop to hand over")

// errUpgradeStarted: a 101 cannot follow a status or body already given.
var errUpgradeStarted = errors.New("httpserver: Upgrade after WriteHeader, Write or Flush")

// Upgrade is Response.Upgrade for an http.Handler served by the adapter
// (New): it answers 101 Switching Protocols to protocol, with the
// header fields set in w.Header() (Connection and Upgrade are its own; any
// Content-Length or Transfer-Encoding is dropped), and hands the connection
// to h on its loop, with the bytes the client sent behind the request. The
// handler should then return: from then on the connection is h's, served
// on the loop with no goroutine (the handler's goroutine goes back to the
// pool), and w is done (Write returns http.ErrHijacked). As with Hijack,
// the server no longer counts the connection, its Shutdown does not wait
// for it, and the loop's shutdown closes it.
//
// w may wrap the adapter's writer if it has an Unwrap method, as
// http.ResponseController requires. It returns ErrNotAdapter for any other
// writer, http.ErrHijacked after Hijack or an earlier Upgrade, and an
// error when a status or body was already given, for an HTTP/1.0 request,
// for a request whose body is still arriving, or when the connection is
// gone. Inline (WithInlineHTTP) it runs on the loop and works the same.
// Over TLS (ListenTLS) h reads and writes plaintext: the records stay on
// the loop.
func Upgrade(w http.ResponseWriter, protocol string, h engine.Handler) error {
	if h == nil || protocol == "" || strings.ContainsAny(protocol, "\r\n") {
		return errUpgradeArgs
	}
	sw, err := adapterWriter(w)
	if err != nil {
		return err
	}
	if err := sw.upgradable(); err != nil {
		return err
	}
	sr := sw.sr
	head := appendStatusLine(nil, http.StatusSwitchingProtocols)
	head = appendHeader(head, sw.header, func(k string) bool {
		switch k {
		case "Connection", "Upgrade", "Content-Length", "Transfer-Encoding", "Trailer":
			return true
		}
		return strings.HasPrefix(k, http.TrailerPrefix)
	})
	head = append(head, "Connection: Upgrade\r\nUpgrade: "...)
	head = append(head, protocol...)
	head = append(head, "\r\n\r\n"...)
	t := &upgradeTask{cs: sr.cs, h: h, head: head, inline: sr.inline}
	if sr.inline {
		// On the loop, inside the request's dispatch: the connection is
		// handed over once the handler returns, with the bytes behind the
		// request, as the fast API's Upgrade is.
		t.Run()
	} else {
		t.done = make(chan struct{})
		if loopctl.Run(sr.loop, t) != nil {
			return errConnGone
		}
		<-t.done
	}
	if t.err == nil {
		sw.hijacked = true
	}
	return t.err
}

// CanUpgrade reports, before any answer is written, whether Upgrade can
// hand w's connection over: nil if so, ErrNotAdapter or why not otherwise.
// A caller that refuses a request it cannot upgrade anyway (package
// websocket's Upgrade answers 500) checks here first.
func CanUpgrade(w http.ResponseWriter) error {
	sw, err := adapterWriter(w)
	if err != nil {
		return err
	}
	return sw.upgradable()
}

// adapterWriter finds the adapter's writer in w, through Unwrap methods as
// http.ResponseController does.
func adapterWriter(w http.ResponseWriter) (*stdWriter, error) {
	for range 64 { // a cycle of wrappers is not followed forever
		switch v := w.(type) {
		case *stdWriter:
			return v, nil
		case interface{ Unwrap() http.ResponseWriter }:
			w = v.Unwrap()
		default:
			return nil, ErrNotAdapter
		}
	}
	return nil, ErrNotAdapter
}

// upgradable checks, on the handler's goroutine, what can be checked there.
func (w *stdWriter) upgradable() error {
	sr := w.sr
	switch {
	case w.hijacked:
		return http.ErrHijacked
	case w.status != 0 || w.committed || len(w.buf) > 0:
		return errUpgradeStarted
	case sr.minor == 0:
		return errors.New("httpserver: Upgrade of an HTTP/1.0 request")
	case sr.h2 != nil:
		return errUpgradeH2
	case sr.dead.Load():
		return errConnGone
	}
	return nil
}

// upgradeTask writes the 101 and hands the connection over, on its loop.
type upgradeTask struct {
	cs     *conn
	h      engine.Handler
	head   []byte
	inline bool
	err    error
	done   chan struct{} // closed once run, for a handler on a goroutine
}

func (t *upgradeTask) Run() {
	if t.done != nil {
		defer close(t.done)
	}
	cs := t.cs
	switch {
	case cs.has(flagClosed | flagLingering):
		t.err = errConnGone
		return
	case cs.receiving():
		t.err = errors.New("httpserver: Upgrade while the request body is still arriving")
		return
	}
	if _, err := cs.c.Write(t.head); err != nil {
		t.err = err
		return
	}
	if t.inline {
		cs.upgrade = t.h // the serve loop hands it over after the dispatch
		return
	}
	// The handler ran on a goroutine: the request was dispatched long
	// ago, and what the client sent since is in cs.buf.
	cs.release()
	if err := cs.c.SetHandler(t.h, cs.buf); err != nil {
		cs.hold() // still the server's: its OnClose comes
		cs.set(flagLingering)
		_ = cs.c.Abort()
		t.err = err
		return
	}
	cs.forget()
}

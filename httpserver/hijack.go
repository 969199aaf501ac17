package httpserver

import (
	"bufio"
	"errors"
	"net"
	"net/http"

	"github.com/ringloop/ringloop/internal/loopctl"
	"github.com/ringloop/ringloop/netconn"
)

// errHijackInline: a hijacked connection is read and written with blocking
// calls, which on the loop (WithInlineHTTP) would wait for the loop itself.
var errHijackInline = errors.New("httpserver: Hijack needs the handler on its own goroutine (not WithInlineHTTP)")

// Hijack implements http.Hijacker: the connection leaves the server and
// becomes a net.Conn (netconn's, on the same loop) for the handler to read
// and write from its goroutine, as gorilla/websocket, x/net/websocket and
// CONNECT proxies do. Bytes the client sent after the request (a WebSocket
// frame right behind the upgrade) are read first from the returned
// connection; the bufio.Reader holds none. A response the handler began
// before Hijack is flushed first, as net/http does. As with net/http the
// server no longer tracks the connection: Shutdown does not wait for it,
// though it is closed when the loop shuts down. Over TLS the net.Conn reads
// and writes plaintext (the records stay on the loop) where net/http
// returns its *tls.Conn: a handler that needs the TLS state reads r.TLS.
func (w *stdWriter) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	sr := w.sr
	switch {
	case sr.inline:
		return nil, nil, errHijackInline
	case w.hijacked:
		return nil, nil, http.ErrHijacked
	case sr.h2 != nil:
		return nil, nil, errHijackH2
	case sr.dead.Load():
		return nil, nil, errConnGone
	}
	if (w.status != 0 || len(w.buf) > 0) && !w.flushOut(false) {
		return nil, nil, errConnGone
	}
	t := &hijackTask{cs: sr.cs, done: make(chan struct{})}
	if loopctl.Run(sr.loop, t) != nil {
		return nil, nil, errConnGone
	}
	<-t.done
	if t.err != nil {
		return nil, nil, t.err
	}
	w.hijacked = true
	return t.nc, bufio.NewReadWriter(bufio.NewReader(t.nc), bufio.NewWriter(t.nc)), nil
}

// hijackTask hands the connection over on its loop.
type hijackTask struct {
	cs   *conn
	nc   *netconn.Conn
	err  error
	done chan struct{}
}

func (t *hijackTask) Run() {
	defer close(t.done)
	t.nc, t.err = t.cs.hijack()
}

// hijack gives the connection to a netconn.Conn with the bytes received
// after the current request, and forgets it.
func (cs *conn) hijack() (*netconn.Conn, error) {
	if cs.has(flagClosed) {
		return nil, errConnGone
	}
	if cs.receiving() {
		return nil, errBodyHijack
	}
	nc, err := netconn.Hijack(cs.c, cs.buf)
	if err != nil {
		return nil, err
	}
	cs.forget()
	return nc, nil
}

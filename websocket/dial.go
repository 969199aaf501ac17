package websocket

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"crypto/tls"
	"encoding/base64"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/ringloop/ringloop/engine"
	"github.com/ringloop/ringloop/looptls"
	"github.com/ringloop/ringloop/tasks"
)

// maxResponseHead bounds the server's answer Dial reads (status line and
// header fields); a longer one fails the handshake.
const maxResponseHead = 16 << 10

var errDialOnLoop = errors.New("websocket: Dial would block its own loop; call it from another goroutine")

// HandshakeError is Dial's error when the server refused the handshake or
// answered it wrongly; it matches ErrHandshake.
type HandshakeError struct {
	// StatusCode is the answer's status: not 101 when the server refused,
	// 101 when the answer's fields were wrong, 0 when the answer could not
	// be read (not HTTP, or a head over 16 KiB).
	StatusCode int
	// Status is the answer's status ("403 Forbidden"), or "".
	Status string
	// Reason says what was wrong.
	Reason string
	// Header holds the answer's fields (Retry-After, WWW-Authenticate...),
	// nil when the answer could not be read.
	Header http.Header
}

func (e *HandshakeError) Error() string {
	if e.Status == "" {
		return fmt.Sprintf("%v: %s", ErrHandshake, e.Reason)
	}
	return fmt.Sprintf("%v: server answered %s: %s", ErrHandshake, e.Status, e.Reason)
}

func (e *HandshakeError) Unwrap() error { return ErrHandshake }

// Dial opens a WebSocket connection to a ws:// or wss:// URL from a loop
// of loops (a loop, or a group, whose next loop takes it): engine.Dial
// connects, for wss:// TLS is negotiated on the loop (looptls.Client, its
// handshake bounded by Timeouts.Handshake too), the opening handshake is
// sent and its answer checked, and the connection is
// then served by h on that loop exactly as a server's is (OnOpen runs on
// the loop before Dial returns; DialAsync dials without blocking), with a
// client's rules: every frame sent is masked with a fresh key, and a
// masked frame from the server fails the
// connection (1002). Bytes the server sends right behind its 101 are
// h's first frames.
//
// It takes loops rather than engine.Dial's *Loop so that a bot or a proxy
// opening many connections spreads them over a group; like engine.Dial it
// blocks, so it refuses to run on the loop it would use.
//
// ctx bounds and cancels the whole dial (the connect as engine.Dial, then
// the handshake); Timeouts.Handshake bounds the wait for the answer once
// connected. Errors: the connect's are engine.Dial's (*net.OpError); a
// refused or wrong answer is a *HandshakeError (errors.Is ErrHandshake)
// saying the status and what was wrong; an answer not in time matches
// ErrTimeout (and os.ErrDeadlineExceeded); a TLS handshake not in time,
// looptls.ErrHandshakeTimeout; a connection closed before the answer gives
// the engine's error (io.EOF...).
//
// The options are the server's (WithMaxMessageSize, WithTimeouts,
// WithSlowConsumer, WithCompression to offer permessage-deflate,
// WithSubprotocols to offer subprotocols) and the client's own,
// WithDialConfig (request header fields, the TLS configuration of
// wss://, the engine connection's options).
func Dial(ctx context.Context, loops engine.Loops, rawURL string, h Handler, opts ...Option) (*Conn, error) {
	l := loops.Next()
	if l.InEventLoop() {
		return nil, errDialOnLoop
	}
	return DialAsync(ctx, l, rawURL, h, opts...).Await(context.Background()) // ctx ends the dial itself
}

// DialAsync is Dial without the wait: it returns at once with a future of
// the connection, completed on the loop that serves it once the server's
// answer is checked (OnOpen has run by then) or the dial failed, with
// Dial's errors. It never blocks, so a handler can dial from its own loop
// (a proxy opening its upstream, a bot's next connection): add a listener
// on the future (tasks.Future.AddListener) rather than Await there, which
// would block the loop that must complete it.
func DialAsync(ctx context.Context, loops engine.Loops, rawURL string, h Handler, opts ...Option) tasks.Future[*Conn] {
	if h == nil {
		return tasks.Failed[*Conn](errors.New("websocket: Dial needs a handler"))
	}
	cfg, err := newConfig(opts, "Dial", siteDial)
	if err != nil {
		return tasks.Failed[*Conn](err)
	}
	tgt, req, accept, err := dialRequest(rawURL, cfg)
	if err != nil {
		return tasks.Failed[*Conn](err)
	}
	l := loops.Next()
	d := &dialing{h: h, cfg: cfg, req: req, accept: accept, p: tasks.NewPromise[*Conn](l)}
	var eh engine.Handler = d
	if tgt.tls != nil {
		eh = looptls.Client(d, tgt.tls, looptls.WithHandshakeTimeout(cfg.handshakeTimeout))
	}
	connected := engine.DialAsync(ctx, l, "tcp", tgt.addr, eh, cfg.connOpts...)
	connected.AddListener(l, func(f tasks.Future[*engine.Conn]) {
		ec, _, err := f.Poll()
		if err != nil {
			d.fail(err)
			return
		}
		d.ec = ec
		if _, done, err := d.p.Poll(); done && err != nil {
			_ = ec.Close() // failed or cancelled while connecting, or in the TLS handshake
		}
	})
	stop := context.AfterFunc(ctx, func() {
		err := fmt.Errorf("websocket: handshake: %w", ctx.Err())
		// Refused only once the loop has shut down, which closes the
		// connection and ends the handshake itself.
		_ = l.Execute(tasks.Func(func() {
			if d.oc == nil && d.ec != nil && !d.finished { // in the TLS handshake: cut it short
				_ = d.ec.CloseWithError(err)
			}
			d.fail(err)
		}))
	})
	d.p.AddListener(l, func(tasks.Future[*Conn]) { stop() })
	return d.p
}

// dialTarget is where Dial connects: the address, and for wss:// the TLS
// configuration (ServerName set).
type dialTarget struct {
	addr string
	tls  *tls.Config
}

// dialRequest checks the URL and options and builds the opening handshake:
// where to connect, the request, and the Sec-WebSocket-Accept the answer
// must carry.
func dialRequest(rawURL string, cfg *config) (tgt dialTarget, req []byte, accept string, err error) {
	u, err := url.Parse(rawURL)
	if err != nil {
		return tgt, nil, "", fmt.Errorf("websocket: %w", err)
	}
	port, secure := "80", false
	switch strings.ToLower(u.Scheme) {
	case "ws":
		if cfg.tls != nil {
			return tgt, nil, "", fmt.Errorf("websocket: URL %q: DialConfig.TLSConfig needs wss://", rawURL)
		}
	case "wss":
		port, secure = "443", true
	default:
		return tgt, nil, "", fmt.Errorf("websocket: URL %q: scheme %q (expected ws:// or wss://)", rawURL, u.Scheme)
	}
	switch {
	case u.Host == "" || u.Hostname() == "":
		return tgt, nil, "", fmt.Errorf("websocket: URL %q has no host", rawURL)
	case u.User != nil:
		return tgt, nil, "", fmt.Errorf("websocket: URL %q: user info is not sent; use DialConfig.Header for Authorization", rawURL)
	case strings.Contains(rawURL, "#"):
		return tgt, nil, "", fmt.Errorf("websocket: URL %q: a fragment has no meaning in a WebSocket URL (RFC 6455 §3)", rawURL)
	}
	if p := u.Port(); p != "" {
		port = p
	}
	tgt.addr = net.JoinHostPort(u.Hostname(), port)
	if secure {
		tgt.tls = tlsFor(cfg.tls, u.Hostname())
	}
	for _, p := range cfg.subprotocols {
		if p == "" || strings.ContainsAny(p, " ,;\t\r\n\"()<>@:/[]?={}\\") {
			return tgt, nil, "", fmt.Errorf("websocket: subprotocol %q is not a token", p)
		}
	}

	var raw [16]byte
	_, _ = rand.Read(raw[:]) // crypto/rand.Read does not fail (it crashes the program)
	key := base64.StdEncoding.EncodeToString(raw[:])
	host := u.Host
	if v := cfg.header.Get("Host"); v != "" {
		host = v
	}
	b := append([]byte("GET "), u.RequestURI()...)
	b = append(b, " HTTP/1.1\r\nHost: "...)
	b = append(b, host...)
	b = append(b, "\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: "...)
	b = append(b, key...)
	b = append(b, "\r\nSec-WebSocket-Version: 13\r\n"...)
	if len(cfg.subprotocols) > 0 {
		b = append(b, "Sec-WebSocket-Protocol: "...)
		b = append(b, strings.Join(cfg.subprotocols, ", ")...)
		b = append(b, "\r\n"...)
	}
	if cfg.compression {
		b = append(b, "Sec-WebSocket-Extensions: "+deflateOffer+"\r\n"...)
	}
	for k, vs := range cfg.header {
		if http.CanonicalHeaderKey(k) == "Host" {
			continue
		}
		for _, v := range vs {
			b = append(b, k...)
			b = append(b, ": "...)
			b = append(b, v...)
			b = append(b, "\r\n"...)
		}
	}
	b = append(b, "\r\n"...)
	return tgt, b, acceptKey([]byte(key)), nil
}

// tlsFor is the client configuration for a wss:// host: a clone of cfg
// (or a default one) with ServerName the URL's host unless cfg names one.
func tlsFor(cfg *tls.Config, host string) *tls.Config {
	if cfg == nil {
		cfg = &tls.Config{}
	}
	cfg = cfg.Clone()
	if cfg.ServerName == "" {
		cfg.ServerName = host
	}
	return cfg
}

// dialing is the engine.Handler of a dialed connection (ws:// or, under
// looptls.Client, wss://) until the answer is checked; then the connection
// is handed to the Conn (SetHandler). Loop only, but for done.
type dialing struct {
	h        Handler
	cfg      *config
	req      []byte
	accept   string
	oc       *engine.Conn // the connection, once open (TLS: once its handshake is done)
	timer    tasks.Future[struct{}]
	finished bool
	ec       *engine.Conn          // once connected (the TLS handshake may still run)
	p        *tasks.Promise[*Conn] // the dial's outcome
}

func (d *dialing) OnOpen(ec *engine.Conn) { d.opened(ec) }

func (d *dialing) OnData(ec *engine.Conn, b []byte) {
	if c, end := d.answer(b); c != nil {
		d.handOver(c, b[end:], ec.SetHandler((*engineSide)(c), b[end:]))
	}
}

// OnClose: the connection ended before the answer.
func (d *dialing) OnClose(ec *engine.Conn, err error) {
	if err == nil { // closed from this side before the answer
		err = engine.ErrConnClosed
	}
	d.fail(err)
}

// OnHandshakeError implements looptls.HandshakeErrorHandler: the TLS
// handshake of a wss:// connection failed (its error wraps
// looptls.ErrHandshake and crypto/tls's).
func (d *dialing) OnHandshakeError(ec *engine.Conn, err error) { d.fail(err) }

// opened sends the request on the open connection and starts the wait for
// the answer.
func (d *dialing) opened(ec *engine.Conn) {
	d.oc = ec
	if d.finished { // cancelled before the connection was opened
		_ = ec.Close()
		return
	}
	tm, err := ec.Loop().Schedule(tasks.Func(d.timedOut), d.cfg.handshakeTimeout)
	if err != nil {
		d.fail(err)
		return
	}
	d.timer = tm
	if _, err := ec.Write(d.req); err != nil {
		d.fail(err)
	}
	d.req = nil
}

func (d *dialing) timedOut() {
	d.timer = nil
	d.fail(timeoutError(fmt.Sprintf("websocket: no handshake answer within %v (Timeouts.Handshake)", d.cfg.handshakeTimeout)))
}

// answer waits for the whole answer head and checks it: it returns the
// Conn to hand the connection to and where the bytes behind the head
// start, or nil (more to come, or failed).
func (d *dialing) answer(b []byte) (*Conn, int) {
	if d.finished {
		return nil, 0
	}
	end := bytes.Index(b, []byte("\r\n\r\n"))
	if end < 0 || end+4 > maxResponseHead {
		switch {
		case len(b) >= maxResponseHead:
			d.fail(&HandshakeError{Reason: fmt.Sprintf("answer head over %d bytes", maxResponseHead)})
		default:
			if err := d.oc.Keep(b); err != nil {
				d.fail(err)
			}
		}
		return nil, 0
	}
	end += 4
	resp, err := http.ReadResponse(bufio.NewReader(bytes.NewReader(b[:end])), nil)
	if err != nil {
		d.fail(&HandshakeError{Reason: fmt.Sprintf("malformed answer: %v", err)})
		return nil, 0
	}
	c, herr := d.check(resp)
	if herr != nil {
		herr.StatusCode, herr.Status, herr.Header = resp.StatusCode, resp.Status, resp.Header
		d.fail(herr)
		return nil, 0
	}
	d.stopTimer()
	d.finished = true // the SetHandler that follows runs c's OnOpen
	return c, end
}

// handOver reports the dial's outcome once SetHandler gave the connection
// to c (err nil) or refused (the bytes behind the answer were too many).
func (d *dialing) handOver(c *Conn, rest []byte, err error) {
	if err != nil {
		d.finished = false
		d.fail(fmt.Errorf("websocket: %d bytes behind the answer: %w", len(rest), err))
		return
	}
	d.p.Succeed(c)
}

// check validates the server's answer (RFC 6455 §4.1) and makes the Conn.
func (d *dialing) check(resp *http.Response) (*Conn, *HandshakeError) {
	hdr := stdHeader(resp.Header)
	bad := func(format string, args ...any) (*Conn, *HandshakeError) {
		return nil, &HandshakeError{Reason: fmt.Sprintf(format, args...)}
	}
	switch {
	case resp.StatusCode != http.StatusSwitchingProtocols:
		return bad("not 101 Switching Protocols")
	case !hasToken(hdr, "Upgrade", "websocket"):
		return bad("Upgrade: websocket missing")
	case !hasToken(hdr, "Connection", "upgrade"):
		return bad("Connection: upgrade missing")
	case strings.TrimSpace(resp.Header.Get("Sec-WebSocket-Accept")) != d.accept:
		return bad("Sec-WebSocket-Accept %q does not answer the key sent (want %q)", resp.Header.Get("Sec-WebSocket-Accept"), d.accept)
	}
	c := &Conn{h: d.h, cfg: d.cfg, client: true}
	if vs := resp.Header.Values("Sec-WebSocket-Protocol"); len(vs) > 0 {
		p := strings.TrimSpace(vs[0])
		if len(vs) != 1 || !slices.Contains(d.cfg.subprotocols, p) {
			return bad("subprotocol %q was not offered (offered %q)", strings.Join(vs, ", "), d.cfg.subprotocols)
		}
		c.subprotocol = p
	}
	var exts []string
	for _, v := range resp.Header.Values("Sec-WebSocket-Extensions") {
		for e := range strings.SplitSeq(v, ",") {
			if e = strings.TrimSpace(e); e != "" {
				exts = append(exts, e)
			}
		}
	}
	switch {
	case len(exts) == 0:
	case !d.cfg.compression:
		return bad("extension %q was not offered", strings.Join(exts, ", "))
	case len(exts) > 1 || !deflateAnswerOK(exts[0]):
		return bad("extensions %q do not answer the offer %q", strings.Join(exts, ", "), deflateOffer)
	default:
		c.deflate = true
	}
	return c, nil
}

func (d *dialing) stopTimer() {
	if d.timer != nil {
		d.timer.Cancel()
		d.timer = nil
	}
}

// fail ends the handshake with err, once, and closes the connection.
func (d *dialing) fail(err error) {
	if d.finished {
		return
	}
	d.finished = true
	d.stopTimer()
	d.p.Fail(err)
	if d.oc != nil {
		_ = d.oc.CloseWithError(err)
	}
}

// stdHeader is an answer's header fields as a headerSource.
type stdHeader http.Header

func (h stdHeader) values(name string, fn func([]byte) bool) bool {
	for _, v := range http.Header(h).Values(name) {
		if fn([]byte(v)) {
			return true
		}
	}
	return false
}

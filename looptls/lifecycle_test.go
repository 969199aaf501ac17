package looptls_test

import (
	"context"
	"crypto/tls"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ringloop/ringloop/engine"
	"github.com/ringloop/ringloop/internal/testenv"
	"github.com/ringloop/ringloop/looptls"
)

// TestIdleConnectionsHoldNoGoroutine: 200 established, idle TLS
// connections cost no goroutine: the handshake goroutines have ended.
func TestIdleConnectionsHoldNoGoroutine(t *testing.T) {
	p := testenv.NewPKI(t)
	testenv.ForEach(t, func(t *testing.T, c testenv.Combo) {
		testenv.CheckLeaks(t)
		r := newRecorder()
		addr := serve(t, c, r, serverConfig(t, p))
		roundTrip(t, dial(t, addr, clientConfig(p)), "warm up") // the loop has started
		<-r.opens
		before := runtime.NumGoroutine()
		const n = 200
		for i := 0; i < n; i++ {
			roundTrip(t, dial(t, addr, clientConfig(p)), "ping") // the server has opened it
			<-r.opens
		}
		// Each handshake goroutine ends right after handing its result
		// to the loop; wait for the last ones to return.
		testenv.Eventually(t, 30*time.Second, "handshake goroutines to end", func() bool {
			return runtime.NumGoroutine() < before+10
		})
	})
}

func dial(t *testing.T, addr string, cfg *tls.Config) *tls.Conn {
	t.Helper()
	tc, err := tls.Dial("tcp", addr, cfg)
	require.NoError(t, err)
	t.Cleanup(func() { tc.Close() })
	return tc
}

// recordConn records the types of the TLS records it reads.
type recordConn struct {
	net.Conn
	mu   sync.Mutex
	raw  []byte
	typs []byte
}

func (rc *recordConn) Read(p []byte) (int, error) {
	n, err := rc.Conn.Read(p)
	rc.mu.Lock()
	rc.raw = append(rc.raw, p[:n]...)
	for len(rc.raw) >= 5 {
		l := 5 + int(binary.BigEndian.Uint16(rc.raw[3:5]))
		if len(rc.raw) < l {
			break
		}
		rc.typs = append(rc.typs, rc.raw[0])
		rc.raw = rc.raw[l:]
	}
	rc.mu.Unlock()
	return n, err
}

// TestCloseNotify: a handler's Close sends close_notify before the FIN (in
// TLS 1.2 an alert record is visible on the wire), after the bytes it
// wrote.
func TestCloseNotify(t *testing.T) {
	p := testenv.NewPKI(t)
	testenv.ForEach(t, func(t *testing.T, c testenv.Combo) {
		testenv.CheckLeaks(t)
		r := newRecorder()
		r.http = true // answers and closes
		addr := serve(t, c, r, serverConfig(t, p))
		raw, err := net.Dial("tcp", addr)
		require.NoError(t, err)
		rc := &recordConn{Conn: raw}
		cfg := clientConfig(p)
		cfg.MaxVersion = tls.VersionTLS12
		tc := tls.Client(rc, cfg)
		defer tc.Close()
		require.NoError(t, tc.SetDeadline(time.Now().Add(60*time.Second)))
		_, err = tc.Write([]byte("GET / HTTP/1.1\r\n\r\n"))
		require.NoError(t, err)
		b, err := io.ReadAll(tc)
		require.NoError(t, err) // io.EOF after close_notify is a clean end
		require.Contains(t, string(b), "hello\n")
		rc.mu.Lock()
		typs := rc.typs
		rc.mu.Unlock()
		require.Equal(t, byte(21), typs[len(typs)-1], "the last record is an alert: %v", typs)
		require.NoError(t, <-r.closes)
	})
}

// clientRec is a TLS client's handler: it sends hello on open and
// reports what it reads.
type clientRec struct {
	opens  chan tls.ConnectionState
	data   chan string
	closes chan error
}

func newClientRec() *clientRec {
	return &clientRec{opens: make(chan tls.ConnectionState, 16), data: make(chan string, 1024), closes: make(chan error, 16)}
}

func (r *clientRec) OnOpen(c *engine.Conn) {
	st, _ := looptls.State(c)
	r.opens <- st
	_, _ = c.Write([]byte("hello from the loop"))
}
func (r *clientRec) OnData(c *engine.Conn, b []byte) {
	r.data <- string(b)
	_ = c.Close()
}
func (r *clientRec) OnClose(_ *engine.Conn, err error) { r.closes <- err }

// TestClient: a looptls client on engine.Dial talks to Go's TLS server
// and to a looptls server, verifies them, resumes its session with a
// ClientSessionCache, and closes with close_notify.
func TestClient(t *testing.T) {
	p := testenv.NewPKI(t)
	testenv.ForEach(t, func(t *testing.T, c testenv.Combo) {
		testenv.CheckLeaks(t)
		goLn, err := tls.Listen("tcp", "127.0.0.1:0", serverConfig(t, p))
		require.NoError(t, err)
		defer goLn.Close()
		var wg sync.WaitGroup
		defer wg.Wait()
		wg.Add(1)
		go func() { // Go's echo server, until the listener closes
			defer wg.Done()
			for {
				conn, err := goLn.Accept()
				if err != nil {
					return
				}
				wg.Add(1)
				go func() {
					defer wg.Done()
					defer conn.Close()
					_ = conn.SetDeadline(time.Now().Add(60 * time.Second))
					_, _ = io.Copy(conn, conn)
				}()
			}
		}()
		defer goLn.Close()
		loop := newLoop(t, c)
		cfg := clientConfig(p)
		cfg.NextProtos = []string{"http/1.1"}
		cfg.ClientSessionCache = tls.NewLRUClientSessionCache(4)
		for name, addr := range map[string]string{"net": goLn.Addr().String(), "looptls": serve(t, c, newRecorder(), serverConfig(t, p))} {
			for i, resumed := range []bool{false, true} {
				r := newClientRec()
				ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
				_, err := engine.Dial(ctx, loop, "tcp", addr, looptls.Client(r, cfg))
				cancel()
				require.NoError(t, err)
				st := <-r.opens
				require.Equal(t, "http/1.1", st.NegotiatedProtocol, name)
				require.Equal(t, "localhost", st.PeerCertificates[0].Subject.CommonName)
				require.Equal(t, resumed, st.DidResume, "%s: connection %d", name, i)
				require.Equal(t, "hello from the loop", <-r.data)
				require.NoError(t, <-r.closes)
			}
		}
	})
}

// pauser pauses reading on every delivery and hands the connection to a
// goroutine that resumes it; a delivery while paused is a failure.
type pauser struct {
	paused atomic.Bool
	wrong  atomic.Int32
	got    atomic.Int64
	resume chan *engine.Conn
	closes chan error
}

func (h *pauser) OnOpen(c *engine.Conn) {}
func (h *pauser) OnData(c *engine.Conn, b []byte) {
	if h.paused.Load() {
		h.wrong.Add(1)
	}
	h.got.Add(int64(len(b)))
	_, _ = c.Write(b[:1]) // an acknowledgement per delivery
	h.paused.Store(true)
	c.PauseRead()
	h.resume <- c
}
func (h *pauser) OnClose(_ *engine.Conn, err error) { h.closes <- err }

// TestPauseAndAsyncWrite: PauseRead holds the records already received
// until ResumeRead (off the loop) delivers them; AsyncWrite from another
// goroutine encrypts on the loop, in order, before Close's close_notify.
func TestPauseAndAsyncWrite(t *testing.T) {
	p := testenv.NewPKI(t)
	testenv.ForEach(t, func(t *testing.T, c testenv.Combo) {
		testenv.CheckLeaks(t)
		h := &pauser{resume: make(chan *engine.Conn, 1024), closes: make(chan error, 1)}
		addr := serve(t, c, h, serverConfig(t, p))
		tc := dial(t, addr, clientConfig(p))
		require.NoError(t, tc.SetDeadline(time.Now().Add(60*time.Second)))
		const total = 200_000
		go func() { // many records, so that some wait while paused
			for off := 0; off < total; off += 1000 {
				if _, err := tc.Write(payload(total)[off : off+1000]); err != nil {
					return
				}
			}
		}()
		var sc *engine.Conn
		for h.got.Load() < total {
			sc = <-h.resume
			h.paused.Store(false)
			sc.ResumeRead()
		}
		require.Zero(t, h.wrong.Load(), "deliveries while paused")
		require.EqualValues(t, total, h.got.Load())
		// Drain the acknowledgements, then stream from a goroutine.
		ack := make([]byte, 1)
		go func() {
			for i := 0; i < 1000; i++ {
				if err := sc.AsyncWrite(payload(1000)); err != nil {
					if errors.Is(err, engine.ErrWriteBufferFull) {
						i--
						runtime.Gosched()
						continue
					}
					return
				}
			}
			_ = sc.Close()
		}()
		var rest []byte
		for {
			n, err := tc.Read(ack)
			if err != nil {
				require.ErrorIs(t, err, io.EOF)
				break
			}
			rest = append(rest, ack[:n]...)
		}
		// rest is the acknowledgements followed by 1000 copies of the
		// 1000-byte pattern.
		require.GreaterOrEqual(t, len(rest), 1000*1000)
		body := rest[len(rest)-1000*1000:]
		for i := 0; i < 1000; i++ {
			require.Equal(t, payload(1000), body[i*1000:(i+1)*1000], "chunk %d", i)
		}
		require.NoError(t, <-h.closes)
	})
}

// TestHandshakeByteBound: with a bound far below one flight, reading
// pauses while the handshake catches up and resumes once it has read:
// handshakes with a client certificate chain still complete.
func TestHandshakeByteBound(t *testing.T) {
	p := testenv.NewPKI(t)
	client := p.Leaf(t, "client-1")
	testenv.ForEach(t, func(t *testing.T, c testenv.Combo) {
		testenv.CheckLeaks(t)
		r := newRecorder()
		cfg := serverConfig(t, p)
		cfg.ClientAuth = tls.RequireAndVerifyClientCert
		cfg.ClientCAs = p.Pool
		addr := serve(t, c, r, cfg, looptls.WithMaxHandshakeBytes(64))
		for range 3 {
			ccfg := clientConfig(p)
			ccfg.Certificates = []tls.Certificate{client}
			tc := dial(t, addr, ccfg)
			roundTrip(t, tc, string(payload(50_000)))
			require.Equal(t, "client-1", (<-r.opens).state.PeerCertificates[0].Subject.CommonName)
		}
	})
}

// flood writes 4 MiB on open, past the high watermark, and reports
// writability changes.
type flood struct {
	changes chan bool
}

func (f *flood) OnOpen(c *engine.Conn) {
	_, _ = c.Write(payload(2 << 20))
	_, _ = c.Write(payload(2 << 20))
}
func (f *flood) OnData(*engine.Conn, []byte) {}
func (f *flood) OnClose(*engine.Conn, error) {}
func (f *flood) OnWritabilityChanged(_ *engine.Conn, w bool) {
	f.changes <- w
}

// TestWritability: the watermarks count what waits for the socket
// (plaintext to encrypt and ciphertext), and a WritabilityHandler learns
// of their crossings.
func TestWritability(t *testing.T) {
	p := testenv.NewPKI(t)
	testenv.ForEach(t, func(t *testing.T, c testenv.Combo) {
		testenv.CheckLeaks(t)
		f := &flood{changes: make(chan bool, 16)}
		addr := serve(t, c, f, serverConfig(t, p))
		tc := dial(t, addr, clientConfig(p))
		require.NoError(t, tc.SetDeadline(time.Now().Add(60*time.Second)))
		got := make([]byte, 4<<20)
		_, err := io.ReadFull(tc, got)
		require.NoError(t, err)
		require.Equal(t, payload(2<<20), got[:2<<20])
		require.Equal(t, payload(2<<20), got[2<<20:])
		require.False(t, <-f.changes)
		require.True(t, <-f.changes)
	})
}

// halfCloser answers "bye" with "ok" and CloseWrite, and reports every
// later delivery and the close.
type halfCloser struct {
	data   chan string
	closes chan error
}

func (h *halfCloser) OnOpen(*engine.Conn) {}
func (h *halfCloser) OnData(c *engine.Conn, b []byte) {
	if string(b) == "bye" {
		_, _ = c.Write([]byte("ok"))
		_ = c.CloseWrite()
		return
	}
	h.data <- string(b)
}
func (h *halfCloser) OnClose(_ *engine.Conn, err error) { h.closes <- err }

// TestCloseWrite: CloseWrite sends what was written and close_notify (the
// client reads a clean EOF), and the server still reads what the client
// sends afterwards, until the client closes.
func TestCloseWrite(t *testing.T) {
	p := testenv.NewPKI(t)
	testenv.ForEach(t, func(t *testing.T, c testenv.Combo) {
		testenv.CheckLeaks(t)
		h := &halfCloser{data: make(chan string, 16), closes: make(chan error, 1)}
		addr := serve(t, c, h, serverConfig(t, p))
		tc := dial(t, addr, clientConfig(p))
		require.NoError(t, tc.SetDeadline(time.Now().Add(60*time.Second)))
		_, err := tc.Write([]byte("bye"))
		require.NoError(t, err)
		b, err := io.ReadAll(tc)
		require.NoError(t, err, "close_notify ends the stream cleanly")
		require.Equal(t, "ok", string(b))
		_, err = tc.Write([]byte("after"))
		require.NoError(t, err)
		require.Equal(t, "after", <-h.data)
		require.NoError(t, tc.Close())
		require.Error(t, <-h.closes)
	})
}

// counter counts what it receives and, once the peer has finished
// sending, answers with the count and closes: an engine.HalfCloseHandler.
type counter struct {
	n      int
	ends   chan struct{}
	closes chan error
}

func (h *counter) OnOpen(*engine.Conn)               { h.n = 0 }
func (h *counter) OnData(_ *engine.Conn, b []byte)   { h.n += len(b) }
func (h *counter) OnClose(_ *engine.Conn, err error) { h.closes <- err }
func (h *counter) OnReadClosed(c *engine.Conn) {
	h.ends <- struct{}{}
	_, _ = fmt.Fprintf(c, "got %d", h.n)
	_ = c.Close()
}

// TestHalfClose: a peer that ends its sending with close_notify, with a
// bare TCP FIN, or with a FIN right behind its handshake and data (before
// the server's handshake is done) leaves the connection open for the
// handler's answer, after every byte it sent was delivered.
func TestHalfClose(t *testing.T) {
	p := testenv.NewPKI(t)
	testenv.ForEach(t, func(t *testing.T, c testenv.Combo) {
		testenv.CheckLeaks(t)
		h := &counter{ends: make(chan struct{}, 16), closes: make(chan error, 16)}
		addr := serve(t, c, h, serverConfig(t, p))
		for _, end := range []string{"close_notify", "FIN", "FIN in handshake"} {
			raw, err := net.Dial("tcp", addr)
			require.NoError(t, err)
			tc := tls.Client(raw, clientConfig(p))
			require.NoError(t, tc.SetDeadline(time.Now().Add(60*time.Second)))
			if end != "FIN in handshake" {
				require.NoError(t, tc.Handshake())
			}
			_, err = tc.Write(payload(300 << 10))
			require.NoError(t, err, end)
			if end == "close_notify" {
				require.NoError(t, tc.CloseWrite())
			} else {
				require.NoError(t, raw.(*net.TCPConn).CloseWrite())
			}
			b, err := io.ReadAll(tc)
			require.NoError(t, err, end)
			require.Equal(t, fmt.Sprintf("got %d", 300<<10), string(b), end)
			<-h.ends
			require.NoError(t, <-h.closes, end)
			_ = tc.Close()
		}
	})
}

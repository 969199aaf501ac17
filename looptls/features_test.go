package looptls_test

import (
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ringloop/ringloop/engine"
	"github.com/ringloop/ringloop/internal/testenv"
	"github.com/ringloop/ringloop/looptls"
)

// roundTrip writes msg and reads it back.
func roundTrip(t *testing.T, tc *tls.Conn, msg string) {
	t.Helper()
	require.NoError(t, tc.SetDeadline(time.Now().Add(60*time.Second)))
	_, err := tc.Write([]byte(msg))
	require.NoError(t, err)
	got := make([]byte, len(msg))
	_, err = io.ReadFull(tc, got)
	require.NoError(t, err)
	require.Equal(t, msg, string(got))
}

// TestResumption: a client with a session cache resumes its session on the
// second connection (tickets, TLS 1.2 and 1.3), and the handler sees it.
func TestResumption(t *testing.T) {
	p := testenv.NewPKI(t)
	testenv.ForEach(t, func(t *testing.T, c testenv.Combo) {
		for _, v := range []uint16{tls.VersionTLS12, tls.VersionTLS13} {
			t.Run(tls.VersionName(v), func(t *testing.T) {
				testenv.CheckLeaks(t)
				r := newRecorder()
				addr := serve(t, c, r, serverConfig(t, p))
				cfg := clientConfig(p)
				cfg.MaxVersion = v
				cfg.ClientSessionCache = tls.NewLRUClientSessionCache(4)
				for i, resumed := range []bool{false, true} {
					tc, err := tls.Dial("tcp", addr, cfg)
					require.NoError(t, err)
					roundTrip(t, tc, "ping") // a TLS 1.3 ticket is read after the handshake
					require.Equal(t, resumed, tc.ConnectionState().DidResume, "connection %d", i)
					require.Equal(t, resumed, (<-r.opens).state.DidResume, "connection %d, server side", i)
					require.NoError(t, tc.Close())
					require.ErrorIs(t, <-r.closes, io.EOF)
				}
			})
		}
	})
}

// TestSNI: GetCertificate picks one of two certificates by the name the
// client asks for; each client verifies the one for its name.
func TestSNI(t *testing.T) {
	p := testenv.NewPKI(t)
	certs := map[string]tls.Certificate{"a.test": p.Leaf(t, "a.test", "a.test"), "b.test": p.Leaf(t, "b.test", "b.test")}
	testenv.ForEach(t, func(t *testing.T, c testenv.Combo) {
		testenv.CheckLeaks(t)
		r := newRecorder()
		addr := serve(t, c, r, &tls.Config{GetCertificate: func(hi *tls.ClientHelloInfo) (*tls.Certificate, error) {
			if cert, ok := certs[hi.ServerName]; ok {
				return &cert, nil
			}
			return nil, fmt.Errorf("no certificate for %q", hi.ServerName)
		}})
		for _, name := range []string{"a.test", "b.test"} {
			tc, err := tls.Dial("tcp", addr, &tls.Config{RootCAs: p.Pool, ServerName: name})
			require.NoError(t, err)
			roundTrip(t, tc, "hi "+name)
			require.Equal(t, name, tc.ConnectionState().PeerCertificates[0].Subject.CommonName)
			require.Equal(t, name, (<-r.opens).state.ServerName)
			require.NoError(t, tc.Close())
			require.ErrorIs(t, <-r.closes, io.EOF)
		}
		// A name with no certificate fails the handshake on both sides.
		_, err := tls.Dial("tcp", addr, &tls.Config{RootCAs: p.Pool, ServerName: "c.test"})
		require.Error(t, err)
		err = <-r.hsErrs
		require.ErrorIs(t, err, looptls.ErrHandshake)
		require.ErrorContains(t, err, `no certificate for "c.test"`)
	})
}

// TestClientAuth: a server that requires client certificates sees the
// verified chain of a client that has one and refuses one that has none.
func TestClientAuth(t *testing.T) {
	p := testenv.NewPKI(t)
	client := p.Leaf(t, "client-1")
	testenv.ForEach(t, func(t *testing.T, c testenv.Combo) {
		testenv.CheckLeaks(t)
		r := newRecorder()
		cfg := serverConfig(t, p)
		cfg.ClientAuth = tls.RequireAndVerifyClientCert
		cfg.ClientCAs = p.Pool
		addr := serve(t, c, r, cfg)

		ccfg := clientConfig(p)
		ccfg.Certificates = []tls.Certificate{client}
		tc, err := tls.Dial("tcp", addr, ccfg)
		require.NoError(t, err)
		roundTrip(t, tc, "with a certificate")
		o := <-r.opens
		require.Len(t, o.state.PeerCertificates, 1)
		require.Equal(t, "client-1", o.state.PeerCertificates[0].Subject.CommonName)
		require.Len(t, o.state.VerifiedChains, 1)
		require.NoError(t, tc.Close())
		require.ErrorIs(t, <-r.closes, io.EOF)

		// Without one: the server's alert reaches the client (in TLS 1.3
		// on its first read), and the handler learns why.
		tc, err = tls.Dial("tcp", addr, clientConfig(p))
		if err == nil {
			require.NoError(t, tc.SetDeadline(time.Now().Add(60*time.Second)))
			_, err = tc.Read(make([]byte, 1))
			tc.Close()
		}
		require.ErrorContains(t, err, "certificate required")
		err = <-r.hsErrs
		require.ErrorIs(t, err, looptls.ErrHandshake)
		require.ErrorContains(t, err, "client didn't provide a certificate")
	})
}

// TestPeerRefusesCertificate: a client that does not trust the server's
// certificate sends an alert; the handler learns of it as a handshake
// error naming the alert.
func TestPeerRefusesCertificate(t *testing.T) {
	p, other := testenv.NewPKI(t), testenv.NewPKI(t)
	testenv.ForEach(t, func(t *testing.T, c testenv.Combo) {
		testenv.CheckLeaks(t)
		r := newRecorder()
		addr := serve(t, c, r, serverConfig(t, p))
		_, err := tls.Dial("tcp", addr, clientConfig(other))
		var uae x509.UnknownAuthorityError
		require.ErrorAs(t, err, &uae)
		err = <-r.hsErrs
		require.ErrorIs(t, err, looptls.ErrHandshake)
		require.ErrorContains(t, err, "remote error: tls: bad certificate")
	})
}

// byteConn writes one byte per system call (with TCP_NODELAY: one segment
// each, as far as the kernel goes).
type byteConn struct{ net.Conn }

func (b byteConn) Write(p []byte) (int, error) {
	for i := range p {
		if _, err := b.Conn.Write(p[i : i+1]); err != nil {
			return i, err
		}
	}
	return len(p), nil
}

// TestByteAtATime: a peer that sends its handshake and a 16 KiB record one
// byte at a time is served.
func TestByteAtATime(t *testing.T) {
	p := testenv.NewPKI(t)
	testenv.ForEach(t, func(t *testing.T, c testenv.Combo) {
		testenv.CheckLeaks(t)
		r := newRecorder()
		addr := serve(t, c, r, serverConfig(t, p))
		raw, err := net.Dial("tcp", addr)
		require.NoError(t, err)
		tc := tls.Client(byteConn{raw}, clientConfig(p))
		defer tc.Close()
		roundTrip(t, tc, string(payload(16<<10+5)))
		<-r.opens
	})
}

// TestStalledHandshake: a peer that sends half a ClientHello and stalls is
// cut by the handshake timeout; the handler learns ErrHandshakeTimeout and
// the peer reads the end of the connection.
func TestStalledHandshake(t *testing.T) {
	p := testenv.NewPKI(t)
	// The first bytes of a real ClientHello.
	var hello bytes.Buffer
	{
		a, b := net.Pipe()
		go func() {
			_ = tls.Client(a, clientConfig(p)).Handshake()
		}()
		buf := make([]byte, 64)
		n, _ := io.ReadFull(b, buf)
		hello.Write(buf[:n])
		a.Close()
		b.Close()
	}
	testenv.ForEach(t, func(t *testing.T, c testenv.Combo) {
		testenv.CheckLeaks(t)
		r := newRecorder()
		addr := serve(t, c, r, serverConfig(t, p), looptls.WithHandshakeTimeout(200*time.Millisecond))
		raw, err := net.Dial("tcp", addr)
		require.NoError(t, err)
		defer raw.Close()
		_, err = raw.Write(hello.Bytes())
		require.NoError(t, err)
		err = <-r.hsErrs
		require.ErrorIs(t, err, looptls.ErrHandshakeTimeout)
		require.ErrorIs(t, err, looptls.ErrHandshake)
		require.NoError(t, raw.SetReadDeadline(time.Now().Add(60*time.Second)))
		_, err = io.Copy(io.Discard, raw)
		require.True(t, err == nil || errors.Is(err, net.ErrClosed) || isReset(err), "peer's read: %v", err)
		require.Empty(t, r.opens)
	})
}

func isReset(err error) bool {
	var ne *net.OpError
	return errors.As(err, &ne) && !ne.Timeout()
}

// corruptConn flips a bit of the next record it writes once armed.
type corruptConn struct {
	net.Conn
	arm bool
}

func (cc *corruptConn) Write(p []byte) (int, error) {
	if cc.arm {
		cc.arm = false
		q := append([]byte(nil), p...)
		q[len(q)-1] ^= 1 // the AEAD tag
		return cc.Conn.Write(q)
	}
	return cc.Conn.Write(p)
}

// TestCorruptedRecord: a record that fails authentication closes the
// connection: the handler's OnClose names the error, and the peer gets
// the bad_record_mac alert.
func TestCorruptedRecord(t *testing.T) {
	p := testenv.NewPKI(t)
	testenv.ForEach(t, func(t *testing.T, c testenv.Combo) {
		for _, v := range []uint16{tls.VersionTLS12, tls.VersionTLS13} {
			t.Run(tls.VersionName(v), func(t *testing.T) {
				testenv.CheckLeaks(t)
				r := newRecorder()
				addr := serve(t, c, r, serverConfig(t, p))
				raw, err := net.Dial("tcp", addr)
				require.NoError(t, err)
				cc := &corruptConn{Conn: raw}
				cfg := clientConfig(p)
				cfg.MaxVersion = v
				tc := tls.Client(cc, cfg)
				defer tc.Close()
				roundTrip(t, tc, "fine")
				cc.arm = true
				_, err = tc.Write([]byte("corrupted"))
				require.NoError(t, err)
				_, err = tc.Read(make([]byte, 16))
				require.ErrorContains(t, err, "bad record MAC")
				err = <-r.closes
				require.ErrorContains(t, err, "looptls: local error: tls: bad record MAC")
			})
		}
	})
}

// halfConn, once armed, writes only the first half of the next record and
// closes.
type halfConn struct {
	net.Conn
	arm bool
}

func (hc *halfConn) Write(p []byte) (int, error) {
	if hc.arm {
		_, _ = hc.Conn.Write(p[:len(p)/2])
		_ = hc.Conn.(*net.TCPConn).CloseWrite()
		return len(p), nil
	}
	return hc.Conn.Write(p)
}

// TestTruncatedRecord: a peer that closes inside a record ends the
// connection with io.ErrUnexpectedEOF, one that closes between records
// with io.EOF.
func TestTruncatedRecord(t *testing.T) {
	p := testenv.NewPKI(t)
	testenv.ForEach(t, func(t *testing.T, c testenv.Combo) {
		testenv.CheckLeaks(t)
		r := newRecorder()
		addr := serve(t, c, r, serverConfig(t, p))
		for _, half := range []bool{true, false} {
			raw, err := net.Dial("tcp", addr)
			require.NoError(t, err)
			hc := &halfConn{Conn: raw}
			tc := tls.Client(hc, clientConfig(p))
			roundTrip(t, tc, "fine")
			<-r.opens
			if half {
				hc.arm = true
				_, err = tc.Write([]byte("a record cut in two"))
				require.NoError(t, err)
				require.ErrorIs(t, <-r.closes, io.ErrUnexpectedEOF)
			} else {
				require.NoError(t, raw.(*net.TCPConn).CloseWrite()) // no close_notify
				require.ErrorIs(t, <-r.closes, io.EOF)
			}
			raw.Close()
		}
	})
}

// TestKeep: plaintext a handler keeps comes back in front of the next
// record's; a peer that leaves a frame unfinished ends with
// io.ErrUnexpectedEOF; a handler that keeps more than the keep limit gets
// engine.ErrKeepLimit.
func TestKeep(t *testing.T) {
	p := testenv.NewPKI(t)
	testenv.ForEach(t, func(t *testing.T, c testenv.Combo) {
		testenv.CheckLeaks(t)
		r := newRecorder()
		r.http, r.ackKeep = true, true
		addr := serveWith(t, c, r, serverConfig(t, p), nil, engine.WithBufferLimits(engine.BufferLimits{Keep: 64}))
		tc := dial(t, addr, clientConfig(p))
		require.NoError(t, tc.SetDeadline(time.Now().Add(60*time.Second)))
		k := make([]byte, 1)
		for _, part := range []string{"GET / HTTP/1.1\r\n", "Host: x\r\n"} {
			_, err := tc.Write([]byte(part))
			require.NoError(t, err)
			_, err = io.ReadFull(tc, k) // kept
			require.NoError(t, err)
			require.Equal(t, "k", string(k))
		}
		_, err := tc.Write([]byte("\r\n"))
		require.NoError(t, err)
		b, err := io.ReadAll(tc)
		require.NoError(t, err)
		require.Equal(t, "HTTP/1.1 200 OK\r\nContent-Length: 6\r\nConnection: close\r\n\r\nhello\n", string(b))
		require.NoError(t, <-r.closes)

		// A peer that leaves with a frame unfinished.
		tc = dial(t, addr, clientConfig(p))
		_, err = tc.Write([]byte("GET / HTTP/1.1\r\n"))
		require.NoError(t, err)
		_, err = io.ReadFull(tc, k)
		require.NoError(t, err)
		require.NoError(t, tc.Close())
		require.ErrorIs(t, <-r.closes, io.ErrUnexpectedEOF)

		tc = dial(t, addr, clientConfig(p))
		_, err = tc.Write(bytes.Repeat([]byte("x"), 65))
		require.NoError(t, err)
		require.ErrorIs(t, <-r.closes, engine.ErrKeepLimit)
	})
}

// plaintexter is a recorder that answers a peer speaking plaintext to
// the TLS port from its OnHandshakeError, as net/http does: through the
// tls.RecordHeaderError's Conn.
type plaintexter struct {
	*recorder
	heads chan string
}

func (p plaintexter) OnHandshakeError(c *engine.Conn, err error) {
	var rh tls.RecordHeaderError
	if errors.As(err, &rh) && rh.Conn != nil {
		p.heads <- string(rh.RecordHeader[:])
		_, _ = rh.Conn.Write([]byte("not TLS: " + string(rh.RecordHeader[:]) + "\n"))
	}
	p.recorder.OnHandshakeError(c, err)
}

// TestPlaintextPeer: a peer that sends plaintext to the TLS port fails the
// handshake; OnHandshakeError gets its first five bytes (the record header
// crypto/tls refused) before the close and its answer reaches the peer,
// then EOF; without one the peer gets nothing but the close. A TLS peer
// never gets there.
func TestPlaintextPeer(t *testing.T) {
	p := testenv.NewPKI(t)
	testenv.ForEach(t, func(t *testing.T, c testenv.Combo) {
		testenv.CheckLeaks(t)
		for _, answer := range []bool{true, false} {
			r := newRecorder()
			var h engine.Handler = r
			pt := plaintexter{r, make(chan string, 4)}
			if answer {
				h = pt
			}
			addr := serve(t, c, h, serverConfig(t, p))
			tc, err := tls.Dial("tcp", addr, clientConfig(p))
			require.NoError(t, err)
			roundTrip(t, tc, "hello")
			require.NoError(t, tc.Close())

			raw, err := net.Dial("tcp", addr)
			require.NoError(t, err)
			_, err = io.WriteString(raw, "PING\r\n")
			require.NoError(t, err)
			require.NoError(t, raw.SetReadDeadline(time.Now().Add(60*time.Second)))
			out, err := io.ReadAll(raw)
			require.True(t, err == nil || isReset(err), "peer's read: %v", err)
			require.NoError(t, raw.Close())
			require.ErrorIs(t, <-r.hsErrs, looptls.ErrHandshake)
			if answer {
				require.Equal(t, "not TLS: PING\r\n", string(out))
				require.Equal(t, "PING\r", <-pt.heads)
			} else {
				require.Empty(t, out)
			}
			require.Empty(t, pt.heads, "an answer once, for the plaintext peer only")
		}
	})
}

// switcher hands its connection to next in OnData when a line "switch"
// arrives, with the bytes behind it pending; before that it echoes with
// "A:". It reports Reading off the loop, before the hand-over and after
// it.
type switcher struct {
	next    engine.Handler
	offLoop chan error
	reading chan [3]bool
}

func (s *switcher) OnOpen(c *engine.Conn) {
	go func() { s.offLoop <- c.SetHandler(s.next, nil) }()
}

func (s *switcher) OnData(c *engine.Conn, b []byte) {
	i := bytes.Index(b, []byte("switch\n"))
	if i < 0 {
		_, _ = c.Write(append([]byte("A:"), b...))
		return
	}
	_, _ = c.Write(append([]byte("A:"), b[:i]...))
	off := make(chan bool)
	go func() { off <- c.Reading() }()
	var r [3]bool
	r[0], r[1] = <-off, c.Reading()
	if err := c.SetHandler(s.next, b[i+len("switch\n"):]); err != nil {
		_, _ = c.Write([]byte("SetHandler: " + err.Error()))
		return
	}
	r[2] = c.Reading()
	s.reading <- r
}

func (s *switcher) OnClose(*engine.Conn, error) {}

// prefixer echoes with "B:", says hello on open and records its close.
type prefixer struct{ closes chan error }

func (p *prefixer) OnOpen(c *engine.Conn)           { _, _ = c.Write([]byte("B open\n")) }
func (p *prefixer) OnData(c *engine.Conn, b []byte) { _, _ = c.Write(append([]byte("B:"), b...)) }
func (p *prefixer) OnClose(_ *engine.Conn, err error) {
	p.closes <- err
}

// TestSetHandler: SetHandler inside OnData hands the connection over: the
// new handler's OnOpen runs at once, the bytes pending reach it first and
// every later record too, and the peer's close_notify ends the connection
// for the new handler. Off the loop SetHandler is refused. Reading is true
// in OnData until the hand-over, false after it and off the loop.
func TestSetHandler(t *testing.T) {
	p := testenv.NewPKI(t)
	testenv.ForEach(t, func(t *testing.T, c testenv.Combo) {
		testenv.CheckLeaks(t)
		b := &prefixer{closes: make(chan error, 1)}
		a := &switcher{next: b, offLoop: make(chan error, 1), reading: make(chan [3]bool, 1)}
		addr := serve(t, c, a, serverConfig(t, p))
		tc, err := tls.Dial("tcp", addr, clientConfig(p))
		require.NoError(t, err)
		defer tc.Close()
		require.NoError(t, tc.SetDeadline(time.Now().Add(60*time.Second)))
		require.Error(t, <-a.offLoop, "SetHandler off the loop")
		_, err = io.WriteString(tc, "one\n")
		require.NoError(t, err)
		want := "A:one\n"
		got := make([]byte, len(want))
		_, err = io.ReadFull(tc, got)
		require.NoError(t, err)
		require.Equal(t, want, string(got))

		_, err = io.WriteString(tc, "two\nswitch\nabc")
		require.NoError(t, err)
		want = "A:two\nB open\nB:abc"
		got = make([]byte, len(want))
		_, err = io.ReadFull(tc, got)
		require.NoError(t, err)
		require.Equal(t, want, string(got))
		require.Equal(t, [3]bool{false, true, false}, <-a.reading, "Reading off the loop, before and after the hand-over")

		_, err = io.WriteString(tc, "def")
		require.NoError(t, err)
		want = "B:def"
		got = make([]byte, len(want))
		_, err = io.ReadFull(tc, got)
		require.NoError(t, err)
		require.Equal(t, want, string(got))
		require.NoError(t, tc.CloseWrite())
		require.ErrorIs(t, <-b.closes, io.EOF, "close_notify ends the connection for the new handler")
	})
}

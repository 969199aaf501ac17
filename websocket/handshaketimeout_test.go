package websocket_test

import (
	"bufio"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ringloop/ringloop/engine"
	"github.com/ringloop/ringloop/internal/testenv"
	"github.com/ringloop/ringloop/websocket"
)

// shortHandshake is the handshake timeout the tests configure: the
// listener handlers' Timeouts.Handshake, the HTTP servers' ReadHeader.
const shortHandshake = 300 * time.Millisecond

// cutWithin is how long a test waits for a stalled client to be cut: far
// more than shortHandshake plus a timer tick, so that a loaded machine
// passes, and far less than the trickled request takes to send (25 s).
const cutWithin = 15 * time.Second

// serveShort starts path's server with the short handshake timeout, set
// where that path takes it.
func serveShort(t *testing.T, path upgradePath, loop *engine.Loop, p *testenv.PKI, h websocket.Handler) string {
	t.Helper()
	a := serveArgs{h: h}
	if strings.HasPrefix(path.name, "Upgrade") {
		a.hs.ReadHeader = shortHandshake
	} else {
		a.handshake = shortHandshake
	}
	return path.serve(t, loop, p, a)
}

// TestHandshakeTimeout: on every upgrade path, with the handshake timeout
// set short, a client that connects and sends nothing (over TLS: not even
// its ClientHello, or nothing after the TLS handshake) and one that
// trickles a valid upgrade request a byte every 100 ms are closed without
// an answer, well before the request could have been whole; a request sent
// promptly is upgraded (tried again where the machine is too slow to send
// it within the timeout and is cut late), and the connection outlives the
// timeout. The
// probes of a combo run at once (they mostly wait on timers).
func TestHandshakeTimeout(t *testing.T) {
	p := testenv.NewPKI(t)
	testenv.ForEach(t, func(t *testing.T, c testenv.Combo) {
		testenv.CheckLeaks(t)
		loop, err := engine.New(c.Options()...)
		require.NoError(t, err)
		t.Cleanup(func() { require.NoError(t, loop.Close()) })
		type result struct {
			name string
			cut  time.Duration
			err  error
		}
		results := make(chan result, 4*len(upgradePaths))
		var wg sync.WaitGroup
		probe := func(name string, fn func() (time.Duration, error)) {
			wg.Add(1)
			go func() {
				defer wg.Done()
				d, err := fn()
				results <- result{name, d, err}
			}()
		}
		for _, path := range upgradePaths {
			var pki *testenv.PKI
			if path.tls {
				pki = p
			}
			addr := serveShort(t, path, loop, pki, silentEcho{})
			req := browserHandshake(addr, "")
			probe(path.name+"/silent", func() (time.Duration, error) {
				start := time.Now()
				conn, err := net.DialTimeout("tcp", addr, 10*time.Second)
				if err != nil {
					return 0, err
				}
				defer conn.Close()
				return expectCut(conn, start)
			})
			if path.tls {
				probe(path.name+"/silent after TLS", func() (time.Duration, error) {
					start := time.Now()
					conn, err := dialClient(addr, pki)
					if err != nil {
						return 0, err
					}
					defer conn.Close()
					return expectCut(conn, start)
				})
			}
			probe(path.name+"/trickle", func() (time.Duration, error) {
				start := time.Now()
				conn, err := dialClient(addr, pki)
				if err != nil {
					return 0, err
				}
				stop := trickle(conn, req, 100*time.Millisecond)
				defer stop()
				return expectCut(conn, start)
			})
			probe(path.name+"/prompt", func() (time.Duration, error) {
				// A machine too slow to finish the TLS handshake and the
				// request within the short timeout is cut, as it should
				// be: a cut before the timeout, an answer other than the
				// upgrade, or a cut after it fails; a late cut tries again.
				for attempt := 1; ; attempt++ {
					start := time.Now()
					conn, err := dialClient(addr, pki)
					answered := false
					if err == nil {
						answered, err = promptUpgrade(conn, req)
						conn.Close()
					}
					if err == nil || answered || time.Since(start) < shortHandshake || attempt == 20 {
						return 0, err
					}
				}
			})
		}
		wg.Wait()
		close(results)
		for r := range results {
			switch {
			case r.err != nil:
				t.Errorf("%s: %v", r.name, r.err)
			case r.cut > 0:
				t.Logf("%s: cut after %v", r.name, r.cut)
			}
		}
	})
}

// promptUpgrade sends req at once and expects the 101, and then, past the
// timeout, the connection to be the WebSocket's: the handshake's timer is
// gone, and a message is echoed. answered reports whether the server
// answered the request at all.
func promptUpgrade(conn net.Conn, req string) (answered bool, err error) {
	if _, err := io.WriteString(conn, req); err != nil {
		return false, err
	}
	r := bufio.NewReader(conn)
	resp, err := http.ReadResponse(r, nil)
	if err != nil {
		return false, err
	}
	if resp.StatusCode != http.StatusSwitchingProtocols {
		return true, fmt.Errorf("answered %s", resp.Status)
	}
	time.Sleep(3 * shortHandshake) // what a timer left armed would cut
	if _, err := conn.Write(frame(finText, []byte("still here"), true)); err != nil {
		return true, err
	}
	f, err := (&rawConn{conn, r}).read()
	if err != nil {
		return true, fmt.Errorf("reading the echo past the handshake timeout: %w", err)
	}
	if string(f.payload) != "still here" {
		return true, fmt.Errorf("echo %q", f.payload)
	}
	return true, nil
}

// dialClient is dialPath without a testing.T, for a probe's goroutine.
func dialClient(addr string, p *testenv.PKI) (net.Conn, error) {
	conn, err := net.DialTimeout("tcp", addr, 10*time.Second)
	if err != nil {
		return nil, err
	}
	_ = conn.SetDeadline(time.Now().Add(60 * time.Second))
	if p != nil {
		tc := tls.Client(conn, &tls.Config{RootCAs: p.Pool, ServerName: "127.0.0.1"})
		if err := tc.Handshake(); err != nil {
			conn.Close()
			return nil, err
		}
		conn = tc
	}
	return conn, nil
}

// trickle writes s to conn a byte every gap on a goroutine until a write
// fails or stop is called (which waits for the goroutine).
func trickle(conn net.Conn, s string, gap time.Duration) (stop func()) {
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		tick := time.NewTicker(gap)
		defer tick.Stop()
		for i := 0; i < len(s); i++ {
			if _, err := conn.Write([]byte{s[i]}); err != nil {
				return
			}
			select {
			case <-done:
				return
			case <-tick.C:
			}
		}
	}()
	return func() { close(done); conn.Close(); wg.Wait() }
}

// expectCut reads conn until the server closes it, failing on any byte it
// answers and when it is still open cutWithin after start; it returns how
// long after start the close came.
func expectCut(conn net.Conn, start time.Time) (time.Duration, error) {
	_ = conn.SetReadDeadline(start.Add(cutWithin))
	var b [512]byte
	for {
		n, err := conn.Read(b[:])
		if n > 0 {
			return 0, fmt.Errorf("the server answered a stalled handshake: %q", b[:n])
		}
		var ae tls.AlertError
		switch {
		case err == nil:
			continue
		case errors.Is(err, os.ErrDeadlineExceeded):
			return 0, fmt.Errorf("still open %v after the client connected (handshake timeout %v)", cutWithin, shortHandshake)
		case err == io.EOF, strings.Contains(err.Error(), "reset"), errors.As(err, &ae):
			return time.Since(start), nil
		default:
			return 0, fmt.Errorf("reading a stalled handshake's connection: %w", err)
		}
	}
}

// TestHandshakeTimeoutDefault: the listeners' default is the HTTP server's
// read-header default, which bounds the request head behind Upgrade and
// UpgradeFast, so every path cuts a stalled handshake alike by default;
// Upgrade and UpgradeFast refuse Timeouts.Handshake, naming the timeout
// that applies there.
func TestHandshakeTimeoutDefault(t *testing.T) {
	_, err := websocket.EngineHandler(silentEcho{}, websocket.WithTimeouts(websocket.Timeouts{Handshake: time.Second}))
	require.NoError(t, err)
	_, err = websocket.EngineHandler(silentEcho{}, websocket.WithTimeouts(websocket.Timeouts{Handshake: -time.Second}))
	require.ErrorContains(t, err, "expected >= 0")
}

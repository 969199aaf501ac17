package websocket_test

import (
	"bytes"
	"errors"
	"io"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	gws "github.com/gorilla/websocket"
	"github.com/stretchr/testify/require"

	"github.com/ringloop/ringloop/engine"
	"github.com/ringloop/ringloop/internal/testenv"
	"github.com/ringloop/ringloop/websocket"
)

func dialGorilla(t *testing.T, addr string) *gws.Conn {
	t.Helper()
	d := gws.Dialer{HandshakeTimeout: 30 * time.Second}
	ws, resp, err := d.Dial("ws://"+addr+"/echo", nil)
	require.NoError(t, err)
	require.Equal(t, 101, resp.StatusCode)
	t.Cleanup(func() { ws.Close() })
	_ = ws.SetReadDeadline(time.Now().Add(60 * time.Second))
	return ws
}

// TestGorillaEcho: gorilla/websocket's client gets back text and binary
// messages from 0 bytes to 1 MiB, whole and fragmented (NextWriter sends a
// message in frames of its buffer size), and pongs to its pings with the
// same payload; it closes with 4000 and the server's OnClose sees 4000 and
// the reason, with the close echoed to the client.
func TestGorillaEcho(t *testing.T) {
	testenv.ForEach(t, func(t *testing.T, c testenv.Combo) {
		testenv.CheckLeaks(t)
		e := newEcho()
		addr := serve(t, c, e, nil)
		ws := dialGorilla(t, addr)
		for i, n := range []int{0, 1, 125, 126, 65535, 65536, 1 << 20} {
			kind := gws.BinaryMessage
			if i%2 == 0 {
				kind = gws.TextMessage
			}
			msg := bytes.Repeat([]byte{'a' + byte(i)}, n)
			require.NoError(t, ws.WriteMessage(kind, msg))
			gotKind, got, err := ws.ReadMessage()
			require.NoError(t, err)
			require.Equal(t, kind, gotKind)
			require.True(t, bytes.Equal(msg, got), "message %d: %d bytes back, want %d", i, len(got), n)

			w, err := ws.NextWriter(kind)
			require.NoError(t, err)
			for off := 0; off < n; off += 1000 {
				_, err = w.Write(msg[off:min(n, off+1000)])
				require.NoError(t, err)
			}
			require.NoError(t, w.Close())
			_, got, err = ws.ReadMessage()
			require.NoError(t, err)
			require.True(t, bytes.Equal(msg, got), "fragmented message %d: %d bytes back, want %d", i, len(got), n)
		}

		pongs := make(chan string, 1)
		ws.SetPongHandler(func(p string) error { pongs <- p; return nil })
		require.NoError(t, ws.WriteControl(gws.PingMessage, []byte("are you there"), time.Now().Add(10*time.Second)))
		require.NoError(t, ws.WriteMessage(gws.TextMessage, []byte("after ping")))
		_, got, err := ws.ReadMessage() // handles the pong on the way
		require.NoError(t, err)
		require.Equal(t, "after ping", string(got))
		require.Equal(t, "are you there", <-pongs)

		require.NoError(t, ws.WriteMessage(gws.CloseMessage, gws.FormatCloseMessage(4000, "client bye")))
		_, _, err = ws.ReadMessage()
		var ce *gws.CloseError
		require.True(t, errors.As(err, &ce), "read after close: %v", err)
		require.Equal(t, 4000, ce.Code)
		cl := e.next(t)
		require.Equal(t, closed{4000, "client bye", nil}, cl)
	})
}

// TestServerClose: the server's Close(4001) reaches the client, whose
// answer completes the handshake (OnClose: the peer's echo, no error).
// Invalid UTF-8 from the client is answered with 1007 and the connection
// ends with a protocol error.
func TestServerClose(t *testing.T) {
	testenv.ForEach(t, func(t *testing.T, c testenv.Combo) {
		testenv.CheckLeaks(t)
		e := newEcho()
		addr := serve(t, c, e, nil)
		ws := dialGorilla(t, addr)
		require.NoError(t, ws.WriteMessage(gws.TextMessage, []byte("close-me")))
		_, _, err := ws.ReadMessage() // gorilla echoes the close
		var ce *gws.CloseError
		require.True(t, errors.As(err, &ce), "read after close: %v", err)
		require.Equal(t, 4001, ce.Code)
		require.Equal(t, "server bye", ce.Text)
		cl := e.next(t)
		require.Equal(t, 4001, cl.code)
		require.NoError(t, cl.err)

		ws = dialGorilla(t, addr)
		require.NoError(t, ws.WriteMessage(gws.TextMessage, []byte("ok \xff not")))
		_, _, err = ws.ReadMessage()
		require.True(t, errors.As(err, &ce), "read after bad text: %v", err)
		require.Equal(t, websocket.CloseInvalidPayload, ce.Code)
		cl = e.next(t)
		require.Equal(t, websocket.CloseInvalidPayload, cl.code)
		require.ErrorIs(t, cl.err, websocket.ErrProtocol)
	})
}

// pusher sends from another goroutine: every message it is told to.
type pusher struct {
	echo
	conns chan *websocket.Conn
}

func (p *pusher) OnOpen(c *websocket.Conn) { p.conns <- c }

// TestAsyncWriteMessage: a goroutine other than the loop sends 1000
// messages with AsyncWriteMessage, retrying while the async limit refuses;
// the client reads them all in order; Close from that goroutine then
// reaches the client after the last of them, and later sends are refused.
func TestAsyncWriteMessage(t *testing.T) {
	testenv.ForEach(t, func(t *testing.T, c testenv.Combo) {
		testenv.CheckLeaks(t)
		p := &pusher{echo: *newEcho(), conns: make(chan *websocket.Conn, 1)}
		addr := serve(t, c, p, nil, engine.WithBufferLimits(engine.BufferLimits{AsyncWrite: 64 << 10}))
		ws := dialGorilla(t, addr)
		sc := <-p.conns
		const n = 1000
		msg := bytes.Repeat([]byte("m"), 1000)
		var wg sync.WaitGroup
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < n; i++ {
				for {
					err := sc.AsyncWriteMessage(websocket.Binary, append([]byte{byte(i)}, msg...))
					if errors.Is(err, engine.ErrWriteBufferFull) {
						runtime.Gosched()
						continue
					}
					if err != nil {
						t.Errorf("message %d: %v", i, err)
						return
					}
					break
				}
			}
			if err := sc.Close(websocket.CloseGoingAway, "done"); err != nil {
				t.Errorf("close: %v", err)
			}
		}()
		for i := 0; i < n; i++ {
			_, got, err := ws.ReadMessage()
			require.NoError(t, err)
			require.Equal(t, byte(i), got[0])
			require.Len(t, got, len(msg)+1)
		}
		_, _, err := ws.ReadMessage()
		var ce *gws.CloseError
		require.True(t, errors.As(err, &ce), "after the messages: %v", err)
		require.Equal(t, websocket.CloseGoingAway, ce.Code)
		wg.Wait()
		cl := p.next(t)
		require.Equal(t, websocket.CloseGoingAway, cl.code, "%v", cl)
		require.ErrorIs(t, sc.AsyncWriteMessage(websocket.Text, []byte("late")), websocket.ErrClosed)
	})
}

// TestNoGoroutinePerConnection: 200 upgraded, idle connections add no
// goroutine to the process (the clients are raw sockets that start none).
func TestNoGoroutinePerConnection(t *testing.T) {
	testenv.ForEach(t, func(t *testing.T, c testenv.Combo) {
		testenv.CheckLeaks(t)
		e := newEcho()
		addr := serve(t, c, e, nil)
		dialRaw(t, addr).Close() // let the server's lazily started parts start
		e.next(t)
		before := runtime.NumGoroutine()
		conns := make([]*rawConn, 200)
		for i := range conns {
			conns[i] = dialRaw(t, addr)
		}
		// Every connection is upgraded and served: a message on the last
		// comes back.
		last := conns[len(conns)-1]
		_, err := last.Write(frame(finText, []byte("hi"), true))
		require.NoError(t, err)
		f, err := last.read()
		require.NoError(t, err)
		require.Equal(t, "hi", string(f.payload))
		require.LessOrEqual(t, runtime.NumGoroutine()-before, 5, "goroutines grew with 200 connections")
		for _, rc := range conns {
			rc.Close()
		}
		for range conns {
			e.next(t)
		}
	})
}

// TestCloseTimeout: a peer that never answers the server's close frame is
// closed after Timeouts.Close, OnClose saying so (ErrTimeout). The combos run in
// parallel: each mostly waits out the timeout.
func TestCloseTimeout(t *testing.T) {
	testenv.ForEachParallel(t, func(t *testing.T, c testenv.Combo) {
		e := newEcho()
		addr := serve(t, c, e, []websocket.Option{websocket.WithTimeouts(websocket.Timeouts{Close: 100 * time.Millisecond})})
		rc := dialRaw(t, addr)
		_, err := rc.Write(frame(finText, []byte("close-me"), true))
		require.NoError(t, err)
		f, err := rc.read()
		require.NoError(t, err)
		require.Equal(t, byte(finClose), f.b0)
		require.Equal(t, 4001, f.closeCode())
		rc.expectEOF(t)
		cl := e.next(t)
		require.Equal(t, websocket.CloseAbnormal, cl.code)
		require.ErrorIs(t, cl.err, websocket.ErrTimeout)
	})
}

// TestPingInterval: with Timeouts.Ping the server pings; a client that
// answers (gorilla, while reading) stays connected across pings, one that
// does not is closed with ErrTimeout. A pong must come back within one
// interval, so the interval is far longer than a loopback round trip on a
// slow machine (50 ms was not, under an emulated kernel). The combos run
// in parallel: each mostly waits on the interval.
func TestPingInterval(t *testing.T) {
	testenv.ForEachParallel(t, func(t *testing.T, c testenv.Combo) {
		e := newEcho()
		addr := serve(t, c, e, []websocket.Option{websocket.WithTimeouts(websocket.Timeouts{Ping: 500 * time.Millisecond})})
		ws := dialGorilla(t, addr)
		pings := make(chan struct{}, 100)
		ws.SetPingHandler(func(p string) error {
			pings <- struct{}{}
			return ws.WriteControl(gws.PongMessage, []byte(p), time.Now().Add(10*time.Second))
		})
		done := make(chan error, 1)
		go func() {
			_, _, err := ws.ReadMessage()
			done <- err
		}()
		for range 2 {
			select {
			case <-pings:
			case err := <-done:
				t.Fatalf("connection ended while answering pings: %v", err)
			case <-time.After(30 * time.Second):
				t.Fatal("no ping")
			}
		}
		ws.Close()
		<-done
		cl := e.next(t)
		require.Equal(t, websocket.CloseAbnormal, cl.code)

		rc := dialRaw(t, addr)
		f, err := rc.read()
		require.NoError(t, err)
		require.Equal(t, byte(finPing), f.b0)
		for {
			f, err = rc.read()
			if err != nil {
				break
			}
			require.Equal(t, byte(finPing), f.b0, "only pings before the close")
		}
		cl = e.next(t)
		require.Equal(t, websocket.CloseAbnormal, cl.code)
		require.ErrorIs(t, cl.err, websocket.ErrTimeout)
	})
}

// TestSlowConsumer: a client that sends and does not read. PauseReading
// (the default) stops reading it once the echoes pass the high watermark,
// and every echo arrives once it reads; CloseSlow closes it with 1008.
func TestSlowConsumer(t *testing.T) {
	testenv.ForEach(t, func(t *testing.T, c testenv.Combo) {
		testenv.CheckLeaks(t)
		const n, size = 256, 16 << 10
		msg := bytes.Repeat([]byte("s"), size)
		wm := engine.WithBufferLimits(engine.BufferLimits{LowWatermark: 16 << 10, HighWatermark: 64 << 10})
		buf := engine.WithSocketOptions(engine.SocketOptions{SendBuffer: 16 << 10, RecvBuffer: 16 << 10})

		e := newEcho()
		ws := dialGorilla(t, serve(t, c, e, nil, wm, buf))
		sent := make(chan error, 1)
		go func() {
			for range n {
				if err := ws.WriteMessage(gws.BinaryMessage, msg); err != nil {
					sent <- err
					return
				}
			}
			sent <- nil
		}()
		select {
		case w := <-e.writable:
			require.False(t, w)
		case <-time.After(30 * time.Second):
			t.Fatal("the server never turned unwritable")
		}
		for i := range n {
			_, got, err := ws.ReadMessage()
			if err != nil {
				t.Fatalf("echo %d: %v; server: %v", i, err, e.next(t))
			}
			require.Len(t, got, size)
		}
		require.NoError(t, <-sent)

		e = newEcho()
		ws = dialGorilla(t, serve(t, c, e, []websocket.Option{websocket.WithSlowConsumer(websocket.CloseSlow)}, wm, buf))
		go func() {
			for range n {
				if ws.WriteMessage(gws.BinaryMessage, msg) != nil {
					return
				}
			}
		}()
		cl := e.next(t)
		require.Equal(t, websocket.ClosePolicyViolation, cl.code)
		require.ErrorIs(t, cl.err, websocket.ErrSlowConsumer)
		ws.Close()
	})
}

var _ = io.EOF
var _ = strings.Contains

package websocket_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	coder "github.com/coder/websocket"
	gws "github.com/gorilla/websocket"
	"github.com/stretchr/testify/require"

	"github.com/ringloop/ringloop/engine"
	"github.com/ringloop/ringloop/internal/testenv"
	"github.com/ringloop/ringloop/websocket"
)

// fragMsg is a message sent through NextWriter, one Write per piece.
type fragMsg struct {
	kind   websocket.MessageKind
	pieces [][]byte
}

func (m fragMsg) whole() []byte { return bytes.Join(m.pieces, nil) }

// fragMessages: text with empty fragments and "€" split over three, a
// binary message with a large compressible piece and random bytes, a
// message with no Write (one empty final frame), and a one-byte one.
func fragMessages() []fragMsg {
	random := make([]byte, 70_000) // the same bytes on every call
	r := rand.New(rand.NewPCG(1, 2))
	for i := range random {
		random[i] = byte(r.Uint32())
	}
	return []fragMsg{
		{websocket.Text, [][]byte{nil, []byte("héllo "), {0xe2}, {0x82}, nil, {0xac}, []byte(" wörld")}},
		{websocket.Binary, [][]byte{nil, bytes.Repeat([]byte("0123456789abcdef"), 1<<14), random, {1}, nil}},
		{websocket.Text, nil},
		{websocket.Binary, [][]byte{[]byte("x")}},
	}
}

// sendFragmented sends m through NextWriter (on c's loop).
func sendFragmented(c *websocket.Conn, m fragMsg) error {
	w, err := c.NextWriter(m.kind)
	if err != nil {
		return err
	}
	for _, p := range m.pieces {
		if _, err := w.Write(p); err != nil {
			return err
		}
	}
	return w.Close()
}

// scripted runs its test's function on each message and reports opens and
// closes.
type scripted struct {
	opens  chan *websocket.Conn
	closes chan closed
	on     func(c *websocket.Conn, kind websocket.MessageKind, p []byte)
}

func newScripted(on func(c *websocket.Conn, kind websocket.MessageKind, p []byte)) *scripted {
	return &scripted{opens: make(chan *websocket.Conn, 4), closes: make(chan closed, 4), on: on}
}

func (s *scripted) OnOpen(c *websocket.Conn) { s.opens <- c }
func (s *scripted) OnMessage(c *websocket.Conn, kind websocket.MessageKind, p []byte) {
	s.on(c, kind, p)
}
func (s *scripted) OnClose(c *websocket.Conn, code int, reason string, err error) {
	s.closes <- closed{code, reason, err}
}

// fragSender answers "send" with fragMessages, reporting errors on errs.
func fragSender(errs chan error) *scripted {
	return newScripted(func(c *websocket.Conn, _ websocket.MessageKind, p []byte) {
		if string(p) != "send" {
			return
		}
		for _, m := range fragMessages() {
			if err := sendFragmented(c, m); err != nil {
				errs <- err
			}
		}
	})
}

// TestNextWriterGorilla: gorilla's client reads the fragmented messages
// whole, compressed (one deflate stream over the fragments, RSV1 on the
// first only) and not.
func TestNextWriterGorilla(t *testing.T) {
	testenv.ForEach(t, func(t *testing.T, c testenv.Combo) {
		testenv.CheckLeaks(t)
		for _, compress := range []bool{false, true} {
			errs := make(chan error, 16)
			addr := serve(t, c, fragSender(errs), []websocket.Option{websocket.WithCompression(compress)})
			d := gws.Dialer{HandshakeTimeout: 30 * time.Second, EnableCompression: compress}
			ws, resp, err := d.Dial("ws://"+addr+"/frag", nil)
			require.NoError(t, err)
			require.Equal(t, compress, resp.Header.Get("Sec-WebSocket-Extensions") != "")
			_ = ws.SetReadDeadline(time.Now().Add(60 * time.Second))
			require.NoError(t, ws.WriteMessage(gws.TextMessage, []byte("send")))
			for i, m := range fragMessages() {
				kind, got, err := ws.ReadMessage()
				require.NoError(t, err, "compressed %v message %d", compress, i)
				require.Equal(t, int(m.kind), kind)
				require.True(t, bytes.Equal(m.whole(), got), "compressed %v message %d: %d bytes, want %d", compress, i, len(got), len(m.whole()))
			}
			require.Empty(t, errs)
			ws.Close()
		}
	})
}

// TestNextWriterCoder: coder/websocket's client likewise (it refuses RSV1 on
// a continuation frame).
func TestNextWriterCoder(t *testing.T) {
	testenv.ForEach(t, func(t *testing.T, c testenv.Combo) {
		testenv.CheckLeaks(t)
		for _, mode := range []coder.CompressionMode{coder.CompressionDisabled, coder.CompressionNoContextTakeover} {
			errs := make(chan error, 16)
			addr := serve(t, c, fragSender(errs), []websocket.Option{websocket.WithCompression(true)})
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			ws, resp, err := coder.Dial(ctx, "ws://"+addr+"/frag", &coder.DialOptions{CompressionMode: mode})
			require.NoError(t, err)
			require.Equal(t, mode != coder.CompressionDisabled, strings.Contains(resp.Header.Get("Sec-WebSocket-Extensions"), "permessage-deflate"))
			ws.SetReadLimit(4 << 20)
			require.NoError(t, ws.Write(ctx, coder.MessageText, []byte("send")))
			for i, m := range fragMessages() {
				kind, got, err := ws.Read(ctx)
				require.NoError(t, err, "mode %v message %d", mode, i)
				require.Equal(t, int(m.kind), int(kind))
				require.True(t, bytes.Equal(m.whole(), got), "mode %v message %d", mode, i)
			}
			require.Empty(t, errs)
			_ = ws.CloseNow()
			cancel()
		}
	})
}

// TestNextWriterFrames: the frames on the wire, read by a client that
// checks each boundary: a ping sent and a pong answered between fragments;
// WriteMessage and a second NextWriter refused while the message is open;
// an AsyncWriteMessage from another goroutine and a Hub broadcast during
// it arrive after its final frame; text refused when it is not UTF-8 and
// closed only on a whole code point.
func TestNextWriterFrames(t *testing.T) {
	testenv.ForEach(t, func(t *testing.T, c testenv.Combo) {
		testenv.CheckLeaks(t)
		hub := new(websocket.Hub)
		results := make(chan error, 32)
		var w *websocket.MessageWriter
		write := func(s string) {
			_, err := w.Write([]byte(s))
			results <- err
		}
		h := newScripted(func(c *websocket.Conn, _ websocket.MessageKind, p []byte) {
			var err error
			switch string(p) {
			case "open":
				w, err = c.NextWriter(websocket.Binary)
				results <- err
				write("a")
				results <- c.WriteMessage(websocket.Text, []byte("refused"))
				_, err = c.NextWriter(websocket.Text)
				results <- err
				results <- c.Ping([]byte("p"))
			case "more":
				write("b")
				results <- w.Close()
				results <- c.WriteMessage(websocket.Text, []byte("after"))
				_, err = w.Write([]byte("late"))
				results <- err
			case "text":
				w, err = c.NextWriter(websocket.Text)
				results <- err
				_, err = w.Write([]byte{0xe2, 0x28}) // not a continuation byte
				results <- err
				write("\xe2\x82")
				results <- w.Close() // inside "€"
				write("\xac")
				results <- w.Close()
			}
		})
		addr := serve(t, c, h, nil)
		rc := dialRaw(t, addr)
		conn := <-h.opens
		require.NoError(t, onLoop(t, conn, func() error { hub.Add(conn); return nil }))
		expect := func(want ...error) {
			t.Helper()
			for i, e := range want {
				got := <-results
				if e == nil {
					require.NoError(t, got, "result %d", i)
				} else {
					require.Error(t, got, "result %d", i)
					if !errors.Is(e, errAny) {
						require.ErrorIs(t, got, e, "result %d", i)
					}
				}
			}
		}
		_, err := rc.Write(frame(finText, []byte("open"), true))
		require.NoError(t, err)
		expect(nil, nil, websocket.ErrMessageOpen, websocket.ErrMessageOpen, nil)
		// From this goroutine: held behind the open message.
		require.NoError(t, conn.AsyncWriteMessage(websocket.Text, []byte("async")))
		require.NoError(t, hub.Broadcast(websocket.Text, []byte("hub")))
		require.NoError(t, onLoop(t, conn, func() error { return nil })) // the broadcast was delivered
		_, err = rc.Write(append(frame(finPing, []byte("q"), true), frame(finText, []byte("more"), true)...))
		require.NoError(t, err)
		expect(nil, nil, nil, errAny)

		_, err = rc.Write(frame(finText, []byte("text"), true))
		require.NoError(t, err)
		expect(nil, errAny, nil, errAny, nil, nil)

		want := []serverFrame{
			{0x02, []byte("a")},
			{finPing, []byte("p")},
			{finPong, []byte("q")},
			{0x00, []byte("b")},
			{0x80, []byte{}},
			{finText, []byte("async")},
			{finText, []byte("hub")},
			{finText, []byte("after")},
			{0x01, []byte("\xe2\x82")},
			{0x00, []byte("\xac")},
			{0x80, []byte{}},
		}
		for i, f := range want {
			got, err := rc.read()
			require.NoError(t, err, "frame %d", i)
			require.Equal(t, f.String(), got.String(), "frame %d", i)
		}
		require.Zero(t, hub.Stats().Dropped)
		_, err = rc.Write(frame(finClose, closePayload(1000, ""), true))
		require.NoError(t, err)
		f, err := rc.read()
		require.NoError(t, err)
		require.Equal(t, byte(finClose), f.b0)
		rc.expectEOF(t)
		require.Equal(t, 1000, (<-h.closes).code)
	})
}

// errAny stands for any error in TestNextWriterFrames's expectations.
var errAny = errors.New("any error")

// TestNextWriterClosed: a close while a message is open ends it: the close
// frame follows its fragments, the frames held behind it are dropped, and
// the writer reports ErrClosed; the same when the loop shuts down.
func TestNextWriterClosed(t *testing.T) {
	testenv.ForEach(t, func(t *testing.T, c testenv.Combo) {
		testenv.CheckLeaks(t)
		results := make(chan error, 8)
		var w *websocket.MessageWriter
		h := newScripted(func(c *websocket.Conn, _ websocket.MessageKind, p []byte) {
			var err error
			switch string(p) {
			case "open":
				w, err = c.NextWriter(websocket.Binary)
				results <- err
				_, err = w.Write([]byte("x"))
				results <- err
			case "close":
				results <- c.Close(4000, "mid")
				_, err = w.Write([]byte("y"))
				results <- err
				results <- w.Close()
				_, err = c.NextWriter(websocket.Text)
				results <- err
			}
		})
		addr := serve(t, c, h, nil)
		rc := dialRaw(t, addr)
		conn := <-h.opens
		_, err := rc.Write(frame(finText, []byte("open"), true))
		require.NoError(t, err)
		require.NoError(t, <-results)
		require.NoError(t, <-results)
		require.NoError(t, conn.AsyncWriteMessage(websocket.Text, []byte("held")))
		_, err = rc.Write(frame(finText, []byte("close"), true))
		require.NoError(t, err)
		require.NoError(t, <-results)
		for range 3 {
			require.ErrorIs(t, <-results, websocket.ErrClosed)
		}
		f, err := rc.read()
		require.NoError(t, err)
		require.Equal(t, serverFrame{0x02, []byte("x")}.String(), f.String())
		f, err = rc.read()
		require.NoError(t, err)
		require.Equal(t, byte(finClose), f.b0)
		require.Equal(t, 4000, f.closeCode())
		_, err = rc.Write(frame(finClose, closePayload(4000, ""), true))
		require.NoError(t, err)
		rc.expectEOF(t)
		cl := <-h.closes
		require.Equal(t, 4000, cl.code)
		require.ErrorIs(t, cl.err, websocket.ErrAsyncDropped, "the held frame's loss is reported")
		require.ErrorIs(t, conn.AsyncWriteMessage(websocket.Text, []byte("late")), websocket.ErrClosed)
	})
}

// TestNextWriterDial: Dial's client sends fragmented messages (every frame
// masked, which the server checks) to this package's server (ws and wss)
// and to gorilla's, compressed and not, and gets them back whole.
func TestNextWriterDial(t *testing.T) {
	p := testenv.NewPKI(t)
	testenv.ForEach(t, func(t *testing.T, c testenv.Combo) {
		testenv.CheckLeaks(t)
		for _, compress := range []bool{false, true} {
			for _, server := range []string{"own", "gorilla", "own-wss"} {
				opts := []websocket.Option{websocket.WithCompression(compress)}
				var url string
				switch server {
				case "own":
					url = "ws://" + serve(t, c, newEcho(), opts) + "/echo"
				case "gorilla":
					url = "ws://" + gorillaServer(t, compress, nil) + "/"
				case "own-wss":
					url = "wss://" + serveTLS(t, c, p, newEcho(), opts) + "/echo"
					opts = append(opts, wssClient(p))
				}
				loop := newLoop(t, c)
				cl := newClient()
				ws := dial(t, loop, url, cl, opts...)
				require.Equal(t, compress, websocket.Deflate(ws))
				require.NoError(t, onLoop(t, ws, func() error {
					for _, m := range fragMessages() {
						if err := sendFragmented(ws, m); err != nil {
							return err
						}
					}
					return nil
				}))
				for i, m := range fragMessages() {
					got := cl.next(t)
					require.Equal(t, m.kind, got.kind)
					require.True(t, bytes.Equal(m.whole(), got.p), "server %s compressed %v message %d", server, compress, i)
				}
				require.NoError(t, ws.Close(websocket.CloseNormal, ""))
				require.Equal(t, 1000, cl.closed(t).code)
			}
		}
	})
}

// openMore is a handler for the tests below: "open" opens a binary message
// and writes "a" to it, "more" writes "b" and closes it, "send" sends
// fragMessages; errors go to errs.
func openMore(errs chan error) *scripted {
	var w *websocket.MessageWriter
	return newScripted(func(c *websocket.Conn, _ websocket.MessageKind, p []byte) {
		var err error
		switch string(p) {
		case "open":
			if w, err = c.NextWriter(websocket.Binary); err == nil {
				_, err = w.Write([]byte("a"))
			}
		case "more":
			if _, err = w.Write([]byte("b")); err == nil {
				err = w.Close()
			}
		case "send":
			for _, m := range fragMessages() {
				if err = sendFragmented(c, m); err != nil {
					break
				}
			}
		}
		errs <- err
	})
}

// TestNextWriterWSS: over wss (the frames held by the engine connection's
// async writes, encrypted when released)
// gorilla reads the fragmented messages, compressed, and an
// AsyncWriteMessage sent during an open message whole after it.
func TestNextWriterWSS(t *testing.T) {
	p := testenv.NewPKI(t)
	testenv.ForEach(t, func(t *testing.T, c testenv.Combo) {
		testenv.CheckLeaks(t)
		errs := make(chan error, 16)
		h := openMore(errs)
		addr := serveTLS(t, c, p, h, []websocket.Option{websocket.WithCompression(true)})
		ws, _ := dialGorillaTLS(t, p, addr, true)
		conn := <-h.opens
		require.NoError(t, ws.WriteMessage(gws.TextMessage, []byte("send")))
		require.NoError(t, <-errs)
		for i, m := range fragMessages() {
			kind, got, err := ws.ReadMessage()
			require.NoError(t, err, "message %d", i)
			require.Equal(t, int(m.kind), kind)
			require.True(t, bytes.Equal(m.whole(), got), "message %d", i)
		}
		require.NoError(t, ws.WriteMessage(gws.TextMessage, []byte("open")))
		require.NoError(t, <-errs)
		require.NoError(t, conn.AsyncWriteMessage(websocket.Text, []byte("async")))
		require.NoError(t, onLoop(t, conn, func() error { return nil })) // its task has run, held
		require.NoError(t, ws.WriteMessage(gws.TextMessage, []byte("more")))
		require.NoError(t, <-errs)
		kind, got, err := ws.ReadMessage()
		require.NoError(t, err)
		require.Equal(t, gws.BinaryMessage, kind)
		require.Equal(t, "ab", string(got))
		kind, got, err = ws.ReadMessage()
		require.NoError(t, err)
		require.Equal(t, gws.TextMessage, kind)
		require.Equal(t, "async", string(got))
	})
}

// TestNextWriterShutdown: the loop shuts down while a message is open: the
// client gets the close frame (1001) after the fragments sent, the partial
// message is never delivered, and OnClose reports 1001.
func TestNextWriterShutdown(t *testing.T) {
	testenv.ForEach(t, func(t *testing.T, c testenv.Combo) {
		testenv.CheckLeaks(t)
		errs := make(chan error, 16)
		h := openMore(errs)
		loop, err := engine.New(c.Options()...)
		require.NoError(t, err)
		addr := listenOn(t, loop, "UpgradeFast", h)
		ws := dialGorilla(t, addr)
		conn := <-h.opens
		require.NoError(t, ws.WriteMessage(gws.TextMessage, []byte("open")))
		require.NoError(t, <-errs)
		require.NoError(t, conn.AsyncWriteMessage(websocket.Text, []byte("dropped")))
		require.NoError(t, loop.Close())
		_, _, err = ws.ReadMessage()
		var ce *gws.CloseError
		require.True(t, errors.As(err, &ce), "read after the shutdown: %v", err)
		require.Equal(t, websocket.CloseGoingAway, ce.Code)
		cl := <-h.closes
		require.Equal(t, websocket.CloseGoingAway, cl.code)
		require.ErrorIs(t, cl.err, engine.ErrShutdown)
	})
}

// TestNextWriterHubLimit: a broadcast that would pass the async write
// limit of a member sending a fragmented message is missed (Hub.Dropped);
// one within it follows the message.
func TestNextWriterHubLimit(t *testing.T) {
	testenv.ForEach(t, func(t *testing.T, c testenv.Combo) {
		testenv.CheckLeaks(t)
		errs := make(chan error, 16)
		h := openMore(errs)
		addr := serve(t, c, h, nil, engine.WithBufferLimits(engine.BufferLimits{AsyncWrite: 4096}))
		rc := dialRaw(t, addr)
		conn := <-h.opens
		hub := new(websocket.Hub)
		require.NoError(t, onLoop(t, conn, func() error { hub.Add(conn); return nil }))
		_, err := rc.Write(frame(finText, []byte("open"), true))
		require.NoError(t, err)
		require.NoError(t, <-errs)
		require.NoError(t, hub.Broadcast(websocket.Binary, make([]byte, 8192)))
		require.NoError(t, hub.Broadcast(websocket.Text, []byte("hub")))
		require.NoError(t, onLoop(t, conn, func() error { return nil })) // delivered
		require.EqualValues(t, 1, hub.Stats().Dropped)
		_, err = rc.Write(frame(finText, []byte("more"), true))
		require.NoError(t, err)
		require.NoError(t, <-errs)
		for i, f := range []serverFrame{{0x02, []byte("a")}, {0x00, []byte("b")}, {0x80, []byte{}}, {finText, []byte("hub")}} {
			got, err := rc.read()
			require.NoError(t, err, "frame %d", i)
			require.Equal(t, f.String(), got.String(), "frame %d", i)
		}
	})
}

// TestNextWriterSlowConsumer: fragments follow the slow-consumer policy as
// WriteMessage's frames do: under CloseSlow a peer that does not read is
// dropped past the high watermark, the open message with it (Write then
// reports ErrClosed, OnClose 1008). NextWriter off the loop is refused.
func TestNextWriterSlowConsumer(t *testing.T) {
	testenv.ForEach(t, func(t *testing.T, c testenv.Combo) {
		testenv.CheckLeaks(t)
		results := make(chan error, 4)
		h := newScripted(func(c *websocket.Conn, _ websocket.MessageKind, p []byte) {
			w, err := c.NextWriter(websocket.Binary)
			if err != nil {
				results <- err
				return
			}
			chunk := make([]byte, 16<<10)
			for range 1024 { // 16 MiB at most: far past the socket buffers and the watermark
				if _, err = w.Write(chunk); err != nil {
					break
				}
			}
			results <- err
			results <- w.Close()
		})
		wm := engine.WithBufferLimits(engine.BufferLimits{LowWatermark: 16 << 10, HighWatermark: 64 << 10})
		buf := engine.WithSocketOptions(engine.SocketOptions{SendBuffer: 16 << 10, RecvBuffer: 16 << 10})
		addr := serve(t, c, h, []websocket.Option{websocket.WithSlowConsumer(websocket.CloseSlow)}, wm, buf)
		rc := dialRaw(t, addr)
		conn := <-h.opens
		_, err := conn.NextWriter(websocket.Text)
		require.Error(t, err, "NextWriter off the loop")
		_, err = rc.Write(frame(finText, []byte("go"), true))
		require.NoError(t, err)
		require.ErrorIs(t, <-results, websocket.ErrClosed)
		require.ErrorIs(t, <-results, websocket.ErrClosed)
		cl := <-h.closes
		require.Equal(t, websocket.ClosePolicyViolation, cl.code)
		require.ErrorIs(t, cl.err, websocket.ErrSlowConsumer)
	})
}

// TestNextWriterDeflateFrames: with permessage-deflate, read frame by
// frame by a client written here: RSV1 on the first frame only, every
// fragment but the last ends on a sync flush (so it can be inflated as it
// arrives), and the payloads together inflate to the message.
func TestNextWriterDeflateFrames(t *testing.T) {
	testenv.ForEach(t, func(t *testing.T, c testenv.Combo) {
		testenv.CheckLeaks(t)
		errs := make(chan error, 16)
		addr := serve(t, c, fragSender(errs), []websocket.Option{websocket.WithCompression(true)})
		conn, err := net.DialTimeout("tcp", addr, 10*time.Second)
		require.NoError(t, err)
		defer conn.Close()
		_ = conn.SetDeadline(time.Now().Add(60 * time.Second))
		_, err = io.WriteString(conn, "GET /ws HTTP/1.1\r\nHost: a\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"+
			"Sec-WebSocket-Key: "+b64key()+"\r\nSec-WebSocket-Version: 13\r\n"+
			"Sec-WebSocket-Extensions: permessage-deflate\r\n\r\n")
		require.NoError(t, err)
		rc := &rawConn{conn, newReader(conn)}
		resp, err := http.ReadResponse(rc.r, nil)
		require.NoError(t, err)
		require.Equal(t, http.StatusSwitchingProtocols, resp.StatusCode)
		require.Contains(t, resp.Header.Get("Sec-WebSocket-Extensions"), "permessage-deflate")
		_, err = rc.Write(frame(finText, []byte("send"), true))
		require.NoError(t, err)
		for i, m := range fragMessages() {
			var payload []byte
			for j := 0; ; j++ {
				f, err := rc.read()
				require.NoError(t, err, "message %d frame %d", i, j)
				fin, rsv1, op := f.b0&0x80 != 0, f.b0&0x40 != 0, f.b0&0x0F
				require.Equal(t, j == 0, rsv1, "message %d frame %d: RSV1", i, j)
				if j == 0 {
					require.EqualValues(t, m.kind, op, "message %d", i)
				} else {
					require.Zero(t, op, "message %d frame %d: continuation", i, j)
				}
				if !fin {
					require.True(t, bytes.HasSuffix(f.payload, []byte{0, 0, 0xff, 0xff}), "message %d frame %d ends on a sync flush", i, j)
				}
				payload = append(payload, f.payload...)
				if fin {
					require.Equal(t, len(m.pieces)+1, j+1, "message %d: a frame per Write and the final one", i)
					break
				}
			}
			require.True(t, bytes.Equal(m.whole(), inflated(t, payload)), "message %d", i)
		}
		require.Empty(t, errs)
	})
}

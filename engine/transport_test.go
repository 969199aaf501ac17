package engine_test

import (
	"bufio"
	"errors"
	"io"
	"net"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ringloop/ringloop/engine"
	"github.com/ringloop/ringloop/internal/testenv"
)

// xorFrames is a toy transport: the wire carries frames of a length byte
// (1-254) and the payload XORed with 0x5a; a 0 length byte is its
// close_notify, 0xff a frame it refuses. With hello, the peer must first
// send 'H', answered with 'H', before the handler opens (a handshake).
type xorFrames struct {
	w       engine.Wire
	hello   bool   // a handshake is owed
	pad     int    // bytes the handshake's answer carries after its 'H'
	oneEach bool   // Decode returns at most one frame a call
	buf     []byte // received, not yet decoded: buf[off:]
	off     int
	scratch [255]byte
	failed  bool         // it refused a frame: no close word
	encodes atomic.Int32 // Encode calls
	closed  chan error   // Close's error
}

var errBadFrame = errors.New("xorFrames: bad frame")

func (x *xorFrames) Open() bool { return !x.hello }

func (x *xorFrames) Decode(in []byte, eof bool, out []byte) (int, error) {
	if x.off == len(x.buf) {
		x.buf, x.off = x.buf[:0], 0
	}
	x.buf = append(x.buf, in...)
	return x.decode(x.buf[x.off:], eof, out)
}

// decode decodes from b, the bytes not yet decoded, moving off past what
// it takes.
func (x *xorFrames) decode(b []byte, eof bool, out []byte) (int, error) {
	if x.hello && len(b) == 0 && eof {
		return 0, io.EOF // the peer left during the handshake
	}
	if x.hello && len(b) > 0 {
		if b[0] != 'H' {
			return 0, errBadFrame
		}
		x.off++
		x.hello = false
		_, _ = x.w.Write(append([]byte{'H'}, make([]byte, x.pad)...))
		x.w.Open() // from within Decode: the engine decodes the rest later
		return 0, nil
	}
	if len(out) == 0 || x.hello {
		return 0, nil
	}
	n := 0
	for len(b) > 0 {
		size := int(b[0])
		switch {
		case size == 0:
			x.off++
			return n, io.EOF
		case size == 0xff:
			x.failed = true
			return n, errBadFrame
		case len(b) < 1+size && eof:
			return n, io.ErrUnexpectedEOF
		case len(b) < 1+size || len(out)-n < size:
			return n, nil
		}
		for i, v := range b[1 : 1+size] {
			out[n+i] = v ^ 0x5a
		}
		n += size
		b = b[1+size:]
		x.off += 1 + size
		if x.oneEach {
			return n, nil
		}
	}
	if eof && n == 0 {
		return 0, io.EOF
	}
	return n, nil
}

func (x *xorFrames) Encode(p []byte) error {
	x.encodes.Add(1)
	for len(p) > 0 {
		k := min(len(p), 254)
		x.scratch[0] = byte(k)
		for i, b := range p[:k] {
			x.scratch[1+i] = b ^ 0x5a
		}
		if _, err := x.w.Write(x.scratch[:1+k]); err != nil {
			return err
		}
		p = p[k:]
	}
	return nil
}

func (x *xorFrames) CloseWrite() {
	if !x.failed {
		_, _ = x.w.Write([]byte{0})
	}
}

func (x *xorFrames) Close(err error) {
	if x.closed != nil {
		x.closed <- err
	}
}

// xorPeer speaks xorFrames over a net.Conn.
type xorPeer struct {
	t  *testing.T
	nc net.Conn
	r  *bufio.Reader
}

func dialXor(t *testing.T, addr string) *xorPeer {
	t.Helper()
	nc, err := net.Dial("tcp", addr)
	require.NoError(t, err)
	t.Cleanup(func() { _ = nc.Close() })
	require.NoError(t, nc.SetDeadline(time.Now().Add(30*time.Second)))
	return &xorPeer{t: t, nc: nc, r: bufio.NewReader(nc)}
}

func (p *xorPeer) hello() {
	p.t.Helper()
	_, err := p.nc.Write([]byte{'H'})
	require.NoError(p.t, err)
	b, err := p.r.ReadByte()
	require.NoError(p.t, err)
	require.Equal(p.t, byte('H'), b)
}

func xorFrame(s string) []byte {
	f := []byte{byte(len(s))}
	for i := 0; i < len(s); i++ {
		f = append(f, s[i]^0x5a)
	}
	return f
}

func (p *xorPeer) send(b []byte) {
	p.t.Helper()
	_, err := p.nc.Write(b)
	require.NoError(p.t, err)
}

// frame reads the next frame: its payload, "" with closeWord for a close
// word, or the read's error.
func (p *xorPeer) frame() (payload string, closeWord bool, err error) {
	n, err := p.r.ReadByte()
	if err != nil {
		return "", false, err
	}
	if n == 0 {
		return "", true, nil
	}
	b := make([]byte, n)
	if _, err := io.ReadFull(p.r, b); err != nil {
		return "", false, err
	}
	for i := range b {
		b[i] ^= 0x5a
	}
	return string(b), false, nil
}

func (p *xorPeer) expect(payload string) {
	p.t.Helper()
	got, cw, err := p.frame()
	require.NoError(p.t, err)
	require.False(p.t, cw, "close word instead of %q", payload)
	require.Equal(p.t, payload, got)
}

// expectEnd reads the close word and then the end of the stream.
func (p *xorPeer) expectEnd() {
	p.t.Helper()
	_, cw, err := p.frame()
	require.NoError(p.t, err)
	require.True(p.t, cw, "no close word")
	_, err = p.r.ReadByte()
	require.ErrorIs(p.t, err, io.EOF)
}

// xorServer is a handler for the toy transport's tests: it answers each
// delivery with "<" b ">" written in three calls, and reports its events.
type xorServer struct {
	opens  chan *engine.Conn
	datas  chan string
	closes chan error
	onData func(c *engine.Conn, b []byte) bool // handled: skip the echo
}

func newXorServer() *xorServer {
	return &xorServer{opens: make(chan *engine.Conn, 8), datas: make(chan string, 64), closes: make(chan error, 8)}
}

func (s *xorServer) OnOpen(c *engine.Conn) { s.opens <- c }

func (s *xorServer) OnData(c *engine.Conn, b []byte) {
	s.datas <- string(b)
	if s.onData != nil && s.onData(c, b) {
		return
	}
	_, _ = c.Write([]byte("<"))
	_, _ = c.Write(b)
	_, _ = c.Write([]byte(">"))
}

func (s *xorServer) OnClose(_ *engine.Conn, err error) { s.closes <- err }

// halfXorServer is xorServer with HalfCloseHandler: it answers the peer's
// end with "bye" and its own CloseWrite.
type halfXorServer struct{ *xorServer }

func (s halfXorServer) OnReadClosed(c *engine.Conn) {
	_, _ = c.Write([]byte("bye"))
	_ = c.CloseWrite()
}

// shutXorServer is xorServer with ShutdownHandler.
type shutXorServer struct{ *xorServer }

func (s shutXorServer) OnShutdown(c *engine.Conn) { _, _ = c.Write([]byte("bye")) }

// listenXor serves h over the toy transport (made with mk) and returns
// the address and each connection's transport.
func listenXor(t *testing.T, l *engine.Loop, h engine.Handler, mk func() *xorFrames) (string, chan *xorFrames) {
	t.Helper()
	made := make(chan *xorFrames, 8)
	ln, err := engine.Listen(l, "tcp", "127.0.0.1:0", engine.Layer(h, func(w engine.Wire) engine.Transport {
		x := mk()
		x.w = w
		made <- x
		return x
	}))
	require.NoError(t, err)
	t.Cleanup(func() { _ = ln.Close() })
	return ln.Addr().String(), made
}

func recv[T any](t *testing.T, ch chan T) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(30 * time.Second):
		t.Fatal("timed out")
	}
	var zero T
	return zero
}

// TestTransportEcho: OnData gets decoded bytes, a handler's writes of one
// iteration are encoded together (one frame for three Writes), a frame
// split across reads waits in the transport, and the connection's
// Transport is the one the factory made.
func TestTransportEcho(t *testing.T) {
	testenv.ForEach(t, func(t *testing.T, c testenv.Combo) {
		l := newLoop(t, c)
		s := newXorServer()
		addr, made := listenXor(t, l, s, func() *xorFrames { return &xorFrames{hello: true} })
		p := dialXor(t, addr)
		p.hello()
		conn := recv(t, s.opens)
		x := recv(t, made)
		require.Same(t, x, conn.Transport())

		p.send(xorFrame("hello"))
		require.Equal(t, "hello", recv(t, s.datas))
		p.expect("<hello>")
		require.Equal(t, int32(1), x.encodes.Load(), "three writes of one delivery, one encode")

		f := xorFrame("split")
		p.send(f[:3])
		p.send(f[3:])
		require.Equal(t, "split", recv(t, s.datas))
		p.expect("<split>")

		require.NoError(t, conn.Close())
		p.expectEnd()
		require.NoError(t, recv(t, s.closes))
	})
}

// TestTransportOpenReleasesSetupBuffers: the outbound buffers a transport's
// setup grew (a handshake's flights, here 64 KiB) are let go once sent when
// Wire.Open releases the handler, so an idle connection does not keep them
// (the trim sweep, which would do it later, is held off); the connection
// writes on afterwards.
func TestTransportOpenReleasesSetupBuffers(t *testing.T) {
	testenv.ForEach(t, func(t *testing.T, c testenv.Combo) {
		l, err := engine.New(c.Options()...)
		require.NoError(t, err)
		l.SetTrimPeriod(time.Hour)
		t.Cleanup(func() { _ = l.Close() })
		s := newXorServer()
		addr, _ := listenXor(t, l, s, func() *xorFrames { return &xorFrames{hello: true, pad: 64 << 10} })
		p := dialXor(t, addr)
		p.send([]byte{'H'})
		answer := make([]byte, 1+64<<10)
		_, err = io.ReadFull(p.r, answer)
		require.NoError(t, err)
		require.Equal(t, byte('H'), answer[0])
		conn := recv(t, s.opens)
		testenv.Eventually(t, 30*time.Second, "the handshake's buffers let go", func() bool {
			return onLoop(t, l, func() int { o, s, _, _ := conn.SendBufferCaps(); return o + s }) == 0
		})
		p.send(xorFrame("after"))
		require.Equal(t, "after", recv(t, s.datas))
		p.expect("<after>")
	})
}

// TestTransportHoldsOpen: a connection that closes before its transport
// opens it never reaches the handler: neither OnOpen nor OnClose; the
// transport's Close hears why. A bad hello ends it the same way.
func TestTransportHoldsOpen(t *testing.T) {
	testenv.ForEach(t, func(t *testing.T, c testenv.Combo) {
		l := newLoop(t, c)
		s := newXorServer()
		closed := make(chan error, 2)
		addr, _ := listenXor(t, l, s, func() *xorFrames { return &xorFrames{hello: true, closed: closed} })

		p := dialXor(t, addr)
		require.NoError(t, p.nc.Close())
		require.ErrorIs(t, recv(t, closed), io.EOF)

		p = dialXor(t, addr)
		p.send([]byte{'X'})
		require.ErrorIs(t, recv(t, closed), errBadFrame)
		_, err := p.r.ReadByte()
		require.ErrorIs(t, err, io.EOF, "no close word before the handshake")

		require.Empty(t, s.opens)
		require.Empty(t, s.closes)
	})
}

// TestTransportPeerEnd: the peer's close word is its end of stream: a
// HalfCloseHandler hears it after the frames before it and answers before
// its CloseWrite's close word and FIN; without one the connection closes
// with our close word. A FIN inside a frame is io.ErrUnexpectedEOF; a frame
// the transport refuses closes the connection with its error.
func TestTransportPeerEnd(t *testing.T) {
	testenv.ForEach(t, func(t *testing.T, c testenv.Combo) {
		l := newLoop(t, c)
		hs := halfXorServer{newXorServer()}
		addr, _ := listenXor(t, l, hs, func() *xorFrames { return &xorFrames{} })
		p := dialXor(t, addr)
		p.send(append(xorFrame("last"), 0))
		p.expect("<last>bye") // written in one iteration: one encode
		p.expectEnd()
		require.NoError(t, p.nc.(*net.TCPConn).CloseWrite())
		require.ErrorIs(t, recv(t, hs.closes), io.EOF)

		s := newXorServer()
		addr, _ = listenXor(t, l, s, func() *xorFrames { return &xorFrames{} })
		p = dialXor(t, addr)
		p.send(append(xorFrame("last"), 0))
		p.expect("<last>")
		p.expectEnd()
		require.ErrorIs(t, recv(t, s.closes), io.EOF)

		p = dialXor(t, addr)
		p.send(xorFrame("cut")[:2])
		require.NoError(t, p.nc.(*net.TCPConn).CloseWrite())
		require.ErrorIs(t, recv(t, s.closes), io.ErrUnexpectedEOF)

		p = dialXor(t, addr)
		p.send(append(xorFrame("ok"), 0xff))
		p.expect("<ok>")
		_, _, err := p.frame()
		require.ErrorIs(t, err, io.EOF, "no close word after a refused frame")
		require.ErrorIs(t, recv(t, s.closes), errBadFrame)
	})
}

// TestTransportPause: a handler that pauses gets nothing more until it
// resumes: what the transport holds (and what arrives meanwhile) is
// delivered after ResumeRead.
func TestTransportPause(t *testing.T) {
	testenv.ForEach(t, func(t *testing.T, c testenv.Combo) {
		l := newLoop(t, c)
		s := newXorServer()
		var resumed atomic.Bool
		early := make(chan string, 4)
		s.onData = func(c *engine.Conn, b []byte) bool {
			if string(b) == "one" {
				c.PauseRead()
			} else if !resumed.Load() {
				early <- string(b)
			}
			return true
		}
		addr, _ := listenXor(t, l, s, func() *xorFrames { return &xorFrames{oneEach: true} })
		p := dialXor(t, addr)
		p.send(append(xorFrame("one"), xorFrame("two")...))
		require.Equal(t, "one", recv(t, s.datas))
		conn := recv(t, s.opens)
		p.send(xorFrame("three"))
		resumed.Store(true)
		conn.ResumeRead()
		require.Equal(t, "two", recv(t, s.datas))
		require.Equal(t, "three", recv(t, s.datas))
		require.Empty(t, early, "delivered while paused")
	})
}

// TestTransportAbortAndAsync: AsyncWrite's bytes are encoded on the loop;
// Close from another goroutine sends them, then the close word; Abort
// sends no close word.
func TestTransportAbortAndAsync(t *testing.T) {
	testenv.ForEach(t, func(t *testing.T, c testenv.Combo) {
		l := newLoop(t, c)
		s := newXorServer()
		addr, _ := listenXor(t, l, s, func() *xorFrames { return &xorFrames{} })
		p := dialXor(t, addr)
		conn := recv(t, s.opens)
		require.NoError(t, conn.AsyncWrite([]byte("async")))
		require.NoError(t, conn.Close())
		p.expect("async")
		p.expectEnd()
		require.NoError(t, recv(t, s.closes))

		p = dialXor(t, addr)
		conn = recv(t, s.opens)
		onLoop(t, l, func() error {
			_, _ = conn.Write([]byte("dropped"))
			return conn.Abort()
		})
		_, cw, err := p.frame()
		require.False(t, cw, "close word after Abort")
		require.Error(t, err)
		require.ErrorIs(t, recv(t, s.closes), engine.ErrAborted)
	})
}

// TestTransportShutdown: the loop's shutdown lets OnShutdown write its last
// word, then the transport's close word follows.
func TestTransportShutdown(t *testing.T) {
	testenv.ForEach(t, func(t *testing.T, c testenv.Combo) {
		l, err := engine.New(c.Options()...)
		require.NoError(t, err)
		s := shutXorServer{newXorServer()}
		addr, _ := listenXor(t, l, s, func() *xorFrames { return &xorFrames{} })
		p := dialXor(t, addr)
		recv(t, s.opens)
		require.NoError(t, l.Close())
		p.expect("bye")
		p.expectEnd()
		require.ErrorIs(t, recv(t, s.closes), engine.ErrShutdown)
	})
}

// TestTransportAllocs: an echo through a transport allocates nothing in
// steady state on the loop: the writes' bytes reach Encode through the
// connection's buffer, and the plaintext through the loop's.
func TestTransportAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector allocates")
	}
	testenv.ForEach(t, func(t *testing.T, c testenv.Combo) {
		l := newLoop(t, c)
		addr, _ := listenXor(t, l, xorEcho{}, func() *xorFrames { return &xorFrames{} })
		p := dialXor(t, addr)
		frame := xorFrame("ping")
		reply := make([]byte, 7)
		round := func() {
			if _, err := p.nc.Write(frame); err != nil {
				t.Fatal(err)
			}
			if _, err := io.ReadFull(p.nc, reply); err != nil {
				t.Fatal(err)
			}
		}
		for range 200 {
			round()
		}
		if n := testing.AllocsPerRun(200, round); n > 0.5 {
			t.Fatalf("%.2f allocations per round trip", n)
		}
	})
}

// xorEcho answers "<" b ">" in three writes and reports nothing.
type xorEcho struct{}

func (xorEcho) OnOpen(*engine.Conn) {}
func (xorEcho) OnData(c *engine.Conn, b []byte) {
	_, _ = c.Write([]byte("<"))
	_, _ = c.Write(b)
	_, _ = c.Write([]byte(">"))
}
func (xorEcho) OnClose(*engine.Conn, error) {}

package httpserver_test

import (
	"bytes"
	"errors"
	"io"
	"net"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"golang.org/x/net/http2"
	"golang.org/x/net/http2/hpack"

	"github.com/ringloop/ringloop/engine"
	"github.com/ringloop/ringloop/httpserver"
)

// FuzzH2 sends arbitrary bytes after the client preface to an HTTP/2
// server on a loop (the fast API when the first byte is even, the adapter
// when odd), then shuts its side, and checks: nothing the server runs
// panics (the loop counts panics), and the server closes the connection
// within 10 seconds of the client's shutdown, whatever the frames left
// open (a stream waiting for its body or for a window, a header block cut
// short). It is seeded with valid exchanges: settings, requests with and
// without bodies, trailers, a header block in CONTINUATION frames, PING,
// WINDOW_UPDATE, PRIORITY, RST_STREAM and GOAWAY.
func FuzzH2(f *testing.F) {
	for _, s := range h2Seeds() {
		f.Add(s)
		f.Add(append([]byte{1}, s[1:]...))
	}
	loop, err := engine.New()
	require.NoError(f, err)
	f.Cleanup(func() { require.NoError(f, loop.Close()) })
	var bases [2]string
	for i, make := range []func() (*httpserver.Server, error){
		func() (*httpserver.Server, error) { return httpserver.NewFast(fastEcho, httpserver.WithH2C()) },
		func() (*httpserver.Server, error) { return httpserver.New(stdEcho, httpserver.WithH2C()) },
	} {
		s, err := make()
		require.NoError(f, err)
		a, err := s.Listen(loop, "tcp", "127.0.0.1:0")
		require.NoError(f, err)
		f.Cleanup(func() { require.NoError(f, s.Close()) })
		bases[i] = a.String()
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) == 0 || len(data) > 64<<10 {
			t.Skip("empty, or longer than a fuzz input needs")
		}
		c, err := net.DialTimeout("tcp", bases[data[0]&1], 5*time.Second)
		require.NoError(t, err)
		defer c.Close()
		require.NoError(t, c.SetDeadline(time.Now().Add(10*time.Second)))
		go func() { // the client reads what comes while it writes
			_, _ = c.Write(append([]byte(http2.ClientPreface), data[1:]...))
			_ = c.(*net.TCPConn).CloseWrite()
		}()
		_, err = io.Copy(io.Discard, c)
		if errors.Is(err, os.ErrDeadlineExceeded) {
			t.Fatalf("the server kept the connection 10 s after the client shut its side")
		}
		if n := loop.Metrics().Panics; n > 0 {
			t.Fatalf("%d panics on the loop", n)
		}
	})
}

// h2Seeds are valid exchanges, each prefixed with the byte that picks the
// API.
func h2Seeds() [][]byte {
	var out [][]byte
	frames := func(write func(fr *http2.Framer, enc func(fields ...string) []byte)) {
		var buf, hb bytes.Buffer
		buf.WriteByte(0)
		fr := http2.NewFramer(&buf, nil)
		henc := hpack.NewEncoder(&hb)
		enc := func(fields ...string) []byte {
			hb.Reset()
			for i := 0; i+1 < len(fields); i += 2 {
				_ = henc.WriteField(hpack.HeaderField{Name: fields[i], Value: fields[i+1]})
			}
			return bytes.Clone(hb.Bytes())
		}
		_ = fr.WriteSettings(http2.Setting{ID: http2.SettingInitialWindowSize, Val: 1 << 20})
		write(fr, enc)
		out = append(out, buf.Bytes())
	}
	get := []string{":method", "GET", ":scheme", "http", ":path", "/a", ":authority", "h"}
	post := []string{":method", "POST", ":scheme", "http", ":path", "/up", ":authority", "h", "content-length", "5"}
	frames(func(fr *http2.Framer, enc func(...string) []byte) {
		_ = fr.WriteHeaders(http2.HeadersFrameParam{StreamID: 1, BlockFragment: enc(get...), EndStream: true, EndHeaders: true})
		_ = fr.WriteSettingsAck()
		_ = fr.WritePing(false, [8]byte{1, 2})
	})
	frames(func(fr *http2.Framer, enc func(...string) []byte) {
		_ = fr.WriteHeaders(http2.HeadersFrameParam{StreamID: 1, BlockFragment: enc(post...), EndHeaders: true})
		_ = fr.WriteData(1, false, []byte("he"))
		_ = fr.WriteData(1, true, []byte("llo"))
		_ = fr.WriteWindowUpdate(0, 1000)
		_ = fr.WriteHeaders(http2.HeadersFrameParam{StreamID: 3, BlockFragment: enc(get...), EndStream: true, EndHeaders: true,
			Priority: http2.PriorityParam{StreamDep: 1, Weight: 10}})
	})
	frames(func(fr *http2.Framer, enc func(...string) []byte) {
		b := enc(":method", "POST", ":scheme", "http", ":path", "/t", ":authority", "h", "trailer", "x-t", "cookie", "a=1", "cookie", "b=2")
		_ = fr.WriteHeaders(http2.HeadersFrameParam{StreamID: 1, BlockFragment: b[:5]})
		_ = fr.WriteContinuation(1, false, b[5:9])
		_ = fr.WriteContinuation(1, true, b[9:])
		_ = fr.WriteDataPadded(1, false, []byte("body"), []byte{0, 0, 0})
		_ = fr.WriteHeaders(http2.HeadersFrameParam{StreamID: 1, BlockFragment: enc("x-t", "v"), EndStream: true, EndHeaders: true})
		_ = fr.WritePriority(3, http2.PriorityParam{StreamDep: 1})
	})
	frames(func(fr *http2.Framer, enc func(...string) []byte) {
		_ = fr.WriteHeaders(http2.HeadersFrameParam{StreamID: 1, BlockFragment: enc(append(get[:5:5], "/stream?n=40", ":authority", "h")...), EndStream: true, EndHeaders: true})
		_ = fr.WriteHeaders(http2.HeadersFrameParam{StreamID: 3, BlockFragment: enc(post...), EndHeaders: true})
		_ = fr.WriteRSTStream(3, http2.ErrCodeCancel)
		_ = fr.WriteData(3, true, []byte("late!"))
		_ = fr.WriteGoAway(3, http2.ErrCodeNo, []byte(strings.Repeat("bye", 3)))
	})
	return out
}

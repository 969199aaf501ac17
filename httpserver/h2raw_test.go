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
)

// h2Raw is an HTTP/2 client made of x/net's Framer: it sends exactly the
// frames a test (or an attack) asks for.
type h2Raw struct {
	t    testing.TB
	c    net.Conn
	fr   *http2.Framer
	enc  *hpack.Encoder
	hbuf bytes.Buffer
	got  map[uint32]*rawResponse // responses read while waiting for another's
}

// dialH2 connects to base and sends the client preface with settings.
func dialH2(t testing.TB, base string, settings ...http2.Setting) *h2Raw {
	t.Helper()
	c, err := net.DialTimeout("tcp", strings.TrimPrefix(base, "http://"), 5*time.Second)
	require.NoError(t, err)
	require.NoError(t, c.SetDeadline(time.Now().Add(30*time.Second)))
	t.Cleanup(func() { _ = c.Close() })
	r := &h2Raw{t: t, c: c}
	r.fr = http2.NewFramer(c, c)
	// A decoder that refuses a table larger than the 4 KiB default: the
	// server never grows its own beyond it whatever the client allows.
	r.fr.ReadMetaHeaders = hpack.NewDecoder(4096, nil)
	r.fr.MaxHeaderListSize = 1 << 20
	r.enc = hpack.NewEncoder(&r.hbuf)
	_, err = io.WriteString(c, http2.ClientPreface)
	require.NoError(t, err)
	require.NoError(t, r.fr.WriteSettings(settings...))
	return r
}

// block encodes fields ("name", "value", ...) as a header block.
func (r *h2Raw) block(fields ...string) []byte {
	r.hbuf.Reset()
	for i := 0; i+1 < len(fields); i += 2 {
		_ = r.enc.WriteField(hpack.HeaderField{Name: fields[i], Value: fields[i+1]})
	}
	return bytes.Clone(r.hbuf.Bytes())
}

// request opens stream id with a request for path (GET when end, else
// POST with a body to follow), extra fields after the pseudo-fields.
func (r *h2Raw) request(id uint32, path string, end bool, extra ...string) {
	r.t.Helper()
	require.NoError(r.t, r.send(id, path, end, extra...))
}

// send is request that returns the write's error (the server may have
// closed the connection: an attack's end).
func (r *h2Raw) send(id uint32, path string, end bool, extra ...string) error {
	method := "POST"
	if end {
		method = "GET"
	}
	f := append([]string{":method", method, ":scheme", "http", ":path", path, ":authority", "test"}, extra...)
	return r.fr.WriteHeaders(http2.HeadersFrameParam{StreamID: id, BlockFragment: r.block(f...), EndStream: end, EndHeaders: true})
}

// next reads the next frame, or fails the test; io.EOF (the server
// closed) is returned as a nil frame.
func (r *h2Raw) next() http2.Frame {
	r.t.Helper()
	f, err := r.fr.ReadFrame()
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, net.ErrClosed) || err != nil && strings.Contains(err.Error(), "connection reset") {
		return nil
	}
	require.NoError(r.t, err)
	return f
}

// goAway reads until the server's GOAWAY and returns it (nil if the
// connection ended without one), answering nothing.
func (r *h2Raw) goAway() *http2.GoAwayFrame {
	r.t.Helper()
	for {
		f := r.next()
		if f == nil {
			return nil
		}
		if ga, ok := f.(*http2.GoAwayFrame); ok {
			return ga
		}
	}
}

// closed waits until the server closes the connection.
func (r *h2Raw) closed() {
	r.t.Helper()
	_, err := io.Copy(io.Discard, r.c)
	if err != nil && !errors.Is(err, os.ErrDeadlineExceeded) && !strings.Contains(err.Error(), "reset") {
		require.NoError(r.t, err)
	}
	require.False(r.t, errors.Is(err, os.ErrDeadlineExceeded), "the server did not close the connection")
}

// rawResponse is what a stream received.
type rawResponse struct {
	status   string
	body     []byte
	trailers []hpack.HeaderField
	done     bool
}

// response reads stream id's response: status, body and trailers (the
// frames of other streams are kept for their turn), answering SETTINGS on
// the way and giving back window.
func (r *h2Raw) response(id uint32) (status string, body []byte, trailers []hpack.HeaderField) {
	r.t.Helper()
	if r.got == nil {
		r.got = map[uint32]*rawResponse{}
	}
	for {
		if g := r.got[id]; g != nil && g.done {
			delete(r.got, id)
			return g.status, g.body, g.trailers
		}
		f := r.next()
		require.NotNil(r.t, f, "connection closed before stream %d's response", id)
		sid := f.Header().StreamID
		g := r.got[sid]
		if g == nil && sid != 0 {
			g = &rawResponse{}
			r.got[sid] = g
		}
		switch f := f.(type) {
		case *http2.MetaHeadersFrame:
			if s := f.PseudoValue("status"); s != "" && g.status == "" {
				g.status = s
			} else if s == "" {
				g.trailers = f.RegularFields()
			}
			g.done = f.StreamEnded()
		case *http2.DataFrame:
			if n := len(f.Data()); n > 0 {
				_ = r.fr.WriteWindowUpdate(0, uint32(n))
				_ = r.fr.WriteWindowUpdate(f.StreamID, uint32(n))
			}
			g.body = append(g.body, f.Data()...)
			g.done = f.StreamEnded()
		case *http2.RSTStreamFrame:
			if f.StreamID == id {
				r.t.Fatalf("stream %d reset: %v", id, f.ErrCode)
			}
		case *http2.GoAwayFrame:
			r.t.Fatalf("GOAWAY %v before stream %d's response: %s", f.ErrCode, id, f.DebugData())
		case *http2.SettingsFrame:
			if !f.IsAck() {
				_ = r.fr.WriteSettingsAck()
			}
		}
	}
}

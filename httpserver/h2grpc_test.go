package httpserver_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"golang.org/x/net/http2"
	"golang.org/x/net/http2/hpack"

	"github.com/ringloop/ringloop/httpserver"
	"github.com/ringloop/ringloop/internal/testenv"
)

// What gRPC over the adapter (grpc-go's Server.ServeHTTP) asks of HTTP/2
// beyond TestH2Trailers: a stream the client resets ends the handler's
// context before its body's reader learns it, and a stream of many small
// flushed messages, each answered by window, is no flood.

// TestH2ResetCancelsContext: the client resets a stream (RST_STREAM
// CANCEL, as grpc-go's client cancelling an RPC) whose handler is reading
// the body and writing back: when the body's Read fails, r.Context() is done
// already, as on net/http, so the handler (grpc-go's) tells a cancelled
// request from a broken body; its writes fail too.
func TestH2ResetCancelsContext(t *testing.T) {
	testenv.ForEachBackend(t, func(t *testing.T, c testenv.Combo) {
		testenv.CheckLeaks(t)
		type result struct {
			readErr, ctxErr, writeErr error
		}
		got := make(chan result, 1)
		read := make(chan struct{})
		s, err := httpserver.New(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.WriteHeader(200)
			w.(http.Flusher).Flush()
			buf := make([]byte, 64)
			var res result
			for first := true; ; first = false {
				if _, res.readErr = r.Body.Read(buf); res.readErr != nil {
					break
				}
				if first {
					close(read)
				}
			}
			res.ctxErr = r.Context().Err()
			_, res.writeErr = w.Write([]byte("late"))
			if res.writeErr == nil {
				res.writeErr = http.NewResponseController(w).Flush()
			}
			got <- res
		}), httpserver.WithH2C())
		require.NoError(t, err)
		base := onLoop(t, c, s)
		r := dialH2(t, base)
		r.request(1, "/stream", false)
		require.NoError(t, r.fr.WriteData(1, false, []byte("first message")))
		select {
		case <-read:
		case <-time.After(30 * time.Second):
			t.Fatal("the handler read nothing within 30s")
		}
		require.NoError(t, r.fr.WriteRSTStream(1, http2.ErrCodeCancel))
		select {
		case res := <-got:
			require.Error(t, res.readErr)
			require.ErrorIs(t, res.ctxErr, context.Canceled, "the context when Read failed (%v)", res.readErr)
			require.Error(t, res.writeErr)
		case <-time.After(30 * time.Second):
			t.Fatal("the handler did not see the reset within 30s")
		}
	})
}

// TestH2SmallMessages: a handler that writes 20000 small messages, each
// flushed (a gRPC server stream), to a client that answers every DATA
// frame with WINDOW_UPDATEs for the stream and the connection: every
// message arrives, the connection stays (the WINDOW_UPDATE bound grows
// with the frames sent).
func TestH2SmallMessages(t *testing.T) {
	const n = 20000
	testenv.ForEachBackend(t, func(t *testing.T, c testenv.Combo) {
		testenv.CheckLeaks(t)
		s, err := httpserver.New(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Trailer", "Grpc-Status")
			for i := range n {
				if _, err := fmt.Fprintf(w, "%08d", i); err != nil {
					return
				}
				w.(http.Flusher).Flush()
			}
			w.Header().Set("Grpc-Status", "0")
		}), httpserver.WithH2C())
		require.NoError(t, err)
		base := onLoop(t, c, s)
		r := dialH2(t, base)
		r.request(1, "/small", true)
		var body []byte
		var trailers []hpack.HeaderField
		frames := 0
		for done := false; !done; {
			f := r.next()
			require.NotNil(t, f, "the connection ended after %d bytes", len(body))
			switch f := f.(type) {
			case *http2.GoAwayFrame:
				t.Fatalf("GOAWAY %v %q after %d bytes", f.ErrCode, f.DebugData(), len(body))
			case *http2.SettingsFrame:
				if !f.IsAck() {
					require.NoError(t, r.fr.WriteSettingsAck())
				}
			case *http2.DataFrame:
				frames++
				body = append(body, f.Data()...)
				if l := uint32(len(f.Data())); l > 0 {
					require.NoError(t, r.fr.WriteWindowUpdate(1, l))
					require.NoError(t, r.fr.WriteWindowUpdate(0, l))
				}
				done = f.StreamEnded()
			case *http2.MetaHeadersFrame:
				if done = f.StreamEnded(); done {
					trailers = f.Fields
				}
			case *http2.RSTStreamFrame:
				t.Fatalf("RST_STREAM %v", f.ErrCode)
			}
		}
		require.Equal(t, []hpack.HeaderField{{Name: "grpc-status", Value: "0"}}, trailers)
		require.Len(t, body, 8*n)
		for i := range n {
			require.Equal(t, fmt.Sprintf("%08d", i), string(body[8*i:8*i+8]), "message %d", i)
		}
		t.Logf("%d messages in %d DATA frames", n, frames)
	})
}

// TestH2FullDuplex: a handler echoing the body as it reads it, flushing
// each piece (a bidi gRPC stream), to Go's client sending 32 KiB and
// reading it back before sending more, 4 MiB in all: far over the stream
// and connection windows both ways, so the request's window must come
// back while the handler writes and the response's as the client reads.
// Then the request ends, and the response ends with its trailer.
func TestH2FullDuplex(t *testing.T) {
	const piece, pieces = 32 << 10, 128
	testenv.ForEachBackend(t, func(t *testing.T, c testenv.Combo) {
		testenv.CheckLeaks(t)
		s, err := httpserver.New(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Trailer", "Grpc-Status")
			w.WriteHeader(200)
			w.(http.Flusher).Flush()
			buf := make([]byte, 20<<10)
			n, err := io.CopyBuffer(flushWriter{w}, r.Body, buf)
			if err != nil {
				w.Header().Set("Grpc-Status", "13")
				return
			}
			w.Header().Set("Grpc-Status", fmt.Sprint(n))
		}), httpserver.WithH2C())
		require.NoError(t, err)
		base := onLoop(t, c, s)
		cl, tr := h2Client(base)
		defer tr.CloseIdleConnections()
		pr, pw := io.Pipe()
		defer pw.Close()
		req, err := http.NewRequest("POST", base+"/duplex", pr)
		require.NoError(t, err)
		type resp struct {
			res *http.Response
			err error
		}
		resc := make(chan resp, 1)
		go func() { res, err := cl.Do(req); resc <- resp{res, err} }()
		werr := make(chan error, 1)
		next := make(chan struct{})
		go func() {
			msg := make([]byte, piece)
			for i := range pieces {
				for j := range msg {
					msg[j] = byte(i + j)
				}
				if _, err := pw.Write(msg); err != nil {
					werr <- err
					return
				}
				select { // read back before the next
				case <-next:
				case <-t.Context().Done():
					werr <- t.Context().Err()
					return
				}
			}
			werr <- pw.Close()
		}()
		var res *http.Response
		select {
		case r := <-resc:
			require.NoError(t, r.err)
			res = r.res
		case <-time.After(30 * time.Second):
			t.Fatal("no response head within 30s")
		}
		defer res.Body.Close()
		got := make([]byte, piece)
		for i := range pieces {
			_, err := io.ReadFull(res.Body, got)
			require.NoError(t, err, "piece %d", i)
			for j := range got {
				if got[j] != byte(i+j) {
					t.Fatalf("piece %d byte %d: %d", i, j, got[j])
				}
			}
			next <- struct{}{}
		}
		require.NoError(t, <-werr)
		n, err := io.Copy(io.Discard, res.Body)
		require.NoError(t, err)
		require.Zero(t, n)
		require.Equal(t, fmt.Sprint(piece*pieces), res.Trailer.Get("Grpc-Status"))
	})
}

// flushWriter flushes every write.
type flushWriter struct{ w http.ResponseWriter }

func (f flushWriter) Write(p []byte) (int, error) {
	n, err := f.w.Write(p)
	if err == nil {
		err = http.NewResponseController(f.w).Flush()
	}
	return n, err
}

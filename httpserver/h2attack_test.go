package httpserver_test

import (
	"bytes"
	"net/http"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"golang.org/x/net/http2"
	"golang.org/x/net/http2/hpack"

	"github.com/ringloop/ringloop/httpserver"
	"github.com/ringloop/ringloop/internal/testenv"
)

// The published HTTP/2 attacks, each as the traffic of a raw Framer
// client, and the bound the server holds it to.

// TestH2RapidReset (CVE-2023-44487): a client opens streams and resets
// each at once, 2000 times, against handlers that take their time. The
// server starts at most Limits.Streams handlers at once (reset streams
// count until their handler returns), refuses the rest, and past twice
// Limits.Streams resets a second (at least 100) sends GOAWAY
// ENHANCE_YOUR_CALM and closes: bound, Limits.Streams handlers here (they
// never return), and at most twice Limits.Streams (at least 100) more a
// second for handlers that do. net/http queues up to four times its
// streams before the same GOAWAY.
func TestH2RapidReset(t *testing.T) {
	testenv.ForEachBackend(t, func(t *testing.T, c testenv.Combo) {
		testenv.CheckLeaks(t)
		var started, running, most atomic.Int64
		release := make(chan struct{})
		s, err := httpserver.New(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			started.Add(1)
			n := running.Add(1)
			for m := most.Load(); n > m && !most.CompareAndSwap(m, n); m = most.Load() {
			}
			<-release // ignores its context, as a handler busy elsewhere would
			running.Add(-1)
		}), httpserver.WithH2C(), httpserver.WithLimits(httpserver.Limits{Streams: 10}))
		require.NoError(t, err)
		defer close(release)
		base := onLoop(t, c, s)
		r := dialH2(t, base)
		done := make(chan *http2.GoAwayFrame, 1)
		go func() { done <- r.goAway() }()
		for i := range uint32(2000) {
			id := 2*i + 1
			if r.send(id, "/", true) != nil || r.fr.WriteRSTStream(id, http2.ErrCodeCancel) != nil {
				break // closed by the server
			}
		}
		ga := <-done
		require.NotNil(t, ga, "GOAWAY")
		require.Equal(t, http2.ErrCodeEnhanceYourCalm, ga.ErrCode)
		r.closed()
		// The streams dispatched before the handlers filled Limits.Streams
		// run (their handlers ignore the reset); no other ever does.
		testenv.Eventually(t, 10*time.Second, "the dispatched handlers", func() bool { return started.Load() == 10 })
		require.LessOrEqual(t, most.Load(), int64(10), "handlers at once")
	})
}

// TestH2ContinuationFlood (CVE-2024-27316 and its kin): a header block
// that never ends, in CONTINUATION frames of valid fields, is cut once
// its encoded size passes Limits.HeaderBytes (plus 4 KiB), and a run of
// empty CONTINUATION frames after 100; either gets GOAWAY
// ENHANCE_YOUR_CALM and the close, the server holding no more than the
// limit of it.
func TestH2ContinuationFlood(t *testing.T) {
	testenv.ForEachBackend(t, func(t *testing.T, c testenv.Combo) {
		testenv.CheckLeaks(t)
		s, err := httpserver.NewFast(fastEcho, httpserver.WithH2C(), httpserver.WithLimits(httpserver.Limits{HeaderBytes: 16 << 10}))
		require.NoError(t, err)
		base := onLoop(t, c, s)
		for _, empty := range []bool{false, true} {
			r := dialH2(t, base)
			done := make(chan *http2.GoAwayFrame, 1)
			go func() { done <- r.goAway() }()
			first := r.block(":method", "GET", ":scheme", "http", ":path", "/", ":authority", "test")
			require.NoError(t, r.fr.WriteHeaders(http2.HeadersFrameParam{StreamID: 1, BlockFragment: first}))
			frag := r.block("x-flood", strings.Repeat("f", 1000))
			if empty {
				frag = nil
			}
			sent := 0
			for range 100000 {
				if r.fr.WriteContinuation(1, false, frag) != nil {
					break
				}
				sent += len(frag)
			}
			ga := <-done
			require.NotNil(t, ga, "GOAWAY")
			require.Equal(t, http2.ErrCodeEnhanceYourCalm, ga.ErrCode, "empty %v", empty)
			r.closed()
		}
	})
}

// TestH2HPACKBomb: a field of 4 KiB added to the dynamic table, then
// referenced 500 times in a block of 500 bytes, decodes to 2 MB; the
// server stops decoding it into fields at Limits.HeaderBytes, answers
// 431 and serves the connection's next request. A dynamic table size
// update over the 4 KiB the server allows is a COMPRESSION_ERROR, and a
// client that allows the server a table of 1 GiB gets one of 4 KiB
// (the test's decoder refuses more).
func TestH2HPACKBomb(t *testing.T) {
	testenv.ForEachBackend(t, func(t *testing.T, c testenv.Combo) {
		testenv.CheckLeaks(t)
		s, err := httpserver.NewFast(fastEcho, httpserver.WithH2C(), httpserver.WithLimits(httpserver.Limits{HeaderBytes: 64 << 10}))
		require.NoError(t, err)
		base := onLoop(t, c, s)

		r := dialH2(t, base, http2.Setting{ID: http2.SettingHeaderTableSize, Val: 1 << 30})
		var blk bytes.Buffer
		enc := hpack.NewEncoder(&blk)
		for _, f := range []hpack.HeaderField{{Name: ":method", Value: "GET"}, {Name: ":scheme", Value: "http"}, {Name: ":path", Value: "/bomb"}, {Name: ":authority", Value: "t"}, {Name: "x-bomb", Value: strings.Repeat("b", 4000)}} {
			require.NoError(t, enc.WriteField(f))
		}
		// x-bomb is the newest entry of the dynamic table: index 62.
		for range 500 {
			blk.WriteByte(0x80 | 62)
		}
		require.Less(t, blk.Len(), 5000)
		require.NoError(t, r.fr.WriteHeaders(http2.HeadersFrameParam{StreamID: 1, BlockFragment: blk.Bytes(), EndStream: true, EndHeaders: true}))
		status, _, _ := r.response(1)
		require.Equal(t, "431", status)
		r.request(3, "/after", true)
		status, body, _ := r.response(3)
		require.Equal(t, "200", status)
		require.Contains(t, string(body), "uri=/after")

		r = dialH2(t, base)
		blk.Reset()
		blk.Write([]byte{0x3f, 0xe1, 0x3f}) // a dynamic table size update to 8192: 0x20|31, then 8161 as a varint
		require.NoError(t, r.fr.WriteHeaders(http2.HeadersFrameParam{StreamID: 1, BlockFragment: blk.Bytes(), EndStream: true, EndHeaders: true}))
		ga := r.goAway()
		require.NotNil(t, ga)
		require.Equal(t, http2.ErrCodeCompression, ga.ErrCode)
	})
}

// TestH2ControlFloods: 1000 SETTINGS, 5000 PINGs, 1000 empty DATA frames
// and 5000 WINDOW_UPDATEs, each in one burst, each past its bound a
// second (100, 1000, 100, 1000 with no data sent): GOAWAY
// ENHANCE_YOUR_CALM and the close. net/http bounds only the ACKs it has
// queued unsent (10000).
func TestH2ControlFloods(t *testing.T) {
	floods := map[string]func(r *h2Raw) error{
		"settings": func(r *h2Raw) error { return r.fr.WriteSettings(http2.Setting{ID: http2.SettingEnablePush, Val: 0}) },
		"ping":     func(r *h2Raw) error { return r.fr.WritePing(false, [8]byte{1}) },
		"empty data": func(r *h2Raw) error {
			return r.fr.WriteData(1, false, nil)
		},
		"window update": func(r *h2Raw) error { return r.fr.WriteWindowUpdate(0, 1) },
	}
	testenv.ForEachBackend(t, func(t *testing.T, c testenv.Combo) {
		testenv.CheckLeaks(t)
		s, err := httpserver.New(stdEcho, httpserver.WithH2C())
		require.NoError(t, err)
		base := onLoop(t, c, s)
		for name, send := range floods {
			t.Run(name, func(t *testing.T) {
				r := dialH2(t, base)
				r.request(1, "/up", false)
				done := make(chan *http2.GoAwayFrame, 1)
				go func() { done <- r.goAway() }()
				for range 5000 {
					if send(r) != nil {
						break
					}
				}
				ga := <-done
				require.NotNil(t, ga, "GOAWAY")
				require.Equal(t, http2.ErrCodeEnhanceYourCalm, ga.ErrCode, "%s", ga.DebugData())
				r.closed()
			})
		}
	})
}

// TestH2ZeroWindow: a client that gives no window (SETTINGS initial window
// 0, or none past the connection's first 64 KiB) and asks for a large
// response: the handler waits in Write with one chunk held (the server
// buffers nothing more of it), and after Timeouts.WriteStall its Write
// fails with an error wrapping os.ErrDeadlineExceeded, the connection
// ends (GOAWAY) and closes. net/http never closes such a connection.
func TestH2ZeroWindow(t *testing.T) {
	testenv.ForEachBackend(t, func(t *testing.T, c testenv.Combo) {
		for _, zero := range []string{"stream", "connection"} {
			t.Run(zero, func(t *testing.T) {
				testenv.CheckLeaks(t)
				var written atomic.Int64
				werr := make(chan error, 1)
				s, err := httpserver.New(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					chunk := bytes.Repeat([]byte("w"), 16<<10)
					for range 1024 { // 16 MiB
						if _, err := w.Write(chunk); err != nil {
							werr <- err
							return
						}
						w.(http.Flusher).Flush()
						written.Add(int64(len(chunk)))
					}
					werr <- nil
				}), httpserver.WithH2C(), httpserver.WithTimeouts(httpserver.Timeouts{WriteStall: 300 * time.Millisecond}))
				require.NoError(t, err)
				base := onLoop(t, c, s)
				var r *h2Raw
				if zero == "stream" {
					r = dialH2(t, base, http2.Setting{ID: http2.SettingInitialWindowSize, Val: 0})
				} else {
					r = dialH2(t, base, http2.Setting{ID: http2.SettingInitialWindowSize, Val: 1 << 30})
				}
				start := time.Now()
				r.request(1, "/big", true)
				ga := r.goAway() // reads what comes, gives no window
				elapsed := time.Since(start)
				require.NotNil(t, ga)
				r.closed()
				err = <-werr
				require.ErrorIs(t, err, os.ErrDeadlineExceeded)
				require.LessOrEqual(t, written.Load(), int64(128<<10), "what the handler got out before it was held")
				require.Less(t, elapsed, 10*time.Second)
			})
		}
	})
}

// TestH2StreamIDs: stream ids must grow: one that goes back, or an even
// one, is a connection error (PROTOCOL_ERROR), and the last id there is
// (2^31-1) is served.
func TestH2StreamIDs(t *testing.T) {
	testenv.ForEachBackend(t, func(t *testing.T, c testenv.Combo) {
		testenv.CheckLeaks(t)
		s, err := httpserver.NewFast(fastEcho, httpserver.WithH2C())
		require.NoError(t, err)
		base := onLoop(t, c, s)
		r := dialH2(t, base)
		r.request(1<<31-1, "/last", true)
		status, body, _ := r.response(1<<31 - 1)
		require.Equal(t, "200", status)
		require.Contains(t, string(body), "uri=/last")
		r.request(5, "/back", true)
		ga := r.goAway()
		require.NotNil(t, ga)
		require.Equal(t, http2.ErrCodeProtocol, ga.ErrCode)
		require.EqualValues(t, 1<<31-1, ga.LastStreamID)

		r = dialH2(t, base)
		r.request(2, "/even", true)
		ga = r.goAway()
		require.NotNil(t, ga)
		require.Equal(t, http2.ErrCodeProtocol, ga.ErrCode)
	})
}

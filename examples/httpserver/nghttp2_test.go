package main

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ringloop/ringloop/internal/testenv"
)

// TestNghttp2 drives the command with nghttp2's clients (Debian's
// nghttp2-client, which make deps installs) over h2c (prior knowledge)
// and over TLS (ALPN h2), on every backend and threading mode. nghttp -nv
// sends a GET and a POST with a body: its frame log must show the
// settings exchanged and each request answered whole (status, content
// type, as many DATA bytes as the body has, END_STREAM) with no stream
// reset and no GOAWAY. Then h2load sends 2000 requests on 4 connections,
// 10 streams at a time on each: all 2000 must succeed.
func TestNghttp2(t *testing.T) {
	nghttp := testenv.NeedTool(t, "nghttp")
	h2load := testenv.NeedTool(t, "h2load")
	pki := testenv.NewPKI(t)
	cert, key := pki.LeafFiles(t, "localhost", "localhost", "127.0.0.1")
	body := filepath.Join(t.TempDir(), "greet.json")
	require.NoError(t, os.WriteFile(body, []byte(`{"name":"gopher"}`), 0o644))
	greeting, err := json.Marshal(map[string]string{"greeting": "hello, gopher"})
	require.NoError(t, err)

	testenv.ForEachBackend(t, func(t *testing.T, c testenv.Combo) {
		for _, m := range []struct {
			name, scheme, proto string
			args                []string
		}{
			{"h2c", "http", "h2c", []string{"-h2c"}},
			{"tls", "https", "h2", []string{"-cert", cert, "-key", key}},
		} {
			t.Run(m.name, func(t *testing.T) {
				p := testenv.StartMain(t, c, append([]string{"-addr", "127.0.0.1:0"}, m.args...)...)
				base := m.scheme + "://" + p.Addr

				out := runClient(t, nghttp, "-nv", base+"/")
				checkNghttp(t, out, m.scheme == "https", "text/plain; charset=utf-8", len("Hello from ringloop\n"))
				out = runClient(t, nghttp, "-nv", "-d", body, "-H", "content-type: application/json", base+"/greet")
				checkNghttp(t, out, m.scheme == "https", "application/json", len(greeting)+1)
				require.Contains(t, out, "send DATA frame <length=17", "nghttp sent the body")

				out = runClient(t, h2load, "-n", "2000", "-c", "4", "-m", "10", base+"/")
				require.Contains(t, out, "Application protocol: "+m.proto+"\n", out)
				req := h2loadRequests.FindStringSubmatch(out)
				require.NotNil(t, req, "h2load's requests line:\n%s", out)
				want := []string{"2000", "2000", "2000", "2000", "0", "0", "0"}
				require.Equal(t, want, req[1:], "h2load requests: total, started, done, succeeded, failed, errored, timeout:\n%s", out)
				require.Contains(t, out, "status codes: 2000 2xx,", out)
				p.Interrupt(t)
			})
		}
	})
}

var (
	h2loadRequests = regexp.MustCompile(`requests: (\d+) total, (\d+) started, (\d+) done, (\d+) succeeded, (\d+) failed, (\d+) errored, (\d+) timeout`)
	nghttpStatus   = regexp.MustCompile(`recv \(stream_id=(\d+)\) :status: (\d+)`)
	nghttpType     = regexp.MustCompile(`recv \(stream_id=\d+\) content-type: (.*)`)
	nghttpData     = regexp.MustCompile(`recv DATA frame <length=(\d+), flags=0x([0-9a-f]+), stream_id=(\d+)>`)
)

// runClient runs one of nghttp2's programs, which must exit 0 within a
// minute, and returns its output.
func runClient(t *testing.T, prog string, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	out, err := exec.CommandContext(ctx, prog, args...).CombinedOutput()
	require.NoError(t, err, "%s %s:\n%s", filepath.Base(prog), strings.Join(args, " "), out)
	return string(out)
}

// checkNghttp checks nghttp -nv's frame log of one request: the server's
// SETTINGS came and acknowledged the client's, the response is 200 with
// contentType and n bytes of DATA on the request's stream, the last
// ending the stream, and the server reset nothing.
func checkNghttp(t *testing.T, out string, overTLS bool, contentType string, n int) {
	t.Helper()
	if overTLS {
		require.Contains(t, out, "The negotiated protocol: h2\n", out)
	}
	assert.Contains(t, out, "recv SETTINGS frame <length=", out)
	assert.Contains(t, out, "recv SETTINGS frame <length=0, flags=0x01, stream_id=0>", "the server acknowledged nghttp's SETTINGS:\n%s", out)
	st := nghttpStatus.FindStringSubmatch(out)
	require.NotNil(t, st, "no :status in\n%s", out)
	require.Equal(t, "200", st[2], out)
	ct := nghttpType.FindStringSubmatch(out)
	require.NotNil(t, ct, "no content-type in\n%s", out)
	assert.Equal(t, contentType, strings.TrimSpace(ct[1]))
	got, ended := 0, false
	for _, d := range nghttpData.FindAllStringSubmatch(out, -1) {
		require.Equal(t, st[1], d[3], "DATA on the request's stream:\n%s", out)
		require.False(t, ended, "DATA after END_STREAM:\n%s", out)
		l, _ := strconv.Atoi(d[1])
		flags, _ := strconv.ParseUint(d[2], 16, 8)
		got += l
		ended = flags&1 != 0
	}
	assert.Equal(t, n, got, "DATA bytes:\n%s", out)
	assert.True(t, ended, "the response ended its stream:\n%s", out)
	assert.NotContains(t, out, "recv RST_STREAM", out)
	assert.NotContains(t, out, "recv GOAWAY", out)
}

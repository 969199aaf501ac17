package looptls_test

import (
	"bytes"
	"context"
	"crypto/tls"
	"io"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ringloop/ringloop/internal/testenv"
)

// TestGoClientEcho: Go's tls.Dial talks to the loop: messages from 0 B to
// 1 MiB come back whole and in order over TLS 1.2 and 1.3; the handler saw
// ALPN and SNI; the client's Close (close_notify) reaches OnClose as
// io.EOF.
func TestGoClientEcho(t *testing.T) {
	p := testenv.NewPKI(t)
	testenv.ForEach(t, func(t *testing.T, c testenv.Combo) {
		for _, v := range []uint16{tls.VersionTLS12, tls.VersionTLS13} {
			t.Run(tls.VersionName(v), func(t *testing.T) {
				testenv.CheckLeaks(t)
				r := newRecorder()
				addr := serve(t, c, r, serverConfig(t, p))
				cfg := clientConfig(p)
				cfg.MaxVersion = v
				cfg.NextProtos = []string{"x-other", "http/1.1"}
				tc, err := tls.Dial("tcp", addr, cfg)
				require.NoError(t, err)
				defer tc.Close()
				require.NoError(t, tc.SetDeadline(time.Now().Add(60*time.Second)))
				require.Equal(t, "http/1.1", tc.ConnectionState().NegotiatedProtocol)
				for _, n := range []int{0, 1, 100, 16 << 10, 16<<10 + 1, 100_000, 1 << 20} {
					msg := payload(n)
					go func() { _, _ = tc.Write(msg) }()
					got := make([]byte, n)
					_, err := io.ReadFull(tc, got)
					require.NoError(t, err)
					require.True(t, bytes.Equal(msg, got), "%d bytes: echo differs", n)
				}
				o := <-r.opens
				require.Equal(t, "http/1.1", o.proto)
				require.Equal(t, "http/1.1", o.state.NegotiatedProtocol)
				require.Equal(t, "localhost", o.state.ServerName)
				require.Equal(t, v, o.state.Version)
				require.NoError(t, tc.Close())
				require.ErrorIs(t, <-r.closes, io.EOF)
			})
		}
	})
}

// run runs a command with a deadline and returns its output.
func run(t *testing.T, stdin string, name string, args ...string) string {
	t.Helper()
	testenv.NeedTool(t, name)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Stdin = strings.NewReader(stdin)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	require.NoError(t, err, "%s: %s", name, errb.String())
	return out.String()
}

// TestCurl: curl verifies the server against the generated CA, negotiates
// http/1.1 by ALPN and reads the answer.
func TestCurl(t *testing.T) {
	p := testenv.NewPKI(t)
	testenv.ForEach(t, func(t *testing.T, c testenv.Combo) {
		testenv.CheckLeaks(t)
		r := newRecorder()
		r.http = true
		addr := serve(t, c, r, serverConfig(t, p))
		port := addr[strings.LastIndexByte(addr, ':')+1:]
		out := run(t, "", "curl", "-sS", "--max-time", "30", "--cacert", p.CAFile,
			"--resolve", "localhost:"+port+":127.0.0.1", "https://localhost:"+port+"/")
		require.Equal(t, "hello\n", out)
		o := <-r.opens
		require.Equal(t, "http/1.1", o.proto)
		require.Equal(t, "localhost", o.state.ServerName)
		require.NoError(t, <-r.closes)
	})
}

// TestOpenSSL: openssl s_client verifies the server, sends a request on
// its stdin and prints the answer; the server's close (close_notify) ends
// it.
func TestOpenSSL(t *testing.T) {
	p := testenv.NewPKI(t)
	testenv.ForEach(t, func(t *testing.T, c testenv.Combo) {
		testenv.CheckLeaks(t)
		r := newRecorder()
		r.http = true
		addr := serve(t, c, r, serverConfig(t, p))
		out := run(t, "GET / HTTP/1.1\r\nHost: localhost\r\n\r\n", "openssl", "s_client",
			"-connect", addr, "-servername", "localhost", "-CAfile", p.CAFile,
			"-verify_return_error", "-alpn", "http/1.1", "-quiet")
		require.True(t, strings.HasSuffix(out, "\r\n\r\nhello\n"), "output: %q", out)
		o := <-r.opens
		require.Equal(t, "http/1.1", o.proto)
		require.Equal(t, "localhost", o.state.ServerName)
		err := <-r.closes
		require.NoError(t, err, "OnClose")
	})
}

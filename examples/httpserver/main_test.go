package main

import (
	"bufio"
	"context"
	"crypto/tls"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptrace"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"golang.org/x/net/http2"

	"github.com/ringloop/ringloop/internal/testenv"
)

// TestService serves the routes, then shuts down as on SIGTERM while a
// keep-alive connection is idle: serve returns nil and the connection is
// closed.
func TestService(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	addrc := make(chan string, 1)
	done := make(chan error, 1)
	go func() {
		done <- serve(ctx, "127.0.0.1:0", "", "", false, func(a net.Addr, _ string) { addrc <- a.String() })
	}()
	var addr string
	select {
	case addr = <-addrc:
	case err := <-done:
		t.Fatal(err)
	}
	base := "http://" + addr
	cl := &http.Client{Timeout: 10 * time.Second}
	defer cl.CloseIdleConnections()

	res, err := cl.Get(base + "/")
	require.NoError(t, err)
	b, _ := io.ReadAll(res.Body)
	res.Body.Close()
	require.Equal(t, "Hello from ringloop\n", string(b))

	res, err = cl.Post(base+"/greet", "application/json", strings.NewReader(`{"name":"gopher"}`))
	require.NoError(t, err)
	var g map[string]string
	require.NoError(t, json.NewDecoder(res.Body).Decode(&g))
	res.Body.Close()
	require.Equal(t, "hello, gopher", g["greeting"])

	res, err = cl.Get(base + "/status")
	require.NoError(t, err)
	var st map[string]any
	require.NoError(t, json.NewDecoder(res.Body).Decode(&st))
	res.Body.Close()
	require.Equal(t, "application/json", res.Header.Get("Content-Type"))
	require.EqualValues(t, 3, st["served"])

	res, err = cl.Get(base + "/nope")
	require.NoError(t, err)
	res.Body.Close()
	require.Equal(t, 404, res.StatusCode)

	// an idle keep-alive connection, then the signal
	c, err := net.DialTimeout("tcp", addr, 5*time.Second)
	require.NoError(t, err)
	defer c.Close()
	require.NoError(t, c.SetDeadline(time.Now().Add(20*time.Second)))
	_, err = io.WriteString(c, "GET / HTTP/1.1\r\nHost: x\r\n\r\n")
	require.NoError(t, err)
	br := bufio.NewReader(c)
	res, err = http.ReadResponse(br, nil)
	require.NoError(t, err)
	_, _ = io.ReadAll(res.Body)
	cancel()
	require.NoError(t, <-done)
	_, err = br.ReadByte()
	require.Error(t, err, "idle connection closed by the shutdown")
}

func TestMain(m *testing.M) {
	testenv.RunMain(main)
	os.Exit(m.Run())
}

// TestMainHTTPS runs the command with -cert and -key, on every backend,
// kernel profile and threading mode: Go's http.Client, trusting the test
// CA, reaches it over TLS on one keep-alive connection (ALPN http/1.1),
// and over HTTP/2 when it offers h2; SIGINT then stops it cleanly.
func TestMainHTTPS(t *testing.T) {
	pki := testenv.NewPKI(t)
	cert, key := pki.LeafFiles(t, "localhost", "localhost", "127.0.0.1")
	testenv.ForEach(t, func(t *testing.T, c testenv.Combo) {
		p := testenv.StartMain(t, c, "-addr", "127.0.0.1:0", "-cert", cert, "-key", key)
		tr := &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pki.Pool, NextProtos: []string{"http/1.1"}}}
		defer tr.CloseIdleConnections()
		cl := &http.Client{Transport: tr, Timeout: 30 * time.Second}
		var reused bool
		for i := range 3 {
			req, err := http.NewRequest("POST", "https://"+p.Addr+"/greet", strings.NewReader(`{"name":"gopher"}`))
			require.NoError(t, err)
			req = req.WithContext(httptrace.WithClientTrace(req.Context(), &httptrace.ClientTrace{
				GotConn: func(info httptrace.GotConnInfo) { reused = info.Reused },
			}))
			res, err := cl.Do(req)
			require.NoError(t, err)
			var g map[string]string
			require.NoError(t, json.NewDecoder(res.Body).Decode(&g))
			res.Body.Close()
			require.Equal(t, "hello, gopher", g["greeting"])
			require.Equal(t, "http/1.1", res.TLS.NegotiatedProtocol)
			require.Equal(t, i > 0, reused, "request %d: keep-alive", i)
		}
		h2 := &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pki.Pool}, ForceAttemptHTTP2: true}
		defer h2.CloseIdleConnections()
		res, err := (&http.Client{Transport: h2, Timeout: 30 * time.Second}).Get("https://" + p.Addr + "/")
		require.NoError(t, err)
		res.Body.Close()
		require.Equal(t, 2, res.ProtoMajor)
		p.Interrupt(t)
	})
}

// TestMainHTTP runs the command without -cert: plain HTTP.
func TestMainHTTP(t *testing.T) {
	testenv.ForEach(t, func(t *testing.T, c testenv.Combo) {
		p := testenv.StartMain(t, c, "-addr", "127.0.0.1:0")
		cl := &http.Client{Timeout: 30 * time.Second}
		defer cl.CloseIdleConnections()
		res, err := cl.Get("http://" + p.Addr + "/")
		require.NoError(t, err)
		b, err := io.ReadAll(res.Body)
		res.Body.Close()
		require.NoError(t, err)
		require.Equal(t, "Hello from ringloop\n", string(b))
		p.Interrupt(t)
	})
}

// TestMainH2C runs the command with -h2c: Go's HTTP/2 client with prior
// knowledge and an HTTP/1.1 client reach it on the same port, the HTTP/2
// one sending several requests at once on one connection; SIGINT then
// stops it cleanly (GOAWAY for the HTTP/2 connection).
func TestMainH2C(t *testing.T) {
	testenv.ForEach(t, func(t *testing.T, c testenv.Combo) {
		p := testenv.StartMain(t, c, "-addr", "127.0.0.1:0", "-h2c")
		tr := &http2.Transport{
			AllowHTTP: true,
			DialTLSContext: func(ctx context.Context, network, addr string, _ *tls.Config) (net.Conn, error) {
				var d net.Dialer
				return d.DialContext(ctx, network, addr)
			},
		}
		defer tr.CloseIdleConnections()
		h2 := &http.Client{Transport: tr, Timeout: 30 * time.Second}
		errs := make(chan error, 8)
		for range 8 {
			go func() {
				res, err := h2.Post("http://"+p.Addr+"/greet", "application/json", strings.NewReader(`{"name":"gopher"}`))
				if err != nil {
					errs <- err
					return
				}
				defer res.Body.Close()
				var g map[string]string
				if err := json.NewDecoder(res.Body).Decode(&g); err != nil || g["greeting"] != "hello, gopher" || res.ProtoMajor != 2 {
					errs <- fmt.Errorf("proto %s greeting %q err %v", res.Proto, g["greeting"], err)
					return
				}
				errs <- nil
			}()
		}
		for range 8 {
			require.NoError(t, <-errs)
		}
		h1 := &http.Client{Timeout: 30 * time.Second}
		defer h1.CloseIdleConnections()
		res, err := h1.Get("http://" + p.Addr + "/")
		require.NoError(t, err)
		b, err := io.ReadAll(res.Body)
		res.Body.Close()
		require.NoError(t, err)
		require.Equal(t, "Hello from ringloop\n", string(b))
		require.Equal(t, 1, res.ProtoMajor)
		p.Interrupt(t)
	})
}

package main

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
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
		done <- serve(ctx, "127.0.0.1:0", func(a net.Addr, _ string) { addrc <- a.String() })
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

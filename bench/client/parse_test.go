package client

import (
	"bufio"
	"context"
	"io"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

const wrkOut = `Running 2s test @ http://127.0.0.1:40000/plaintext
  1 threads and 50 connections
  Thread Stats   Avg      Stdev     Max   +/- Stdev
    Latency   512.34us  100.20us   5.00ms   90.00%
    Req/Sec    98.12k     1.23k  100.00k    70.00%
  Latency Distribution
     50%  500.00us
     75%  600.00us
     90%  700.00us
     99%    1.20ms
  196240 requests in 2.00s, 24.00MB read
  Socket errors: connect 0, read 2, write 0, timeout 1
  Non-2xx or 3xx responses: 12
Requests/sec:  98120.50
Transfer/sec:     12.00MB
`

func TestParseWrk(t *testing.T) {
	r, err := ParseWrk(wrkOut)
	require.NoError(t, err)
	require.EqualValues(t, 196240, r.Requests)
	require.InDelta(t, 2.0, r.Seconds, 1e-9)
	require.InDelta(t, 98120.5, r.Rate, 1e-9)
	require.InDelta(t, 500, r.P50, 1e-9)
	require.InDelta(t, 1200, r.P99, 1e-9)
	require.EqualValues(t, 3, r.Errors)
	require.EqualValues(t, 12, r.Non2xx)
}

func TestParseWrkUnitsAndFailures(t *testing.T) {
	for in, want := range map[string]float64{"12.5us": 12.5, "1.20ms": 1200, "2.00s": 2e6} {
		got, err := parseWrkLatency(in)
		require.NoError(t, err)
		require.InDelta(t, want, got, 1e-6, in)
	}
	_, err := parseWrkLatency("12parsecs")
	require.Error(t, err)
	d, err := parseWrkDuration("1.00m")
	require.NoError(t, err)
	require.InDelta(t, 60, d, 1e-9)

	_, err = ParseWrk("unable to connect to 127.0.0.1:1 Connection refused\n")
	require.Error(t, err, "no totals: an error, not zeros")
}

func TestReadResponse(t *testing.T) {
	in := "HTTP/1.1 200 OK\r\nServer: x\r\nDate: Mon, 23 Nov 2026 08:00:00 GMT\r\ncontent-length: 13\r\n\r\nHello, World!" +
		"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
	r := bufio.NewReader(strings.NewReader(in))
	resp, err := ReadResponse(r)
	require.NoError(t, err)
	require.Equal(t, 200, resp.Status)
	require.NoError(t, CheckPlaintext(resp))
	resp, err = ReadResponse(r)
	require.NoError(t, err)
	require.Equal(t, 404, resp.Status)
	require.True(t, resp.Close)
	require.Error(t, CheckPlaintext(resp))
	_, err = ReadResponse(r)
	require.ErrorIs(t, err, io.EOF)
}

func TestReadResponseRejects(t *testing.T) {
	for _, bad := range []string{
		"HTTP/1.1 200 OK\r\n\r\n",                                       // no Content-Length
		"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n",         // chunked
		"SMTP 220 hello\r\n\r\n",                                        // not HTTP
		"HTTP/1.1 2x0 OK\r\nContent-Length: 0\r\n\r\n",                  // bad status
		"HTTP/1.1 200 OK\nContent-Length: 0\n\n",                        // LF only
		"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nabc",               // short body
		"HTTP/1.1 200 OK\r\nContent-Length: x\r\n\r\n",                  // bad length
		"HTTP/1.1 200 OK\r\nno colon here\r\nContent-Length: 0\r\n\r\n", // bad header
	} {
		_, err := ReadResponse(bufio.NewReader(strings.NewReader(bad)))
		require.Error(t, err, "%q", bad)
	}
}

// A server that answers slower than the arrival rate is charged for it: the
// achieved rate falls below the target and latency counts the queueing.
func TestOpenLoopChargesASlowServer(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer ln.Close()
	go func() {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		defer c.Close()
		r := bufio.NewReader(c)
		for {
			for { // one request head
				line, err := r.ReadString('\n')
				if err != nil {
					return
				}
				if line == "\r\n" {
					break
				}
			}
			time.Sleep(20 * time.Millisecond) // at most 50 responses/s
			_, _ = io.WriteString(c, "HTTP/1.1 200 OK\r\nServer: t\r\nDate: now\r\nContent-Length: 13\r\n\r\nHello, World!")
		}
	}()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	res, err := RunOpenLoop(ctx, OpenLoopConfig{Addr: ln.Addr().String(), Conns: 1, Rate: 200, Duration: 200 * time.Millisecond})
	require.NoError(t, err)
	require.EqualValues(t, 40, res.Reqs, "every request due in the window is sent and answered")
	require.Less(t, res.Achieved, 100.0, "40 answers at ≥20 ms each take ≥0.8 s")
	require.Greater(t, res.Latency.Max, 500_000.0, "the last request waited behind the others (µs)")
}

// TestRunWrkWantsLatency: a wrk report with totals but no latency
// percentiles is ErrWrkNoLatency (the harness runs wrk again), not a row
// without its p99, unless wrk pipelined (it never has them then). A shell
// stands in for wrk through the argv prefix.
func TestRunWrkWantsLatency(t *testing.T) {
	noLatency := "  4 threads and 4 connections\n  1000 requests in 1.00s, 1.00MB read\nRequests/sec:   1000.00\n"
	_, err := RunWrk(context.Background(), WrkConfig{Addr: "127.0.0.1:1", Conns: 4, Duration: time.Second,
		Wrap: []string{"sh", "-c", "printf '" + noLatency + "'", "--"}})
	require.ErrorIs(t, err, ErrWrkNoLatency)

	r, err := RunWrk(context.Background(), WrkConfig{Addr: "127.0.0.1:1", Conns: 4, Duration: time.Second,
		Wrap: []string{"sh", "-c", "printf '" + strings.ReplaceAll(wrkOut, "%", "%%") + "'", "--"}})
	require.NoError(t, err)
	require.InDelta(t, 1200, r.P99, 1e-6)

	// Pipelined: wrk prints zero percentiles above p50; the rate stands.
	r, err = RunWrk(context.Background(), WrkConfig{Addr: "127.0.0.1:1", Conns: 4, Duration: time.Second, Depth: 16, Script: "pipeline.lua",
		Wrap: []string{"sh", "-c", "printf '" + noLatency + "'", "--"}})
	require.NoError(t, err)
	require.InDelta(t, 1000, r.Rate, 1e-6)
}

package main

import (
	"crypto/tls"
	"fmt"
	"net/http"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/ringloop/ringloop/engine"
	"github.com/ringloop/ringloop/internal/testenv"
)

// TestCompare compares the server on ringloop's PacketConn with the same
// server on a net.UDPConn, by hand: HTTP3_COMPARE=N runs N GET / per
// server (N POST /echo of HTTP3_COMPARE_BODY bytes if set), over 8
// connections with 8 requests in flight on each, by quic-go's client in
// this process, and logs requests per second and the server process's CPU
// per request (user and system, from the rusage of the waited-for child,
// startup included, so N should be large: 20000 GETs).
func TestCompare(t *testing.T) {
	n, _ := strconv.Atoi(os.Getenv("HTTP3_COMPARE"))
	size, _ := strconv.Atoi(os.Getenv("HTTP3_COMPARE_BODY"))
	if n <= 0 {
		t.Skip("a measurement run by hand: HTTP3_COMPARE=20000")
	}
	for _, s := range []struct {
		name, socket string
		backend      engine.Backend
	}{
		{"ringloop-io_uring", "ringloop", engine.BackendUring},
		{"ringloop-epoll", "ringloop", engine.BackendEpoll},
		{"net", "net", engine.BackendEpoll},
	} {
		t.Run(s.name, func(t *testing.T) {
			for _, c := range testenv.Combos() {
				if c.Backend == s.backend && c.Profile == "native" {
					c.Need(t)
					compare(t, c, s.socket, n, size)
					return
				}
			}
			t.Skipf("no %s combo", s.backend)
		})
	}
}

func compare(t *testing.T, c testenv.Combo, socket string, n, size int) {
	method, path, body := http.MethodGet, "/", []byte(nil)
	if size > 0 {
		method, path, body = http.MethodPost, "/echo", make([]byte, size)
	}
	pki := testenv.NewPKI(t)
	certFile, keyFile := pki.LeafFiles(t, "localhost", "localhost", "127.0.0.1")
	tlsConf := &tls.Config{RootCAs: pki.Pool}
	var before syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_CHILDREN, &before); err != nil {
		t.Fatal(err)
	}
	p := testenv.StartMain(t, c, "-addr", "127.0.0.1:0", "-cert", certFile, "-key", keyFile, "-socket", socket)
	base := "https://" + p.Addr
	const conns, inFlight = 8, 8
	clients := make([]*http.Client, conns)
	for i := range clients {
		clients[i] = client(t, tlsConf)
		if _, err := do(clients[i], http.MethodGet, base+"/", nil); err != nil {
			t.Fatal(err)
		}
	}
	var left atomic.Int64
	left.Store(int64(n))
	var failed atomic.Value
	var wg sync.WaitGroup
	start := time.Now()
	for i := range conns * inFlight {
		wg.Go(func() {
			for left.Add(-1) >= 0 {
				got, err := do(clients[i%conns], method, base+path, body)
				if err == nil && size > 0 && len(got) != size {
					err = fmt.Errorf("%d bytes back of %d", len(got), size)
				}
				if err != nil {
					failed.CompareAndSwap(nil, err)
					return
				}
			}
		})
	}
	wg.Wait()
	elapsed := time.Since(start)
	if err, _ := failed.Load().(error); err != nil {
		t.Fatal(err)
	}
	p.Interrupt(t)
	var after syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_CHILDREN, &after); err != nil {
		t.Fatal(err)
	}
	cpu := time.Duration(after.Utime.Nano() + after.Stime.Nano() - before.Utime.Nano() - before.Stime.Nano())
	t.Logf("%s on %s: %d %s %s requests in %v: %.0f req/s, server CPU %v: %.1f µs/req",
		socket, c, n, method, path, elapsed.Round(time.Millisecond), float64(n)/elapsed.Seconds(), cpu.Round(time.Millisecond), float64(cpu.Microseconds())/float64(n))
}

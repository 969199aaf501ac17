package netconn_test

import (
	"crypto/tls"
	"fmt"
	"io"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/ringloop/ringloop/engine"
	"github.com/ringloop/ringloop/netconn"
)

// benchListeners are the servers compared side by side: package net's
// listener and ringloop's on one loop of each backend.
func benchListeners(b *testing.B) []struct {
	name string
	open func(b *testing.B) net.Listener
} {
	ringloop := func(be engine.Backend) func(b *testing.B) net.Listener {
		return func(b *testing.B) net.Listener {
			loop, err := engine.New(engine.WithBackend(be))
			if err != nil {
				b.Fatal(err)
			}
			b.Cleanup(func() { _ = loop.Close() })
			ln, err := netconn.Listen(loop, "tcp", "127.0.0.1:0")
			if err != nil {
				b.Fatal(err)
			}
			return ln
		}
	}
	return []struct {
		name string
		open func(b *testing.B) net.Listener
	}{
		{"net", func(b *testing.B) net.Listener {
			ln, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				b.Fatal(err)
			}
			return ln
		}},
		{"ringloop-uring", ringloop(engine.BackendUring)},
		{"ringloop-epoll", ringloop(engine.BackendEpoll)},
	}
}

// BenchmarkHTTP: net/http served on each listener, 32 keep-alive client
// connections (package net) in parallel; one op is one GET.
func BenchmarkHTTP(b *testing.B) {
	body := []byte("Hello, World!")
	for _, bl := range benchListeners(b) {
		b.Run(bl.name, func(b *testing.B) {
			ln := bl.open(b)
			srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
				w.Header()["Content-Type"] = []string{"text/plain"}
				_, _ = w.Write(body)
			})}
			go func() { _ = srv.Serve(ln) }()
			defer srv.Close()
			tr := &http.Transport{MaxIdleConnsPerHost: 32, MaxConnsPerHost: 32}
			defer tr.CloseIdleConnections()
			client := &http.Client{Transport: tr}
			url := "http://" + ln.Addr().String() + "/"
			b.SetParallelism(16)
			b.ReportAllocs()
			b.ResetTimer()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					resp, err := client.Get(url)
					if err != nil {
						b.Error(err)
						return
					}
					_, _ = io.Copy(io.Discard, resp.Body)
					resp.Body.Close()
				}
			})
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "req/s")
		})
	}
}

// BenchmarkTLSEcho: a crypto/tls echo server (a goroutine per connection)
// on each listener; 16 client connections (package net) each write 1 KiB
// and read it back; one op is one round trip.
func BenchmarkTLSEcho(b *testing.B) {
	cert, pool := selfSigned(&testing.T{})
	const conns, size = 16, 1024
	for _, bl := range benchListeners(b) {
		b.Run(bl.name, func(b *testing.B) {
			ln := bl.open(b)
			var wg sync.WaitGroup
			defer wg.Wait()
			defer ln.Close()
			wg.Add(1)
			go func() {
				defer wg.Done()
				for {
					c, err := ln.Accept()
					if err != nil {
						return
					}
					wg.Add(1)
					go func() {
						defer wg.Done()
						s := tls.Server(c, &tls.Config{Certificates: []tls.Certificate{cert}})
						defer s.Close()
						_, _ = io.Copy(s, s)
					}()
				}
			}()
			clients := make([]*tls.Conn, conns)
			for i := range clients {
				c, err := tls.Dial("tcp", ln.Addr().String(), &tls.Config{RootCAs: pool, ServerName: "127.0.0.1"})
				if err != nil {
					b.Fatal(err)
				}
				defer c.Close()
				clients[i] = c
			}
			var left atomic.Int64
			left.Store(int64(b.N))
			b.SetBytes(size)
			b.ReportAllocs()
			b.ResetTimer()
			var cw sync.WaitGroup
			for _, c := range clients {
				cw.Add(1)
				go func() {
					defer cw.Done()
					msg, got := make([]byte, size), make([]byte, size)
					for left.Add(-1) >= 0 {
						if _, err := c.Write(msg); err != nil {
							b.Error(err)
							return
						}
						if _, err := io.ReadFull(c, got); err != nil {
							b.Error(fmt.Errorf("read: %w", err))
							return
						}
					}
				}()
			}
			cw.Wait()
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "msgs/s")
		})
	}
}

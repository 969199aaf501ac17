package httpserver_test

import (
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/ringloop/ringloop/engine"
	"github.com/ringloop/ringloop/httpserver"
	"github.com/ringloop/ringloop/internal/driver"
	"github.com/ringloop/ringloop/internal/testenv"
)

// Request round trips over keep-alive connections (one request at a time
// per connection, clients in this process), against the fast API, the
// adapter on goroutines, the adapter inline, and net/http, with the same
// "Hello, World!" service. The client side allocates nothing, so allocs/op
// is the server's cost per request: 0 for the fast API.
//
//	go test -run '^$' -bench Server -benchmem ./httpserver
func BenchmarkServer(b *testing.B) {
	for _, c := range testenv.Combos() {
		if c.Profile != driver.Native {
			continue
		}
		for _, v := range []struct {
			name string
			make func() (*httpserver.Server, error)
		}{
			{"fast", func() (*httpserver.Server, error) { return httpserver.NewFast(fastHello) }},
			{"adapter", func() (*httpserver.Server, error) { return httpserver.New(stdHello) }},
			{"inline", func() (*httpserver.Server, error) { return httpserver.New(stdHello, httpserver.WithInlineHTTP()) }},
		} {
			b.Run(c.String()+"/"+v.name, func(b *testing.B) {
				loop, err := engine.New(c.Options()...)
				if err != nil {
					b.Fatal(err)
				}
				defer loop.Close()
				s, err := v.make()
				if err != nil {
					b.Fatal(err)
				}
				defer s.Close()
				a, err := s.Listen(loop, "tcp", "127.0.0.1:0")
				if err != nil {
					b.Fatal(err)
				}
				roundTrips(b, a.String())
			})
		}
	}
	b.Run("net-http", func(b *testing.B) {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			b.Fatal(err)
		}
		hs := &http.Server{Handler: stdHello}
		go func() { _ = hs.Serve(ln) }()
		defer hs.Close()
		roundTrips(b, ln.Addr().String())
	})
}

var helloReq = []byte("GET /hello HTTP/1.1\r\nHost: bench\r\n\r\n")

// roundTrips runs b.N requests from parallel goroutines, each on its own
// connection, reading each response in full (its length is learnt once).
func roundTrips(b *testing.B, addr string) {
	size := responseSize(b, addr)
	b.SetParallelism(8)
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		c, err := net.DialTimeout("tcp", addr, 5*time.Second)
		if err != nil {
			b.Error(err)
			return
		}
		defer c.Close()
		buf := make([]byte, size)
		for pb.Next() {
			if _, err := c.Write(helloReq); err != nil {
				b.Error(err)
				return
			}
			if _, err := io.ReadFull(c, buf); err != nil {
				b.Error(err)
				return
			}
		}
	})
}

// responseSize reads one response and returns its length in bytes (the Date
// header has a fixed width).
func responseSize(b *testing.B, addr string) int {
	c, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := c.Write(helloReq); err != nil {
		b.Fatal(err)
	}
	var got []byte
	buf := make([]byte, 4096)
	for !strings.HasSuffix(string(got), "Hello, World!") {
		n, err := c.Read(buf)
		if err != nil {
			b.Fatal(err)
		}
		got = append(got, buf[:n]...)
	}
	return len(got)
}

package looptls_test

import (
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ringloop/ringloop/engine"
	"github.com/ringloop/ringloop/internal/testenv"
	"github.com/ringloop/ringloop/looptls"
)

// pinger is a client handler that sends a message, waits for the echo and
// sends again, rounds times.
type pinger struct {
	c      *engine.Conn
	msg    []byte
	got    int
	rounds int
	done   chan struct{}
	opened chan struct{}
}

func (p *pinger) OnOpen(c *engine.Conn) { p.c = c; p.opened <- struct{}{} }
func (p *pinger) OnData(c *engine.Conn, b []byte) {
	p.got += len(b)
	if p.got < len(p.msg) {
		return
	}
	p.got = 0
	if p.rounds--; p.rounds <= 0 {
		p.done <- struct{}{}
		return
	}
	_, _ = c.Write(p.msg)
}
func (p *pinger) OnClose(*engine.Conn, error) {}

type echo struct{}

func (echo) OnOpen(*engine.Conn)             {}
func (echo) OnData(c *engine.Conn, b []byte) { _, _ = c.Write(b) }
func (echo) OnClose(*engine.Conn, error)     {}

// BenchmarkEcho: a looptls client and server on one loop exchange 1 KiB
// messages; ns/op and allocs/op are per round trip (both sides: two
// encryptions and two decryptions), in steady state.
func BenchmarkEcho(b *testing.B) {
	p := testenv.NewPKI(b)
	for _, c := range testenv.Combos() {
		if c.Profile != "native" {
			continue
		}
		b.Run(c.Backend.String()+"/"+c.Threading.String(), func(b *testing.B) {
			c.Need(b)
			loop, err := engine.New(c.Options()...)
			if err != nil {
				b.Fatal(err)
			}
			defer loop.Close()
			ln, err := engine.Listen(loop, "tcp", "127.0.0.1:0", looptls.Server(echo{}, &tls.Config{
				Certificates: []tls.Certificate{p.Leaf(b, "localhost", "localhost")},
			}))
			if err != nil {
				b.Fatal(err)
			}
			defer ln.Close()
			pg := &pinger{msg: make([]byte, 1024), done: make(chan struct{}, 1), opened: make(chan struct{}, 1)}
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			if _, err := engine.Dial(ctx, loop, "tcp", ln.Addr().String(), looptls.Client(pg, &tls.Config{RootCAs: p.Pool, ServerName: "localhost"})); err != nil {
				b.Fatal(err)
			}
			<-pg.opened
			// rounds runs n round trips, started on the loop (the client's
			// state is the loop's).
			rounds := func(n int) {
				if _, err := engine.Submit(loop, func() (struct{}, error) {
					pg.rounds = n
					_, err := pg.c.Write(pg.msg)
					return struct{}{}, err
				}).Await(ctx); err != nil {
					b.Fatal(err)
				}
				<-pg.done
			}
			rounds(200) // warm up: buffers grown, session settled
			b.ReportAllocs()
			b.ResetTimer()
			rounds(b.N)
		})
	}
}

// BenchmarkHandshake: a crypto/tls client dials, completes a full TLS 1.3
// handshake (no session cache), echoes one byte and closes, one connection
// at a time; the server is looptls on a loop or, for comparison, crypto/tls
// on net's listener with a goroutine per connection. ns/op and allocs/op
// count both sides in this process: the client's share is the same in
// every sub-benchmark, so the differences are the servers'.
func BenchmarkHandshake(b *testing.B) {
	p := testenv.NewPKI(b)
	cfg := &tls.Config{Certificates: []tls.Certificate{p.Leaf(b, "localhost", "localhost")}}
	run := func(b *testing.B, addr string) {
		one := func() {
			tc, err := tls.Dial("tcp", addr, &tls.Config{RootCAs: p.Pool, ServerName: "localhost"})
			if err != nil {
				b.Fatal(err)
			}
			var got [1]byte
			if _, err = tc.Write([]byte{'x'}); err == nil {
				_, err = io.ReadFull(tc, got[:])
			}
			if err != nil {
				b.Fatal(err)
			}
			_ = tc.Close()
		}
		for range 20 { // warm up
			one()
		}
		b.ReportAllocs()
		b.ResetTimer()
		for range b.N {
			one()
		}
	}
	b.Run("net+crypto-tls", func(b *testing.B) {
		ln, err := tls.Listen("tcp", "127.0.0.1:0", cfg)
		if err != nil {
			b.Fatal(err)
		}
		defer ln.Close()
		go func() {
			for {
				c, err := ln.Accept()
				if err != nil {
					return
				}
				go func() {
					defer c.Close()
					buf := make([]byte, 1024)
					for {
						n, err := c.Read(buf)
						if err != nil {
							return
						}
						if _, err := c.Write(buf[:n]); err != nil {
							return
						}
					}
				}()
			}
		}()
		run(b, ln.Addr().String())
	})
	for _, c := range testenv.Combos() {
		if c.Profile != "native" {
			continue
		}
		b.Run("looptls/"+c.Backend.String()+"/"+c.Threading.String(), func(b *testing.B) {
			c.Need(b)
			loop, err := engine.New(c.Options()...)
			if err != nil {
				b.Fatal(err)
			}
			defer loop.Close()
			ln, err := engine.Listen(loop, "tcp", "127.0.0.1:0", looptls.Server(echo{}, cfg))
			if err != nil {
				b.Fatal(err)
			}
			defer ln.Close()
			run(b, ln.Addr().String())
		})
	}
}

// BenchmarkServerEcho: conns crypto/tls clients on net (a goroutine each)
// send messages (1 KiB; 256 KiB: records split between deliveries) and
// read them back, against crypto/tls on net's
// listener (a goroutine per connection) or looptls on one loop. ns/op and
// allocs/op are per message, clients and server together: the clients'
// share is the same in every sub-benchmark, so the differences are the
// servers'.
func BenchmarkServerEcho(b *testing.B) {
	p := testenv.NewPKI(b)
	cfg := &tls.Config{Certificates: []tls.Certificate{p.Leaf(b, "localhost", "localhost")}}
	run := func(b *testing.B, addr string, conns, size int) {
		clients := make([]*tls.Conn, conns)
		for i := range clients {
			tc, err := tls.Dial("tcp", addr, &tls.Config{RootCAs: p.Pool, ServerName: "localhost"})
			if err != nil {
				b.Fatal(err)
			}
			defer tc.Close()
			clients[i] = tc
		}
		var left atomic.Int64
		exchange := func(n int64) {
			left.Store(n)
			var wg sync.WaitGroup
			for _, tc := range clients {
				wg.Add(1)
				go func() {
					defer wg.Done()
					msg, got := make([]byte, size), make([]byte, size)
					for left.Add(-1) >= 0 {
						if _, err := tc.Write(msg); err != nil {
							b.Error(err)
							return
						}
						if _, err := io.ReadFull(tc, got); err != nil {
							b.Error(err)
							return
						}
					}
				}()
			}
			wg.Wait()
		}
		exchange(int64(20 * conns)) // warm up
		b.ReportAllocs()
		b.ResetTimer()
		exchange(int64(b.N))
		b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "msgs/s")
	}
	for _, cs := range [][2]int{{1, 1024}, {64, 1024}, {1, 256 << 10}} {
		conns, size := cs[0], cs[1]
		b.Run(fmt.Sprintf("c%d-%d/net+crypto-tls", conns, size), func(b *testing.B) {
			ln, err := tls.Listen("tcp", "127.0.0.1:0", cfg)
			if err != nil {
				b.Fatal(err)
			}
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
						defer c.Close()
						buf := make([]byte, 16<<10)
						for {
							n, err := c.Read(buf)
							if err != nil {
								return
							}
							if _, err := c.Write(buf[:n]); err != nil {
								return
							}
						}
					}()
				}
			}()
			run(b, ln.Addr().String(), conns, size)
		})
		for _, c := range testenv.Combos() {
			if c.Profile != "native" {
				continue
			}
			b.Run(fmt.Sprintf("c%d-%d/looptls/%s/%s", conns, size, c.Backend, c.Threading), func(b *testing.B) {
				c.Need(b)
				loop, err := engine.New(c.Options()...)
				if err != nil {
					b.Fatal(err)
				}
				defer loop.Close()
				ln, err := engine.Listen(loop, "tcp", "127.0.0.1:0", looptls.Server(echo{}, cfg))
				if err != nil {
					b.Fatal(err)
				}
				defer ln.Close()
				run(b, ln.Addr().String(), conns, size)
			})
		}
	}
}

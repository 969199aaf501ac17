package loopgroup_test

import (
	"fmt"
	"io"
	"net"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/ringloop/ringloop/engine"
	"github.com/ringloop/ringloop/examples/echo"
	"github.com/ringloop/ringloop/loopgroup"
)

// closer closes every connection as soon as it opens.
type closer struct{}

func (closer) OnOpen(c *engine.Conn)           { c.Close() }
func (closer) OnData(c *engine.Conn, b []byte) {}
func (closer) OnClose(c *engine.Conn, _ error) {}

// BenchmarkAccept measures accepted connections per second: boss/worker with
// the task-ring hand-off, boss/worker with MSG_RING, and SO_REUSEPORT (each
// worker accepts for itself). Two worker loops; 8 client goroutines each
// connect, wait for the server's close (so the connection was accepted and
// served) and close.
func BenchmarkAccept(b *testing.B) {
	for _, mode := range []string{"task", "msgring", "reuseport"} {
		b.Run(mode, func(b *testing.B) {
			bossOpts := []engine.Option{engine.WithBackend(engine.BackendUring)}
			if mode == "task" {
				// The 5.15 profile has no MSG_RING, so the boss hands off
				// by task (its accepts are single-shot there too).
				bossOpts = append(bossOpts, engine.WithDriverConfig(engine.DriverConfig{Profile: "5.15"}))
			}
			boss, err := loopgroup.New(loopgroup.WithLoops(1), loopgroup.WithEngineOptions(bossOpts...))
			if err != nil {
				b.Skip(err)
			}
			defer boss.Close()
			workers, err := loopgroup.New(loopgroup.WithLoops(2), loopgroup.WithEngineOptions(engine.WithBackend(engine.BackendUring)))
			if err != nil {
				b.Fatal(err)
			}
			defer workers.Close()
			var opts []loopgroup.ServerOption
			switch mode {
			case "task":
				opts = append(opts, loopgroup.WithBoss(boss))
			case "msgring":
				if !workers.Loops()[0].Backend().Features.MsgRing {
					b.Skip("no MSG_RING on this kernel")
				}
				opts = append(opts, loopgroup.WithBoss(boss))
			case "reuseport":
				opts = append(opts, loopgroup.WithListenerPerLoop())
			}
			srv, err := loopgroup.Serve(workers, "tcp", "127.0.0.1:0", closer{}, opts...)
			if err != nil {
				b.Fatal(err)
			}
			defer srv.Close()
			port := srv.Addr().(*net.TCPAddr).Port
			b.ReportAllocs()
			b.ResetTimer()
			start := time.Now()
			var left atomic.Int64
			left.Store(int64(b.N))
			var wg sync.WaitGroup
			for range 8 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					buf := make([]byte, 16)
					for left.Add(-1) >= 0 {
						if err := connectAndWaitClose(port, buf); err != nil {
							b.Error(err)
							return
						}
					}
				}()
			}
			wg.Wait()
			el := time.Since(start)
			b.StopTimer()
			b.ReportMetric(float64(b.N)/el.Seconds(), "conns/s")
			st := boss.Loops()[0].Metrics()
			if mode == "msgring" && st.MsgRingHandoffs != st.Handoffs || mode == "task" && st.MsgRingHandoffs != 0 {
				b.Fatalf("hand-offs by the wrong path: %+v", st)
			}
		})
	}
}

func connectAndWaitClose(port int, buf []byte) error {
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	if err := unix.Connect(fd, &unix.SockaddrInet4{Port: port, Addr: [4]byte{127, 0, 0, 1}}); err != nil {
		return err
	}
	for {
		n, err := unix.Read(fd, buf)
		if err == unix.EINTR {
			continue
		}
		if err != nil && err != unix.ECONNRESET {
			return err
		}
		if n <= 0 {
			return nil
		}
	}
}

// BenchmarkGroupSize compares loop counts for an echo server: one loop per
// GOMAXPROCS (the default) against Netty's two. 32 connections each send
// 64-byte messages and wait for the echo; msgs/s is the server's rate.
func BenchmarkGroupSize(b *testing.B) {
	p := runtime.GOMAXPROCS(0)
	for _, backend := range []engine.Backend{engine.BackendUring, engine.BackendEpoll} {
		for _, n := range []int{p, 2 * p} {
			b.Run(fmt.Sprintf("%s/loops=%d", backend, n), func(b *testing.B) {
				g, err := loopgroup.New(loopgroup.WithLoops(n), loopgroup.WithEngineOptions(engine.WithBackend(backend)))
				if err != nil {
					b.Skip(err)
				}
				defer g.Close()
				srv, err := loopgroup.Serve(g, "tcp", "127.0.0.1:0", echo.Handler{})
				if err != nil {
					b.Fatal(err)
				}
				defer srv.Close()
				const conns = 32
				cs := make([]net.Conn, conns)
				for i := range cs {
					if cs[i], err = net.Dial("tcp", srv.Addr().String()); err != nil {
						b.Fatal(err)
					}
					defer cs[i].Close()
				}
				b.ReportAllocs()
				b.ResetTimer()
				start := time.Now()
				var left atomic.Int64
				left.Store(int64(b.N))
				var wg sync.WaitGroup
				for _, c := range cs {
					wg.Add(1)
					go func() {
						defer wg.Done()
						msg, buf := make([]byte, 64), make([]byte, 64)
						for left.Add(-1) >= 0 {
							if _, err := c.Write(msg); err != nil {
								b.Error(err)
								return
							}
							if _, err := io.ReadFull(c, buf); err != nil {
								b.Error(err)
								return
							}
						}
					}()
				}
				wg.Wait()
				b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "msgs/s")
			})
		}
	}
}

// BenchmarkNext is the chooser's cost per pick.
func BenchmarkNext(b *testing.B) {
	for _, c := range []struct {
		name string
		n    int
		f    loopgroup.ChooserFactory
	}{
		{"pow2", 4, loopgroup.RoundRobin()},
		{"modulo", 3, loopgroup.RoundRobin()},
		{"leastconn", 4, loopgroup.LeastConnections()},
	} {
		b.Run(c.name, func(b *testing.B) {
			g, err := loopgroup.New(loopgroup.WithLoops(c.n), loopgroup.WithChooser(c.f), loopgroup.WithEngineOptions(engine.WithBackend(engine.BackendEpoll)))
			if err != nil {
				b.Fatal(err)
			}
			defer g.Close()
			b.ReportAllocs()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					_ = g.Next()
				}
			})
		})
	}
}

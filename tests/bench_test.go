package tests

import (
	"fmt"
	"io"
	"net"
	"sync"
	"testing"

	"github.com/ringloop/ringloop/engine"
	"github.com/ringloop/ringloop/examples/echo"
	"github.com/ringloop/ringloop/internal/testenv"
)

// BenchmarkEcho: clients ping-pong messages through an echo server on one
// loop. ns/op and allocs/op are per echoed message, process-wide (the
// clients' net.Conn reads and writes allocate nothing), so allocs/op shows
// that recv → OnData → Write → send allocates nothing in steady state.
func BenchmarkEcho(b *testing.B) {
	for _, c := range testenv.Combos() {
		if c.Profile != "native" {
			continue
		}
		for _, conns := range []int{1, 50} {
			for _, size := range []int{128, 16 << 10} {
				b.Run(fmt.Sprintf("%s/%s/conns=%d/size=%d", c.Backend, c.Threading, conns, size), func(b *testing.B) {
					c.Need(b)
					benchEcho(b, c, conns, size)
				})
			}
		}
	}
}

func benchEcho(b *testing.B, c testenv.Combo, conns, size int) {
	l, err := engine.New(c.Options()...)
	if err != nil {
		b.Fatal(err)
	}
	defer l.Close()
	ln, err := engine.Listen(l, "tcp", "127.0.0.1:0", echo.Handler{})
	if err != nil {
		b.Fatal(err)
	}
	defer ln.Close()
	clients := make([]net.Conn, conns)
	for i := range clients {
		if clients[i], err = net.Dial("tcp", ln.Addr().String()); err != nil {
			b.Fatal(err)
		}
		defer clients[i].Close()
	}
	// Warm up every connection so buffers reach their steady size.
	run := func(n int) error {
		var wg sync.WaitGroup
		errs := make(chan error, conns)
		for i, cl := range clients {
			per := n / conns
			if i < n%conns {
				per++
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				msg, buf := make([]byte, size), make([]byte, size)
				for range per {
					if _, err := cl.Write(msg); err != nil {
						errs <- err
						return
					}
					if _, err := io.ReadFull(cl, buf); err != nil {
						errs <- err
						return
					}
				}
			}()
		}
		wg.Wait()
		close(errs)
		return <-errs
	}
	if err := run(conns * 20); err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(size))
	b.ReportAllocs()
	b.ResetTimer()
	if err := run(b.N); err != nil {
		b.Fatal(err)
	}
	b.StopTimer()
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "msgs/s")
}

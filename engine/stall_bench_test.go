package engine_test

import (
	"io"
	"net"
	"testing"

	"github.com/ringloop/ringloop/engine"
	"github.com/ringloop/ringloop/internal/testenv"
)

// BenchmarkStallDetector: what the stall detector costs a loop, on
// (the default) and off, for trivial tasks (ns/op per task, the worst case:
// the detector's two stores per piece against a task that does nothing)
// and for echo round trips of 64 bytes over one connection.
//
//	go test -run XXX -bench StallDetector -count 6 -benchtime 300000x ./engine/
func BenchmarkStallDetector(b *testing.B) {
	forEachBackendB(b, func(b *testing.B, c testenv.Combo) {
		for _, on := range []bool{true, false} {
			opts := c.Options()
			name := "on"
			if !on {
				opts, name = append(opts, engine.WithStallDetector(0, nil)), "off"
			}
			b.Run("tasks/"+name, func(b *testing.B) {
				l, err := engine.New(opts...)
				if err != nil {
					b.Fatal(err)
				}
				defer l.Close()
				task := &countTask{}
				b.ResetTimer()
				for range b.N {
					for l.Execute(task) != nil {
					}
				}
				for task.n.Load() < int64(b.N) {
				}
			})
			b.Run("echo/"+name, func(b *testing.B) {
				l, err := engine.New(opts...)
				if err != nil {
					b.Fatal(err)
				}
				defer l.Close()
				ln, err := engine.Listen(l, "tcp", "127.0.0.1:0", echoConn{})
				if err != nil {
					b.Fatal(err)
				}
				defer ln.Close()
				nc, err := net.Dial("tcp", ln.Addr().String())
				if err != nil {
					b.Fatal(err)
				}
				defer nc.Close()
				msg := make([]byte, 64)
				b.ResetTimer()
				for range b.N {
					if _, err := nc.Write(msg); err != nil {
						b.Fatal(err)
					}
					if _, err := io.ReadFull(nc, msg); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	})
}

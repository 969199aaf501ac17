package netconn_test

import (
	"fmt"
	"net"
	"testing"

	"github.com/ringloop/ringloop/engine"
	"github.com/ringloop/ringloop/netconn"
)

// BenchmarkPacketWriteMsgUDP: one goroutine sends through the loop as
// quic-go does, a datagram or a GSO run (10 × 1452 bytes, with its
// UDP_SEGMENT message) per WriteMsgUDP, to a socket nobody reads (the
// kernel drops what overflows it): the loop's side of the send path, the
// user-space copies and the sendmmsg calls, bounds the rate.
func BenchmarkPacketWriteMsgUDP(b *testing.B) {
	for _, be := range []engine.Backend{engine.BackendUring, engine.BackendEpoll} {
		for _, run := range []struct {
			size int
			oob  []byte
		}{{1200, nil}, {14520, segmentOOB(1452)}} {
			b.Run(fmt.Sprintf("%s/%d", be, run.size), func(b *testing.B) {
				loop, err := engine.New(engine.WithBackend(be))
				if err != nil {
					b.Skip(err)
				}
				b.Cleanup(func() { _ = loop.Close() })
				pc, err := netconn.ListenPacket(loop, "udp4", "127.0.0.1:0")
				if err != nil {
					b.Fatal(err)
				}
				defer pc.Close()
				sink, err := net.ListenUDP("udp4", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
				if err != nil {
					b.Fatal(err)
				}
				defer sink.Close()
				to := sink.LocalAddr().(*net.UDPAddr)
				p := make([]byte, run.size)
				b.SetBytes(int64(run.size))
				b.ReportAllocs()
				for b.Loop() {
					if _, _, err := pc.WriteMsgUDP(p, run.oob, to); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

package frame_test

import (
	"encoding/binary"
	"io"
	"net"
	"testing"

	"github.com/ringloop/ringloop/engine"
	"github.com/ringloop/ringloop/frame"
)

// The benchmarks send b.N length-prefixed frames of one size over loopback
// to a loop and read one byte of answer per frame: ns/op and allocs/op are
// per frame, client included. "frame" is frame.Split; "handrolled" is the
// accumulation a handler writes without an inbound buffer: every delivery
// appended to its own buffer, whole frames parsed from it, the rest moved
// to the front.

type ackFrames struct{}

func (ackFrames) OnOpen(c *engine.Conn)             {}
func (ackFrames) OnFrame(c *engine.Conn, f []byte)  { _, _ = c.Write(f[:1]) }
func (ackFrames) OnClose(c *engine.Conn, err error) {}

type handRolled struct{ buf []byte } // one connection per benchmark

func (h *handRolled) OnOpen(c *engine.Conn) {}
func (h *handRolled) OnData(c *engine.Conn, b []byte) {
	h.buf = append(h.buf, b...)
	p := h.buf
	for len(p) >= 4 {
		n := int(binary.BigEndian.Uint32(p))
		if len(p) < 4+n {
			break
		}
		_, _ = c.Write(p[4:5])
		p = p[4+n:]
	}
	h.buf = h.buf[:copy(h.buf, p)]
}
func (h *handRolled) OnClose(c *engine.Conn, err error) {}

func BenchmarkFrames(b *testing.B) {
	for _, size := range []int{128, 100 << 10} {
		for _, v := range []struct {
			name string
			h    func() engine.Handler
		}{
			{"frame", func() engine.Handler {
				return frame.Split(frame.LengthPrefixed(4, binary.BigEndian, 1<<20), ackFrames{})
			}},
			{"handrolled", func() engine.Handler { return &handRolled{} }},
		} {
			b.Run(v.name+"/"+sizeName(size), func(b *testing.B) { benchFrames(b, size, v.h()) })
		}
	}
}

func sizeName(n int) string {
	if n >= 1<<10 {
		return itoa(n>>10) + "KiB"
	}
	return itoa(n) + "B"
}

func itoa(n int) string {
	var d []byte
	for ; n > 0 || len(d) == 0; n /= 10 {
		d = append([]byte{byte('0' + n%10)}, d...)
	}
	return string(d)
}

func benchFrames(b *testing.B, size int, h engine.Handler) {
	l, err := engine.New()
	if err != nil {
		b.Fatal(err)
	}
	defer l.Close()
	ln, err := engine.Listen(l, "tcp", "127.0.0.1:0", h)
	if err != nil {
		b.Fatal(err)
	}
	defer ln.Close()
	peer, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		b.Fatal(err)
	}
	defer peer.Close()
	f := make([]byte, 4+size)
	binary.BigEndian.PutUint32(f, uint32(size))
	// Frames go out in writes of about 64 KiB, so small ones arrive many
	// to a read and large ones span reads.
	per := max(1, (64<<10)/len(f))
	batch := make([]byte, 0, per*len(f))
	for range per {
		batch = append(batch, f...)
	}
	acks := make([]byte, per)
	b.SetBytes(int64(size))
	b.ReportAllocs()
	b.ResetTimer()
	for sent := 0; sent < b.N; sent += per {
		n := min(per, b.N-sent)
		if _, err := peer.Write(batch[:n*len(f)]); err != nil {
			b.Fatal(err)
		}
		if _, err := io.ReadFull(peer, acks[:n]); err != nil {
			b.Fatal(err)
		}
	}
}

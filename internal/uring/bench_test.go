//go:build linux && cgo && !ringloop_nouring

package uring

import (
	"fmt"
	"runtime"
	"testing"

	"github.com/ringloop/ringloop/internal/driver"
	"golang.org/x/sys/unix"
)

// benchProfiles are the kernels the benchmarks compare: the newest and the
// oldest path.
var benchProfiles = []driver.Profile{driver.Native, driver.Kernel510}

func benchDriver(b *testing.B, p driver.Profile) *Driver {
	runtime.LockOSThread()
	b.Cleanup(runtime.UnlockOSThread)
	d, err := New(driver.Config{Profile: p})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { d.Close() })
	if err := d.Enable(); err != nil {
		b.Fatal(err)
	}
	return d
}

// reportEnters adds io_uring_enter calls per op to the benchmark's output.
func reportEnters(b *testing.B, d *Driver, before Stats) {
	s := d.Stats()
	b.ReportMetric(float64(s.Enters-before.Enters)/float64(b.N), "enters/op")
	b.ReportMetric(float64(s.Runs-before.Runs)/float64(b.N), "cgocalls/op")
}

// BenchmarkNop: the driver's fixed cost per op — descriptor, SQE, CQE,
// dispatch — with batch ops per Wait.
func BenchmarkNop(b *testing.B) {
	for _, p := range benchProfiles {
		for _, batch := range []int{1, 32} {
			b.Run(fmt.Sprintf("%s/batch=%d", p, batch), func(b *testing.B) {
				d := benchDriver(b, p)
				done := 0
				fn := func(*driver.Completion) { done++ }
				var tag driver.Tag
				b.ReportAllocs()
				before := d.Stats()
				b.ResetTimer()
				for i := 0; i < b.N; i += batch {
					k := min(batch, b.N-i)
					for j := 0; j < k; j++ {
						tag++
						d.Nop(tag)
					}
					for done = 0; done < k; {
						if _, err := d.Wait(driver.WaitForever, fn); err != nil {
							b.Fatal(err)
						}
					}
				}
				b.StopTimer()
				reportEnters(b, d, before)
			})
		}
	}
}

// tcpPair returns two connected non-blocking loopback TCP sockets.
func tcpPair(b *testing.B) (int, int) {
	l, err := unix.Socket(unix.AF_INET, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		b.Fatal(err)
	}
	defer unix.Close(l)
	if err := unix.Bind(l, &unix.SockaddrInet4{Addr: [4]byte{127, 0, 0, 1}}); err != nil {
		b.Fatal(err)
	}
	if err := unix.Listen(l, 1); err != nil {
		b.Fatal(err)
	}
	sa, _ := unix.Getsockname(l)
	c, err := unix.Socket(unix.AF_INET, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		b.Fatal(err)
	}
	if err := unix.Connect(c, sa); err != nil {
		b.Fatal(err)
	}
	s, _, err := unix.Accept4(l, unix.SOCK_NONBLOCK|unix.SOCK_CLOEXEC)
	if err != nil {
		b.Fatal(err)
	}
	unix.SetNonblock(c, true)
	unix.SetsockoptInt(c, unix.IPPROTO_TCP, unix.TCP_NODELAY, 1)
	b.Cleanup(func() { unix.Close(c); unix.Close(s) })
	return c, s
}

// BenchmarkSendRecv: one op is a 64-byte send on a loopback TCP connection
// plus its receive on the other end (multishot or re-armed), batch sends
// per Wait.
func BenchmarkSendRecv(b *testing.B) {
	for _, p := range benchProfiles {
		for _, batch := range []int{1, 32} {
			b.Run(fmt.Sprintf("%s/batch=%d", p, batch), func(b *testing.B) {
				d := benchDriver(b, p)
				c, s := tcpPair(b)
				msg := make([]byte, 64)
				var sent, recvd int
				fn := func(cq *driver.Completion) {
					if cq.Tag == 1 {
						recvd += len(cq.Data)
						return
					}
					if cq.Res != int32(len(msg)) {
						b.Fatalf("send: %d", cq.Res)
					}
					sent++
				}
				d.Recv(s, 1)
				tag := driver.Tag(1)
				b.ReportAllocs()
				b.SetBytes(int64(len(msg)))
				before := d.Stats()
				b.ResetTimer()
				for i := 0; i < b.N; i += batch {
					k := min(batch, b.N-i)
					for j := 0; j < k; j++ {
						tag++
						d.Send(c, tag, msg)
					}
					for sent, recvd = 0, 0; sent < k || recvd < k*len(msg); {
						if _, err := d.Wait(driver.WaitForever, fn); err != nil {
							b.Fatal(err)
						}
					}
				}
				b.StopTimer()
				reportEnters(b, d, before)
			})
		}
	}
}

// BenchmarkSyscallSendRecv is the baseline without a ring: write(2) and
// read(2) of the same 64 bytes on a loopback TCP connection, two system
// calls per op.
func BenchmarkSyscallSendRecv(b *testing.B) {
	c, s := tcpPair(b)
	msg := make([]byte, 64)
	buf := make([]byte, 4096)
	b.ReportAllocs()
	b.SetBytes(int64(len(msg)))
	for i := 0; i < b.N; i++ {
		if _, err := unix.Write(c, msg); err != nil {
			b.Fatal(err)
		}
		for got := 0; got < len(msg); {
			n, err := unix.Read(s, buf)
			if err == unix.EAGAIN {
				continue
			}
			if err != nil {
				b.Fatal(err)
			}
			got += n
		}
	}
}

// BenchmarkPinUnpin is what Send pays to keep its buffer in place for the
// kernel (a runtime.Pinner reused per op slot): the figure a per-loop send
// slab outside the Go heap would save, to weigh against a copy into it.
func BenchmarkPinUnpin(b *testing.B) {
	var p runtime.Pinner
	buf := make([]byte, 4096)
	b.ReportAllocs()
	for b.Loop() {
		p.Pin(&buf[0])
		p.Unpin()
	}
}

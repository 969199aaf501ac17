package packet

import (
	"fmt"
	"net/netip"
	"strings"
	"testing"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/ringloop/ringloop/engine"
)

// benchEcho answers each datagram with itself.
type benchEcho struct{}

func (benchEcho) OnPacket(pc *Conn, b []byte, from netip.AddrPort) { _ = pc.WriteTo(b, from) }
func (benchEcho) OnPacketError(*Conn, error)                       {}
func (benchEcho) OnPacketClose(*Conn, error)                       {}

// BenchmarkPacketEchoIO compares the datagram paths on one io_uring loop
// (locked, native profile): multishot RECVMSG and linked SENDMSG (ring),
// RECVMSG and sendmmsg (ringrecv), recvmmsg on readiness and sendmmsg
// (mmsg), each with the echoes of a batch coalesced (UDP GSO: they go to
// one peer) and without (nogso). A client socket sends a batch of 64-byte
// datagrams with one sendmmsg and reads the echoes back with recvmmsg;
// ns/op and allocs/op
// are per datagram, the whole process counted (the loop's side allocates,
// the client's does not); loop-ns/dgram is the loop thread's CPU time
// (user and system) per datagram.
func BenchmarkPacketEchoIO(b *testing.B) {
	for _, path := range []string{"ring", "ringrecv", "mmsg", "ringrecv-nogso", "mmsg-nogso"} {
		for _, batch := range []int{1, 4, 32, 64} {
			b.Run(fmt.Sprintf("%s/batch=%d", path, batch), func(b *testing.B) {
				old := packetGSO
				packetGSO = !strings.HasSuffix(path, "-nogso")
				defer func() { packetGSO = old }()
				base := strings.TrimSuffix(path, "-nogso")
				benchPacketEcho(b, base != "mmsg", base == "ring", batch)
			})
		}
	}
}

func benchPacketEcho(b *testing.B, ring, ringSend bool, batch int) {
	old, oldSend := packetRing, packetRingSend
	packetRing, packetRingSend = ring, ringSend
	defer func() { packetRing, packetRingSend = old, oldSend }()
	l, err := engine.New(engine.WithBackend(engine.BackendUring), engine.WithThreading(engine.ThreadingLocked))
	if err != nil {
		b.Skip("io_uring unavailable: ", err)
	}
	defer l.Close()
	pc, err := Listen(l, "udp4", "127.0.0.1:0", benchEcho{},
		&Options{Batch: batch, RecvBuffer: 1 << 20, SendBuffer: 1 << 20})
	if err != nil {
		b.Fatal(err)
	}
	defer pc.Close()
	got, err := engine.Submit(l, func() (bool, error) { _, ok := pc.io.(ringIO); return ok, nil }).Await(b.Context())
	if err != nil || got != ring {
		b.Skipf("receive path ring=%v, want %v (%v): the kernel lacks multishot RECVMSG", got, ring, err)
	}
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		b.Fatal(err)
	}
	defer unix.Close(fd)
	_ = unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_RCVBUF, 1<<20)
	_ = unix.SetsockoptTimeval(fd, unix.SOL_SOCKET, unix.SO_RCVTIMEO, &unix.Timeval{Sec: 10})
	port := pc.LocalAddr().(interface{ AddrPort() netip.AddrPort }).AddrPort().Port()
	if err := unix.Connect(fd, &unix.SockaddrInet4{Port: int(port), Addr: [4]byte{127, 0, 0, 1}}); err != nil {
		b.Fatal(err)
	}
	out, in := newPacketArena(batch, 64), newPacketArena(batch, 2048)
	for i := range out.hdrs {
		out.hdrs[i].Hdr.Name, out.hdrs[i].Hdr.Namelen = nil, 0
		out.iovs[i].SetLen(64)
	}
	round := func() {
		for sent := 0; sent < batch; {
			n, _, e := unix.Syscall6(unix.SYS_SENDMMSG, uintptr(fd), uintptr(unsafe.Pointer(&out.hdrs[sent])), uintptr(batch-sent), 0, 0, 0)
			if e == unix.EINTR {
				continue
			}
			if e != 0 {
				b.Fatal("sendmmsg: ", e)
			}
			sent += int(n)
		}
		for recvd := 0; recvd < batch; {
			in.prepare(packetConfig{batch: batch, maxSize: 2048})
			n, _, e := unix.Syscall6(unix.SYS_RECVMMSG, uintptr(fd), uintptr(unsafe.Pointer(&in.hdrs[0])), uintptr(batch-recvd),
				unix.MSG_WAITFORONE, 0, 0)
			if e == unix.EINTR {
				continue
			}
			if e != 0 {
				b.Fatalf("recvmmsg after %d of %d echoes: %v", recvd, batch, e)
			}
			recvd += int(n)
		}
	}
	for range 50 {
		round()
	}
	b.ReportAllocs()
	before := loopCPU(b, l)
	b.ResetTimer()
	for i := 0; i < b.N; i += batch {
		round()
	}
	b.StopTimer()
	b.ReportMetric(float64(loopCPU(b, l)-before)/float64(b.N), "loop-ns/dgram")
}

// loopCPU is the CPU time the locked loop's thread has used, in ns.
func loopCPU(b *testing.B, l *engine.Loop) int64 {
	ns, err := engine.Submit(l, func() (int64, error) {
		var ru unix.Rusage
		if err := unix.Getrusage(unix.RUSAGE_THREAD, &ru); err != nil {
			return 0, err
		}
		return ru.Utime.Nano() + ru.Stime.Nano(), nil
	}).Await(b.Context())
	if err != nil {
		b.Fatal(err)
	}
	return ns
}

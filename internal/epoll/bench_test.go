package epoll_test

import (
	"unsafe"

	"testing"

	"golang.org/x/sys/unix"

	"github.com/ringloop/ringloop/internal/driver"
	"github.com/ringloop/ringloop/internal/drivertest"
	"github.com/ringloop/ringloop/internal/epoll"
)

func newBenchDriver(tb testing.TB, cfg driver.Config) driver.Driver {
	d, err := epoll.New(cfg)
	if err != nil {
		tb.Fatal(err)
	}
	return d
}

// BenchmarkSendRecv measures one 64-byte send/receive pair per op through
// the epoll driver, one connection per iteration or 32.
func BenchmarkSendRecv(b *testing.B) {
	b.Run("batch=1", func(b *testing.B) { drivertest.BenchSendRecv(b, newBenchDriver, 1) })
	b.Run("batch=32", func(b *testing.B) { drivertest.BenchSendRecv(b, newBenchDriver, 32) })
}

// BenchmarkRawFloor is the floor BenchmarkSendRecv/batch=1 is measured
// against: the same three system calls (sendto, epoll_pwait, recvfrom) on
// a loopback pair, issued by hand with no driver.
func BenchmarkRawFloor(b *testing.B) {
	lfd, sa := drivertest.Listen(b, 16)
	defer unix.Close(lfd)
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		b.Fatal(err)
	}
	defer unix.Close(fd)
	if err := unix.Connect(fd, sa); err != nil {
		b.Fatal(err)
	}
	nfd, _, err := unix.Accept4(lfd, unix.SOCK_NONBLOCK|unix.SOCK_CLOEXEC)
	if err != nil {
		b.Fatal(err)
	}
	defer unix.Close(nfd)
	unix.SetsockoptInt(fd, unix.IPPROTO_TCP, unix.TCP_NODELAY, 1)
	ep, err := unix.EpollCreate1(unix.EPOLL_CLOEXEC)
	if err != nil {
		b.Fatal(err)
	}
	defer unix.Close(ep)
	unix.EpollCtl(ep, unix.EPOLL_CTL_ADD, nfd, &unix.EpollEvent{Events: unix.EPOLLIN | unix.EPOLLET, Fd: int32(nfd)})
	p := make([]byte, 64)
	buf := make([]byte, 16<<10)
	ev := make([]unix.EpollEvent, 16)
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		unix.RawSyscall6(unix.SYS_SENDTO, uintptr(fd), uintptr(unsafe.Pointer(&p[0])), 64, unix.MSG_DONTWAIT|unix.MSG_NOSIGNAL, 0, 0)
		unix.EpollWait(ep, ev, -1)
		unix.RawSyscall6(unix.SYS_RECVFROM, uintptr(nfd), uintptr(unsafe.Pointer(&buf[0])), uintptr(len(buf)), unix.MSG_DONTWAIT, 0, 0)
	}
}

// BenchmarkWaitIdle: one Wait(0) with 256 armed, idle receives (one
// epoll_pwait, nothing to hand over).
func BenchmarkWaitIdle(b *testing.B) {
	d, err := epoll.New(driver.Config{})
	if err != nil {
		b.Fatal(err)
	}
	defer d.Close()
	for i := 0; i < 128; i++ {
		var sv [2]int
		if sv, err = unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_NONBLOCK|unix.SOCK_CLOEXEC, 0); err != nil {
			b.Fatal(err)
		}
		defer unix.Close(sv[0])
		defer unix.Close(sv[1])
		d.Recv(sv[0], driver.Tag(2*i+1))
		d.Recv(sv[1], driver.Tag(2*i+2))
	}
	fn := func(*driver.Completion) { b.Fatal("completion") }
	d.Wait(0, fn)
	d.Wait(0, fn)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		d.Wait(0, fn)
	}
}

// BenchmarkWake: Wake then a Wait(-1) that it ends, on one goroutine (an
// eventfd write and an epoll_pwait).
func BenchmarkWake(b *testing.B) {
	d, err := epoll.New(driver.Config{})
	if err != nil {
		b.Fatal(err)
	}
	defer d.Close()
	fn := func(*driver.Completion) {}
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		d.Wake()
		d.Wait(driver.WaitForever, fn)
	}
}

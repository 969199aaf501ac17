package drivertest

import (
	"testing"

	"github.com/ringloop/ringloop/internal/driver"
	"golang.org/x/sys/unix"
)

// BenchSendRecv measures ns per send/receive pair: batch loopback
// connections each send a 64-byte message that the same driver receives on
// the other end, all in one loop iteration (batch 1 shows per-op latency,
// batch 32 the amortised cost). It reports allocations; a driver should
// show none.
func BenchSendRecv(b *testing.B, newDriver func(tb testing.TB, cfg driver.Config) driver.Driver, batch int) {
	if batch < 1 {
		batch = 1
	}
	d := newDriver(b, driver.Config{Profile: driver.Native})
	defer d.Close()
	lfd, sa := Listen(b, batch+16)
	defer unix.Close(lfd)
	senders := make([]int, batch)
	receivers := make([]int, batch)
	for i := range senders {
		fd, err := unix.Socket(unix.AF_INET, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
		if err != nil {
			b.Fatal(err)
		}
		if err := unix.Connect(fd, sa); err != nil {
			b.Fatal(err)
		}
		nfd, _, err := unix.Accept4(lfd, unix.SOCK_NONBLOCK|unix.SOCK_CLOEXEC)
		if err != nil {
			b.Fatal(err)
		}
		unix.SetNonblock(fd, true)
		unix.SetsockoptInt(fd, unix.IPPROTO_TCP, unix.TCP_NODELAY, 1)
		senders[i], receivers[i] = fd, nfd
	}
	defer func() {
		for i := range senders {
			unix.Close(senders[i])
			unix.Close(receivers[i])
		}
	}()
	const msg = 64
	const recvKind driver.Tag = 1 << 32
	p := make([]byte, msg)
	for i, fd := range receivers {
		d.Recv(fd, recvKind|driver.Tag(i))
	}
	sent, got := 0, 0
	var failed error
	fn := func(c *driver.Completion) {
		if c.Res < 0 {
			failed = c.Err()
			return
		}
		if c.Tag&recvKind != 0 {
			got += int(c.Res)
		} else {
			sent++
		}
	}
	round := func() {
		sent, got = 0, 0
		for i, fd := range senders {
			d.Send(fd, driver.Tag(i), p)
		}
		for (sent < batch || got < batch*msg) && failed == nil {
			if _, err := d.Wait(driver.WaitForever, fn); err != nil {
				b.Fatal(err)
			}
		}
		if failed != nil {
			b.Fatal(failed)
		}
	}
	round() // warm up: registrations, buffers
	b.ReportAllocs()
	b.ResetTimer()
	for done := 0; done < b.N; done += batch {
		round()
	}
}

package epoll_test

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ringloop/ringloop/internal/driver"
	"github.com/ringloop/ringloop/internal/drivertest"
	"github.com/ringloop/ringloop/internal/epoll"
	"golang.org/x/sys/unix"
)

func mustNew(t testing.TB, p driver.Profile) *epoll.Driver {
	t.Helper()
	d, err := epoll.New(driver.Config{Profile: p})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	return d
}

// kernelHasPwait2 asks the kernel directly.
func kernelHasPwait2(t *testing.T) bool {
	ep, err := unix.EpollCreate1(unix.EPOLL_CLOEXEC)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(ep)
	var ev [1]unix.EpollEvent
	var ts unix.Timespec
	_, _, e := unix.Syscall6(unix.SYS_EPOLL_PWAIT2, uintptr(ep), uintptr(unsafePointer(&ev[0])), 1, uintptr(unsafePointer(&ts)), 0, 0)
	return e == 0
}

// TestPwait2ByProfile: epoll_pwait2 is used where the kernel has it and the
// profile allows it (5.11+), and the reasons say which wait call is in use.
func TestPwait2ByProfile(t *testing.T) {
	has := kernelHasPwait2(t)
	for _, p := range driver.Profiles {
		f := mustNew(t, p).Features()
		want := has && p.AtLeast(5, 11)
		if f.EpollPwait2 != want {
			t.Fatalf("profile %s: EpollPwait2 %v, want %v", p, f.EpollPwait2, want)
		}
		wantReason := "epoll_wait, timeouts rounded up"
		if want {
			wantReason = "epoll_pwait2"
		}
		if !strings.Contains(strings.Join(f.Reasons, "\n"), wantReason) {
			t.Fatalf("profile %s: reasons %q lack %q", p, f.Reasons, wantReason)
		}
	}
}

// TestMillisecondRoundingNeverEarly: with epoll_pwait2 masked off (profile
// 5.10), sub-millisecond and fractional timeouts round up: Wait never
// returns before its timeout.
func TestMillisecondRoundingNeverEarly(t *testing.T) {
	d := mustNew(t, driver.Kernel510)
	if d.Features().EpollPwait2 {
		t.Fatal("profile 5.10 uses epoll_pwait2")
	}
	requireNeverEarly(t, d)
}

// requireNeverEarly checks that sub-millisecond and fractional timeouts
// never end a Wait early.
func requireNeverEarly(t *testing.T, d *epoll.Driver) {
	t.Helper()
	fn := func(*driver.Completion) { t.Error("unexpected completion") }
	for _, to := range []time.Duration{time.Microsecond, 400 * time.Microsecond, 999 * time.Microsecond,
		time.Millisecond + time.Microsecond, 1700 * time.Microsecond, 3*time.Millisecond - 1} {
		for i := 0; i < 5; i++ {
			start := time.Now()
			n, err := d.Wait(to, fn)
			if el := time.Since(start); err != nil || n != 0 || el < to {
				t.Fatalf("Wait(%v): %d, %v after %v", to, n, err, el)
			}
		}
	}
}

// TestPwait2SubMillisecond: with epoll_pwait2, a 200 µs Wait hands the
// kernel the time left as it is, in nanoseconds (at most 200 µs, not rounded
// up to a millisecond), and never returns early; on a kernel without it
// (5.10) the native driver rounds up instead, never returning early.
func TestPwait2SubMillisecond(t *testing.T) {
	d := mustNew(t, driver.Native)
	if !d.Features().EpollPwait2 {
		if kernelHasPwait2(t) {
			t.Fatal("native profile does not use the kernel's epoll_pwait2")
		}
		requireNeverEarly(t, d)
		return
	}
	const to = 200 * time.Microsecond
	for i := 0; ; i++ {
		epoll.ResetPwait2Timeout(d)
		start := time.Now()
		n, err := d.Wait(to, func(*driver.Completion) {})
		if el := time.Since(start); err != nil || n != 0 || el < to {
			t.Fatalf("Wait(%v): %d, %v after %v", to, n, err, el)
		}
		got := epoll.Pwait2Timeout(d)
		if got > to {
			t.Fatalf("Wait(%v) asked epoll_pwait2 for %v: the timeout was rounded up", to, got)
		}
		if got > 0 {
			return
		}
		// Zero: the deadline passed before the first epoll_pwait2 (the
		// goroutine was descheduled for 200 µs), so no call had a timeout.
		if i == 1000 {
			t.Fatalf("Wait(%v) never called epoll_pwait2 with a timeout in %d tries", to, i)
		}
	}
}

// TestFairnessBudget: with four budgets' worth of bytes queued on one socket
// and one byte on another, the first Wait reads the big one at most
// ReadBudget times and still serves the small one; later Waits with no
// timeout drain the rest without any new edge. Reads are 1 KiB, so the
// bytes fit in the receive buffer a default net.core.rmem_max allows.
func TestFairnessBudget(t *testing.T) {
	const readSize = 1 << 10
	d, err := epoll.New(driver.Config{Profile: driver.Native, BufferSize: readSize})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	big, bigPeer := drivertest.TCPPair(t)
	small, smallPeer := drivertest.TCPPair(t)
	defer unix.Close(big)
	defer unix.Close(small)
	const total = 4 * epoll.ReadBudget * readSize
	if _, err := bigPeer.Write(make([]byte, total)); err != nil {
		t.Fatal(err)
	}
	smallPeer.Write([]byte{1})
	deadline := time.Now().Add(10 * time.Second)
	for {
		n, _ := unix.IoctlGetInt(big, unix.SIOCINQ)
		m, _ := unix.IoctlGetInt(small, unix.SIOCINQ)
		if n == total && m == 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("queued %d and %d bytes", n, m)
		}
		time.Sleep(time.Millisecond)
	}
	var bigReads, bigBytes, smallBytes int
	fn := func(c *driver.Completion) {
		switch {
		case c.Res <= 0 || !c.More:
			t.Errorf("unexpected completion %+v", *c)
		case c.Tag == 1:
			bigReads++
			bigBytes += int(c.Res)
		case c.Tag == 2:
			smallBytes += int(c.Res)
		}
	}
	d.Recv(big, 1)
	d.Recv(small, 2)
	if _, err := d.Wait(time.Second, fn); err != nil {
		t.Fatal(err)
	}
	if bigReads > epoll.ReadBudget || smallBytes != 1 {
		t.Fatalf("first Wait: %d reads of the big socket (budget %d), %d bytes of the small one",
			bigReads, epoll.ReadBudget, smallBytes)
	}
	if bigBytes >= total {
		t.Fatalf("first Wait drained all %d bytes despite the budget", total)
	}
	for waits := 0; bigBytes < total; waits++ {
		n, err := d.Wait(0, fn)
		if err != nil || n == 0 {
			t.Fatalf("Wait(0) %d: %d, %v with %d bytes left: the budget-limited fd was not resumed",
				waits, n, err, total-bigBytes)
		}
		if n > epoll.ReadBudget {
			t.Fatalf("Wait(0) handed over %d reads of one fd", n)
		}
	}
}

// TestEventsWithoutCompletionsDoNotEndWait: readiness that no op wants (data
// on a socket polled only for POLLPRI) does not end a Wait early. A byte is
// queued before the Wait, so the socket's EPOLLIN edge is pending when the
// Wait starts, however slow the machine; more bytes keep coming meanwhile.
func TestEventsWithoutCompletionsDoNotEndWait(t *testing.T) {
	d := mustNew(t, driver.Native)
	fd, peer := drivertest.TCPPair(t)
	defer unix.Close(fd)
	d.Poll(fd, 1, unix.POLLPRI)
	d.Wait(0, func(c *driver.Completion) { t.Errorf("completion %+v", *c) })
	if _, err := peer.Write([]byte("x")); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(time.Millisecond) {
		if n, _ := unix.IoctlGetInt(fd, unix.SIOCINQ); n == 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the byte never arrived")
		}
	}
	stop, stopped := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(stopped)
		for {
			select {
			case <-stop:
				return
			case <-time.After(time.Millisecond):
				peer.Write([]byte("x"))
			}
		}
	}()
	const to = 40 * time.Millisecond
	start := time.Now()
	n, err := d.Wait(to, func(c *driver.Completion) { t.Errorf("completion %+v", *c) })
	el := time.Since(start)
	close(stop)
	<-stopped
	if err != nil || n != 0 || el < to {
		t.Fatalf("Wait(%v): %d, %v after %v", to, n, err, el)
	}
}

// TestSecondOpOfAKindIsBusy: a second receive (accept, poll, connect) on one
// fd ends at once with -EBUSY (-EALREADY for connect); the first stays.
func TestSecondOpOfAKindIsBusy(t *testing.T) {
	d := mustNew(t, driver.Native)
	fd, _ := drivertest.TCPPair(t)
	defer unix.Close(fd)
	d.Recv(fd, 1)
	d.Recv(fd, 2)
	d.Poll(fd, 3, unix.POLLIN)
	d.Poll(fd, 4, unix.POLLIN)
	got := map[driver.Tag]int32{}
	d.Wait(0, func(c *driver.Completion) { got[c.Tag] = c.Res })
	if got[2] != -int32(unix.EBUSY) || got[4] != -int32(unix.EBUSY) || len(got) != 2 {
		t.Fatalf("completions %v, want tags 2 and 4 with -EBUSY", got)
	}
}

// TestCloseFDCancelsArmedOps: CloseFD without a Cancel first ends the fd's
// ops with -ECANCELED before reporting close's result.
func TestCloseFDCancelsArmedOps(t *testing.T) {
	d := mustNew(t, driver.Native)
	fd, _ := drivertest.TCPPair(t)
	d.Recv(fd, 1)
	d.Poll(fd, 2, unix.POLLIN)
	d.Wait(0, func(c *driver.Completion) { t.Errorf("completion %+v", *c) })
	d.CloseFD(fd, 3)
	var order []driver.Tag
	res := map[driver.Tag]int32{}
	d.Wait(time.Second, func(c *driver.Completion) { order = append(order, c.Tag); res[c.Tag] = c.Res })
	if len(order) != 3 || order[2] != 3 || res[1] != -int32(unix.ECANCELED) || res[2] != -int32(unix.ECANCELED) || res[3] != 0 {
		t.Fatalf("order %v, results %v", order, res)
	}
}

// TestCloseRunsAPreparedCloseFD: a CloseFD no Wait has performed yet is
// performed by Close (the caller gave the fd up: dropping it would leak it).
func TestCloseRunsAPreparedCloseFD(t *testing.T) {
	d := mustNew(t, driver.Native)
	fd, _ := drivertest.TCPPair(t)
	d.Recv(fd, 1)
	d.CloseFD(fd, 2)
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := unix.FcntlInt(uintptr(fd), unix.F_GETFD, 0); err != unix.EBADF {
		t.Fatalf("fd %d after Close: F_GETFD = %v, want EBADF (closed)", fd, err)
	}
}

// TestWaitBatchLimit: one Wait hands over at most DefaultWaitBatch
// completions; the rest follow in the next.
func TestWaitBatchLimit(t *testing.T) {
	d := mustNew(t, driver.Native)
	const n = driver.DefaultWaitBatch + 100
	fds := make([]int, n)
	for i := range fds {
		fd, err := unix.Eventfd(0, unix.EFD_NONBLOCK|unix.EFD_CLOEXEC)
		if err != nil {
			t.Fatal(err)
		}
		fds[i] = fd
		defer unix.Close(fd)
		d.Poll(fd, driver.Tag(i+1), unix.POLLOUT)
	}
	seen := map[driver.Tag]bool{}
	fn := func(c *driver.Completion) { seen[c.Tag] = true }
	first, err := d.Wait(time.Second, fn)
	if err != nil || first > driver.DefaultWaitBatch {
		t.Fatalf("first Wait: %d completions, %v", first, err)
	}
	for deadline := time.Now().Add(5 * time.Second); len(seen) < n && time.Now().Before(deadline); {
		d.Wait(10*time.Millisecond, fn)
	}
	if len(seen) != n {
		t.Fatalf("%d of %d polls reported", len(seen), n)
	}
	for i, fd := range fds {
		d.Cancel(fd, driver.Tag(i+1))
	}
	d.Wait(0, func(*driver.Completion) {})
}

// TestSteadyStateAllocs: a send/receive round trip allocates nothing once
// warm.
func TestSteadyStateAllocs(t *testing.T) {
	d := mustNew(t, driver.Native)
	a, _ := drivertest.TCPPair(t)
	defer unix.Close(a)
	b, peer := drivertest.TCPPair(t)
	defer unix.Close(b)
	go func() { // echo
		buf := make([]byte, 64)
		for {
			n, err := peer.Read(buf)
			if err != nil {
				return
			}
			peer.Write(buf[:n])
		}
	}()
	p := make([]byte, 64)
	d.Recv(b, 1)
	var sent, got int
	fn := func(c *driver.Completion) {
		if c.Tag == 1 {
			got += int(c.Res)
		} else {
			sent++
		}
	}
	round := func() {
		sent, got = 0, 0
		d.Send(b, 2, p)
		d.Send(a, 3, p[:0])
		for sent < 2 || got < len(p) {
			if _, err := d.Wait(driver.WaitForever, fn); err != nil {
				t.Fatal(err)
			}
		}
	}
	round()
	if allocs := testing.AllocsPerRun(200, round); allocs != 0 {
		t.Fatalf("%v allocations per round trip", allocs)
	}
}

// TestWakeRacesClose: Wake from many goroutines while the driver closes
// neither panics nor writes to a closed fd; late Wakes get ErrClosed.
func TestWakeRacesClose(t *testing.T) {
	before := drivertest.CountFDs(t)
	for round := 0; round < 20; round++ {
		d, err := epoll.New(driver.Config{})
		if err != nil {
			t.Fatal(err)
		}
		var wg sync.WaitGroup
		for i := 0; i < 8; i++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for j := 0; j < 50; j++ {
					if err := d.Wake(); err != nil && !errors.Is(err, driver.ErrClosed) {
						t.Errorf("Wake: %v", err)
					}
				}
			}()
		}
		d.Wait(0, func(*driver.Completion) {})
		if err := d.Close(); err != nil {
			t.Fatal(err)
		}
		wg.Wait()
		if err := d.Close(); !errors.Is(err, driver.ErrClosed) {
			t.Fatalf("second Close: %v", err)
		}
	}
	if after := drivertest.CountFDs(t); after != before {
		t.Fatalf("fds: %d before, %d after", before, after)
	}
}

// TestWakeCounter: the eventfd is never read; many wakes still each end a
// blocked Wait.
func TestWakeCounter(t *testing.T) {
	d := mustNew(t, driver.Native)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := 0; i < 100; i++ {
			if err := d.Wake(); err != nil {
				t.Error(err)
				return
			}
			// With no ops and no timeout, only the wake ends the Wait.
			if _, err := d.Wait(driver.WaitForever, func(*driver.Completion) {}); err != nil {
				t.Error(err)
				return
			}
		}
	}()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		t.Error("a wake was lost: Wait(WaitForever) still blocked after 30 s")
		for { // release it
			_ = d.Wake()
			select {
			case <-done:
				return
			case <-time.After(time.Millisecond):
			}
		}
	}
}

// TestReusedNumberAfterDirectClose: an fd whose ops ended may be closed by
// its owner at once, inside the callback, before the driver leaves the
// epoll set; a new socket that gets the same number works with new ops.
func TestReusedNumberAfterDirectClose(t *testing.T) {
	d := mustNew(t, driver.Native)
	sv, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_NONBLOCK|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	d.Recv(sv[0], 1)
	d.Wait(0, func(c *driver.Completion) { t.Errorf("completion %+v", *c) })
	unix.Close(sv[1]) // EOF for sv[0]
	var nv [2]int
	reused := false
	for deadline := time.Now().Add(5 * time.Second); !reused && time.Now().Before(deadline); {
		d.Wait(10*time.Millisecond, func(c *driver.Completion) {
			if c.Tag != 1 || c.Res != 0 || c.More {
				t.Fatalf("completion %+v, want EOF", *c)
			}
			unix.Close(sv[0])
			if nv, err = unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_NONBLOCK|unix.SOCK_CLOEXEC, 0); err != nil {
				t.Fatal(err)
			}
			reused = true
			d.Recv(nv[0], 2)
		})
	}
	if !reused {
		t.Fatal("no EOF")
	}
	defer unix.Close(nv[0])
	defer unix.Close(nv[1])
	if nv[0] != sv[0] {
		t.Fatalf("fd number not reused (%d, %d): the test proves nothing", sv[0], nv[0])
	}
	// Let stale readiness run out, so the data needs an edge from the new
	// socket's registration.
	for i := 0; i < 3; i++ {
		d.Wait(2*time.Millisecond, func(c *driver.Completion) { t.Errorf("completion %+v", *c) })
	}
	unix.Write(nv[1], []byte("new"))
	var got []byte
	for deadline := time.Now().Add(5 * time.Second); len(got) < 3 && time.Now().Before(deadline); {
		d.Wait(10*time.Millisecond, func(c *driver.Completion) {
			if c.Tag == 2 && c.More {
				got = append(got, c.Data...)
			}
		})
	}
	if string(got) != "new" {
		t.Fatalf("got %q on the reused fd number", got)
	}
}

// TestPollPRI: a poll for POLLPRI reports urgent (out-of-band) TCP data.
func TestPollPRI(t *testing.T) {
	d := mustNew(t, driver.Native)
	fd, peer := drivertest.TCPPair(t)
	defer unix.Close(fd)
	d.Poll(fd, 1, unix.POLLPRI)
	d.Wait(0, func(c *driver.Completion) { t.Errorf("completion %+v", *c) })
	raw, err := peer.SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	raw.Write(func(pfd uintptr) bool {
		err = unix.Sendto(int(pfd), []byte("!"), unix.MSG_OOB, nil)
		return true
	})
	if err != nil {
		t.Fatal(err)
	}
	var mask int32
	for deadline := time.Now().Add(5 * time.Second); mask == 0 && time.Now().Before(deadline); {
		d.Wait(10*time.Millisecond, func(c *driver.Completion) { mask = c.Res })
	}
	if mask&unix.POLLPRI == 0 {
		t.Fatalf("poll reported %#x, want POLLPRI", mask)
	}
}

// TestParkedWakesWithoutTheEventfd: a parked driver's Wake ends a parked
// Wait with no write to the eventfd (the Waiter's past read deadline does),
// and still ends a blocking Wait called from a completion callback, the one
// case where a parked driver waits in epoll_wait: that Wake writes it.
func TestParkedWakesWithoutTheEventfd(t *testing.T) {
	d, err := epoll.New(driver.Config{Profile: driver.Native, Parked: true})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	for i := 0; i < 50; i++ {
		go d.Wake()
		if _, err := d.Wait(driver.WaitForever, func(*driver.Completion) {}); err != nil {
			t.Fatal(err)
		}
	}
	if n := eventfdCount(t, d); n != 0 {
		t.Fatalf("eventfd count %d after 50 wakes of a parked Wait, want 0", n)
	}
	fd, peer := drivertest.TCPPair(t)
	defer unix.Close(fd)
	defer peer.Close()
	d.Recv(fd, 1)
	if _, err := peer.Write([]byte("x")); err != nil {
		t.Fatal(err)
	}
	inner := 0
	for inner == 0 {
		if _, err := d.Wait(driver.WaitForever, func(c *driver.Completion) {
			if c.Tag != 1 || inner != 0 {
				return
			}
			inner = 1
			go d.Wake()
			if _, err := d.Wait(driver.WaitForever, func(*driver.Completion) {}); err != nil {
				t.Error(err)
			}
			inner = 2
		}); err != nil {
			t.Fatal(err)
		}
	}
	if inner != 2 {
		t.Fatal("the Wait inside the callback did not return")
	}
}

// eventfdCount reads the count of d's eventfd from /proc/self/fdinfo.
func eventfdCount(t *testing.T, d *epoll.Driver) uint64 {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/self/fdinfo/%d", epoll.WakeFD(d)))
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "eventfd-count:"); ok {
			n, err := strconv.ParseUint(strings.TrimSpace(v), 16, 64)
			if err != nil {
				t.Fatalf("fdinfo %q: %v", line, err)
			}
			return n
		}
	}
	t.Fatalf("no eventfd-count in fdinfo:\n%s", b)
	return 0
}

package drivertest

import (
	"errors"
	"net"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/ringloop/ringloop/internal/driver"
	"golang.org/x/sys/unix"
)

// testFDCleanup: creating a driver, using every op and closing it leaves the
// process with the fds and goroutines it had before.
func testFDCleanup(t *testing.T, e *Env) {
	// Warm up what the runtime opens lazily (the netpoller) and settle.
	if ln, err := net.Listen("tcp4", "127.0.0.1:0"); err == nil {
		ln.Close()
	}
	goroutines := runtime.NumGoroutine()
	before := CountFDs(t)
	func() {
		d := e.NewDriver(t, driver.Config{})
		defer d.Close()
		h := &Harness{T: t, D: d, ops: map[driver.Tag]*Op{}, owned: map[int]bool{}, next: 1}
		h.cb = h.dispatch
		defer h.CloseOwned()
		lfd, sa := Listen(t, 16)
		h.Own(lfd)
		a := h.Accept(lfd)
		cfd := h.Own(Socket(t))
		c := h.Connect(cfd, sa)
		h.Until(0, "connect", func() bool { return c.Done && len(a.More) == 1 })
		sfd := int(a.More[0])
		r := h.Recv(sfd, nil)
		s := h.Send(cfd, make([]byte, 100<<10))
		h.Until(0, "data", func() bool { return s.Done && r.Bytes == 100<<10 })
		var pp [2]int
		if err := unix.Pipe2(pp[:], unix.O_NONBLOCK|unix.O_CLOEXEC); err != nil {
			t.Fatal(err)
		}
		h.Own(pp[0])
		h.Own(pp[1])
		p := h.Poll(pp[0], unix.POLLIN)
		h.D.Wake()
		h.Wait(0)
		h.Cancel(a)
		h.Cancel(r)
		h.Cancel(p)
		cl := h.CloseFD(cfd)
		h.Until(0, "cancels", func() bool { return AllDone(a, r, p, cl) })
		if err := d.Close(); err != nil {
			t.Fatalf("Close: %v", err)
		}
	}()
	if after := CountFDs(t); after != before {
		t.Fatalf("open fds: %d before, %d after", before, after)
	}
	deadline := time.Now().Add(5 * time.Second)
	for runtime.NumGoroutine() > goroutines && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	if n := runtime.NumGoroutine(); n > goroutines {
		t.Fatalf("goroutines: %d before, %d after", goroutines, n)
	}
}

// testUseAfterClose: after Close, Wait and Wake return ErrClosed, ops are
// ignored without panicking, and ops armed before Close never complete.
func testUseAfterClose(t *testing.T, e *Env) {
	d := e.NewDriver(t, driver.Config{})
	fd, _ := TCPPair(t)
	defer unix.Close(fd)
	d.Recv(fd, 1)
	if _, err := d.Wait(0, func(*driver.Completion) {}); err != nil {
		t.Fatal(err)
	}
	if err := d.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	d.Recv(fd, 2)
	d.Send(fd, 3, []byte("x"))
	d.Cancel(fd, 1)
	n, err := d.Wait(0, func(c *driver.Completion) { t.Errorf("completion after Close: %+v", *c) })
	if !errors.Is(err, driver.ErrClosed) || n != 0 {
		t.Fatalf("Wait after Close: %d, %v; want ErrClosed", n, err)
	}
	if err := d.Wake(); !errors.Is(err, driver.ErrClosed) {
		t.Fatalf("Wake after Close: %v; want ErrClosed", err)
	}
}

// testFeatures: the features name the driver, carry the profile in force
// and explain themselves.
func testFeatures(t *testing.T, e *Env) {
	h := e.New(t)
	f := h.D.Features()
	switch {
	case f.Backend != h.D.Name(),
		f.Backend != driver.NameURing && f.Backend != driver.NameEpoll && f.Backend != driver.NameEpollURing:
		t.Fatalf("Backend %q, Name %q", f.Backend, h.D.Name())
	}
	if f.Profile != e.Profile {
		t.Fatalf("Profile %q, want %q", f.Profile, e.Profile)
	}
	if len(f.Reasons) == 0 {
		t.Fatal("no Reasons")
	}
	if s := f.String(); !strings.Contains(s, f.Backend) {
		t.Fatalf("String() = %q", s)
	}
}

// testFullFDTable: with every descriptor of the process taken (EMFILE), a
// driver built before still waits, wakes and completes: an accept reports
// the shortage as its result, and once descriptors are free again a new
// accept takes the connection that waited in the backlog. A loop at its fd
// limit must go on serving what it holds (a parked driver used to need a
// new descriptor at its first Wait).
func testFullFDTable(t *testing.T, e *Env) {
	h := e.New(t)
	lfd, sa := Listen(t, 16)
	h.Own(lfd)
	cfd, err := unix.Socket(unix.AF_INET, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	h.Own(cfd)
	release := FillFDTable(t)
	if err := unix.Connect(cfd, sa); err != nil { // blocking: in the backlog on return
		release()
		t.Fatal(err)
	}
	go func() {
		time.Sleep(time.Millisecond)
		h.D.Wake()
	}()
	h.Wait(driver.WaitForever)
	a := h.Accept(lfd)
	h.Until(0, "the accept's final completion", func() bool { return a.Done || len(a.More) > 0 })
	release()
	if len(a.More) > 0 || a.Res != -int32(unix.EMFILE) {
		t.Fatalf("accept with the fd table full: %d accepted, final %s; want -EMFILE", len(a.More), ErrnoRes(a.Res))
	}
	a = h.Accept(lfd)
	h.Until(0, "the waiting connection's accept", func() bool { return len(a.More) > 0 || a.Done })
	if len(a.More) != 1 {
		t.Fatalf("after the shortage: %d accepted, final %s; want the one waiting connection", len(a.More), ErrnoRes(a.Res))
	}
	h.Own(int(a.More[0]))
	h.Cancel(a)
	h.Until(0, "the accept's cancel", func() bool { return a.Done })
}

// FillFDTable lowers RLIMIT_NOFILE to just above the lowest free descriptor
// and takes every free one below it, so that the next descriptor the
// process asks for fails with EMFILE. release (also run at cleanup) gives
// them back and restores the limit. The limit is the process's: tests that
// use it must not run in parallel.
func FillFDTable(t testing.TB) (release func()) {
	t.Helper()
	var old unix.Rlimit
	if err := unix.Getrlimit(unix.RLIMIT_NOFILE, &old); err != nil {
		t.Fatal(err)
	}
	free, err := unix.Dup(0)
	if err != nil {
		t.Fatal(err)
	}
	unix.Close(free)
	var fillers []int
	done := false
	release = func() {
		if done {
			return
		}
		done = true
		for _, fd := range fillers {
			unix.Close(fd)
		}
		if err := unix.Setrlimit(unix.RLIMIT_NOFILE, &old); err != nil {
			t.Error(err)
		}
	}
	t.Cleanup(release)
	lim := unix.Rlimit{Cur: uint64(free + 4), Max: old.Max}
	if err := unix.Setrlimit(unix.RLIMIT_NOFILE, &lim); err != nil {
		t.Fatal(err)
	}
	for {
		fd, err := unix.Dup(0)
		if err == unix.EMFILE {
			return release
		}
		if err != nil {
			release()
			t.Fatal(err)
		}
		fillers = append(fillers, fd)
	}
}

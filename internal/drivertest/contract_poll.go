package drivertest

import (
	"encoding/binary"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// testPollPipe: a poll on a pipe's read end reports nothing while it is
// empty, POLLIN after each write (the poll stays armed), POLLHUP when the
// write end closes, and -ECANCELED after Cancel; a poll for POLLOUT on the
// write end reports at once.
func testPollPipe(t *testing.T, e *Env) {
	h := e.New(t)
	var p [2]int
	if err := unix.Pipe2(p[:], unix.O_NONBLOCK|unix.O_CLOEXEC); err != nil {
		t.Fatal(err)
	}
	rfd, wfd := h.Own(p[0]), h.Own(p[1])
	in := h.Poll(rfd, unix.POLLIN)
	h.Quiet(20*time.Millisecond, "poll of an empty pipe")
	buf := make([]byte, 16)
	for i := 1; i <= 3; i++ {
		n := len(in.More)
		if _, err := unix.Write(wfd, []byte{byte(i)}); err != nil {
			t.Fatal(err)
		}
		h.Until(0, "POLLIN", func() bool { return len(in.More) > n })
		if in.More[len(in.More)-1]&unix.POLLIN == 0 {
			t.Fatalf("poll reported %#x, want POLLIN", in.More[len(in.More)-1])
		}
		if in.Done {
			t.Fatalf("poll ended after one event: %s", ErrnoRes(in.Res))
		}
		if n, err := unix.Read(rfd, buf); n != 1 || err != nil {
			t.Fatalf("read: %d %v", n, err)
		}
		h.Wait(0)
	}
	out := h.Poll(wfd, unix.POLLOUT)
	h.Until(0, "POLLOUT", func() bool { return len(out.More) >= 1 })
	if out.More[0]&unix.POLLOUT == 0 {
		t.Fatalf("poll of the write end reported %#x, want POLLOUT", out.More[0])
	}
	h.Cancel(out)
	h.Until(0, "POLLOUT poll cancelled", func() bool { return out.Done })
	if out.Res != ecanceled {
		t.Fatalf("cancelled poll: %s", ErrnoRes(out.Res))
	}
	n := len(in.More)
	h.CloseNow(wfd)
	h.Until(0, "POLLHUP", func() bool { return len(in.More) > n })
	if in.More[len(in.More)-1]&unix.POLLHUP == 0 {
		t.Fatalf("poll after the writer closed reported %#x, want POLLHUP", in.More[len(in.More)-1])
	}
	h.Cancel(in)
	h.Until(0, "POLLIN poll cancelled", func() bool { return in.Done })
	if in.Res != ecanceled {
		t.Fatalf("cancelled poll: %s", ErrnoRes(in.Res))
	}
	// The ops have ended: the owner may close the fds itself.
	h.CloseNow(rfd)
	h.Quiet(20*time.Millisecond, "after the polls ended")
}

// testPollEventfd: a poll on an eventfd reports POLLIN for writes made by
// another goroutine, again after the counter is read and written again.
func testPollEventfd(t *testing.T, e *Env) {
	h := e.New(t)
	efd, err := unix.Eventfd(0, unix.EFD_NONBLOCK|unix.EFD_CLOEXEC)
	if err != nil {
		t.Fatal(err)
	}
	h.Own(efd)
	op := h.Poll(efd, unix.POLLIN)
	h.Quiet(10*time.Millisecond, "poll of a zero eventfd")
	buf := make([]byte, 8)
	for i := 0; i < 3; i++ {
		n := len(op.More)
		go func() {
			b := make([]byte, 8)
			binary.NativeEndian.PutUint64(b, 1)
			unix.Write(efd, b)
		}()
		h.Until(0, "POLLIN from another goroutine's write", func() bool { return len(op.More) > n })
		if op.More[len(op.More)-1]&unix.POLLIN == 0 {
			t.Fatalf("poll reported %#x", op.More[len(op.More)-1])
		}
		if _, err := unix.Read(efd, buf); err != nil {
			t.Fatal(err)
		}
		h.Wait(0)
	}
	h.Cancel(op)
	h.Until(0, "poll cancelled", func() bool { return op.Done })
	if op.Res != ecanceled {
		t.Fatalf("cancelled poll: %s", ErrnoRes(op.Res))
	}
}

//go:build linux && cgo && !ringloop_nouring

package uring

import (
	"testing"

	"github.com/ringloop/ringloop/internal/drivertest"
	"github.com/ringloop/ringloop/internal/liburing"
	"golang.org/x/sys/unix"
)

// submitOne submits op alone on a plain ring without waiting (no
// GETEVENTS) and returns the completions present when io_uring_enter
// returns, and the number of enters it took.
func submitOne(t *testing.T, r *liburing.Ring, b *liburing.Batch, op liburing.SQE) ([]liburing.CQE, uint64) {
	t.Helper()
	before := r.Stats().Enters
	b.SQEs()[0] = op
	n, left, err := r.Run(b, 1, 0, 0, len(b.CQEs()))
	if err != nil || left != 0 {
		t.Fatalf("run: %v (left %d)", err, left)
	}
	return append([]liburing.CQE(nil), b.CQEs()[:n]...), r.Stats().Enters - before
}

func plainRing(t *testing.T) (*liburing.Ring, *liburing.Batch) {
	t.Helper()
	r, err := liburing.Setup(8, 16, 0)
	if err != nil {
		t.Skipf("io_uring: %v", err)
	}
	b := liburing.NewBatch(8, 1, 16)
	t.Cleanup(func() { r.Close(); b.Free() })
	return r, b
}

// TestDontwaitCompletesInline is what the readiness-first variant rests on:
// on a plain ring, a recv or send SQE with MSG_DONTWAIT completes during the
// io_uring_enter that submits it, with its bytes when the socket is ready
// and with -EAGAIN when it is not (the kernel marks it REQ_F_NOWAIT and
// fails it instead of arming a poll). Without MSG_DONTWAIT the same recv on
// an empty socket arms a poll and completes later, from task work.
func TestDontwaitCompletesInline(t *testing.T) {
	r, b := plainRing(t)
	buf, err := mmap(4096)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Munmap(buf)
	fd, peer := drivertest.TCPPair(t)
	defer unix.Close(fd)
	recv := func(flags uint32, ud uint64) liburing.SQE {
		return liburing.SQE{Opcode: liburing.IORingOpRecv, FD: int32(fd), Addr: uint64(uintptr(ptr(buf))),
			Len: uint32(len(buf)), OpFlags: flags, UserData: ud}
	}
	expect := func(what string, cqes []liburing.CQE, enters uint64, ud uint64, res int32) {
		t.Helper()
		if len(cqes) != 1 || cqes[0].UserData != ud || cqes[0].Res != res || enters != 1 {
			t.Fatalf("%s: want one completion {ud %d, res %d} after one enter, got %+v after %d enters", what, ud, res, cqes, enters)
		}
	}

	// Empty socket: -EAGAIN at once, nothing left armed.
	cqes, enters := submitOne(t, r, b, recv(unix.MSG_DONTWAIT, 1))
	expect("recv, empty socket", cqes, enters, 1, -int32(unix.EAGAIN))

	// Data waiting: the bytes, at once.
	if _, err := peer.Write([]byte("hello")); err != nil {
		t.Fatal(err)
	}
	waitReadable(t, fd)
	cqes, enters = submitOne(t, r, b, recv(unix.MSG_DONTWAIT, 2))
	expect("recv, data waiting", cqes, enters, 2, 5)
	if string(buf[:5]) != "hello" {
		t.Fatalf("recv read %q", buf[:5])
	}

	// Room to send: all of it, at once.
	copy(buf, "world")
	send := func(p []byte, ud uint64) liburing.SQE {
		return liburing.SQE{Opcode: liburing.IORingOpSend, FD: int32(fd), Addr: uint64(uintptr(ptr(p))),
			Len: uint32(len(p)), OpFlags: unix.MSG_DONTWAIT | unix.MSG_NOSIGNAL, UserData: ud}
	}
	cqes, enters = submitOne(t, r, b, send(buf[:5], 3))
	expect("send, room", cqes, enters, 3, 5)

	// Full socket buffer: -EAGAIN at once. Loopback moves what was in
	// flight into the peer's receive queue on its own time, so room can
	// open between the fill and the send; a send that finds room completes
	// inline too, and the socket is filled again.
	drivertest.SetBuffers(t, fd, 4096, 0)
	full := false
	for attempt := 0; attempt < 100 && !full; attempt++ {
		for {
			if _, err := unix.SendmsgN(fd, buf, nil, nil, unix.MSG_DONTWAIT); err == unix.EAGAIN {
				break
			} else if err != nil {
				t.Fatal(err)
			}
		}
		cqes, enters = submitOne(t, r, b, send(buf, 4))
		if len(cqes) == 1 && cqes[0].Res > 0 && enters == 1 {
			continue // room opened after the fill: completed inline all the same
		}
		expect("send, full buffer", cqes, enters, 4, -int32(unix.EAGAIN))
		full = true
	}
	if !full {
		t.Fatal("the socket's send buffer never stayed full from the fill to the send in 100 tries")
	}

	// The contrast: without MSG_DONTWAIT an empty socket's recv is armed
	// (no completion yet); closing the ring cancels it.
	fd2, _ := drivertest.TCPPair(t)
	defer unix.Close(fd2)
	op := recv(0, 5)
	op.FD = int32(fd2)
	cqes, _ = submitOne(t, r, b, op)
	if len(cqes) != 0 {
		t.Fatalf("recv without MSG_DONTWAIT on an empty socket completed at once: %+v", cqes)
	}
}

// waitReadable blocks until fd has data (poll(2), generous timeout).
func waitReadable(t *testing.T, fd int) {
	t.Helper()
	pfd := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
	for {
		n, err := unix.Poll(pfd, 30_000)
		if err == unix.EINTR {
			continue
		}
		if err != nil || n != 1 {
			t.Fatalf("poll: %d %v", n, err)
		}
		return
	}
}

package drivertest

import (
	"encoding/binary"
	"net"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

const ecanceled = -int32(unix.ECANCELED)

// testCancelRace: cancel races the natural completion of each op kind, in
// both orders (cancel before the op reaches the kernel, and after a Wait
// that may have completed it). Every op ends exactly once (the Harness fails
// a second final or any later completion), with its natural result or
// -ECANCELED.
func testCancelRace(t *testing.T, e *Env) {
	h := e.New(t)
	rounds := 100
	if raceEnabled {
		rounds = 30
	}
	fd, peer := TCPPair(t)
	h.Own(fd)
	lfd, lsa := Listen(t, 128)
	h.Own(lfd)
	efd, err := unix.Eventfd(0, unix.EFD_NONBLOCK|unix.EFD_CLOEXEC)
	if err != nil {
		t.Fatal(err)
	}
	h.Own(efd)
	one := make([]byte, 8)
	binary.NativeEndian.PutUint64(one, 1)
	drain := make([]byte, 8)
	go func() { // keep the pair's peer reading what the sends write
		drain := make([]byte, 1<<16)
		for {
			if _, err := peer.Read(drain); err != nil {
				return
			}
		}
	}()
	for i := 0; i < rounds; i++ {
		waitFirst := i%2 == 1
		maybeWait := func() {
			if waitFirst {
				h.Wait(0)
			}
		}
		// Recv racing data.
		rop := h.Recv(fd, nil)
		maybeWait()
		if _, err := unix.Write(efd, one); err != nil { // unrelated activity
			t.Fatal(err)
		}
		if _, err := peer.Write([]byte("x")); err != nil {
			t.Fatal(err)
		}
		maybeWait()
		h.Cancel(rop)
		// Send racing its completion.
		sop := h.Send(fd, []byte("hello"))
		maybeWait()
		h.Cancel(sop)
		// Accept racing a connection.
		aop := h.Accept(lfd)
		cfd := h.Own(Socket(t))
		Linger0(cfd)
		unix.Connect(cfd, lsa) // EINPROGRESS
		maybeWait()
		h.Cancel(aop)
		// Poll racing readiness.
		pop := h.Poll(efd, unix.POLLIN)
		maybeWait()
		h.Cancel(pop)
		// Connect racing its completion.
		kfd := h.Own(Socket(t))
		Linger0(kfd)
		kop := h.Connect(kfd, lsa)
		maybeWait()
		h.Cancel(kop)
		h.Until(0, "every op's final completion", func() bool { return AllDone(rop, sop, aop, pop, kop) })
		for _, op := range []*Op{rop, aop, pop} {
			if op.Res != ecanceled {
				t.Fatalf("round %d: cancelled %s ended with %s, want -ECANCELED", i, op.Kind, ErrnoRes(op.Res))
			}
		}
		if sop.Res != ecanceled && sop.Res != 5 {
			t.Fatalf("round %d: send ended with %s, want 5 or -ECANCELED", i, ErrnoRes(sop.Res))
		}
		if kop.Res != ecanceled && kop.Res != 0 {
			t.Fatalf("round %d: connect ended with %s, want 0 or -ECANCELED", i, ErrnoRes(kop.Res))
		}
		// Cancelling again is a no-op.
		h.Cancel(rop)
		h.Cancel(sop)
		for _, nfd := range aop.More {
			h.CloseNow(int(nfd))
		}
		h.CloseNow(cfd)
		h.CloseNow(kfd)
		unix.Read(efd, drain)
	}
	// Accepts of connections left in the backlog, if any, are not ours:
	// nothing is armed now, so nothing may complete.
	h.Quiet(30*time.Millisecond, "after all ops ended")
}

// testCancelEnded: cancelling an op that has ended, or a tag never armed,
// reports nothing.
func testCancelEnded(t *testing.T, e *Env) {
	h := e.New(t)
	fd, peer := TCPPair(t)
	h.Own(fd)
	s := h.Send(fd, []byte("done"))
	h.Until(0, "send", func() bool { return s.Done })
	r := h.Recv(fd, nil)
	peer.CloseWrite()
	h.Until(0, "EOF", func() bool { return r.Done })
	h.Cancel(s)
	h.Cancel(r)
	h.D.Cancel(fd, 1<<40) // never armed
	h.Quiet(30*time.Millisecond, "cancel of ended ops")
}

// testCloseInFlight: with a receive, a poll and a blocked send armed on a
// socket and an accept on a listener, Cancel of each and CloseFD in the same
// iteration end every op exactly once with -ECANCELED and report close's 0;
// the peer then sees the connection end, and the port refuses connections.
func testCloseInFlight(t *testing.T, e *Env) {
	h := e.New(t)
	fd, peer := TCPPair(t)
	h.Own(fd)
	SetBuffers(t, fd, 64<<10, 0)
	peer.SetReadBuffer(128 << 10)
	lfd, lsa := Listen(t, 16)
	h.Own(lfd)

	r := h.Recv(fd, nil)
	p := h.Poll(fd, unix.POLLIN)
	s := h.Send(fd, make([]byte, 4<<20)) // the peer does not read: it blocks
	a := h.Accept(lfd)
	for i := 0; i < 5; i++ {
		h.Wait(time.Millisecond)
	}
	if AllDone(r) || AllDone(p) || AllDone(s) || AllDone(a) {
		t.Fatalf("an op ended early: recv %v poll %v send %v accept %v", r.Done, p.Done, s.Done, a.Done)
	}
	for _, op := range []*Op{r, p, s} {
		h.Cancel(op)
	}
	c := h.CloseFD(fd)
	h.Cancel(a)
	lc := h.CloseFD(lfd)
	h.Until(0, "every final completion", func() bool { return AllDone(r, p, s, a, c, lc) })
	for _, op := range []*Op{r, p, s, a} {
		if op.Res != ecanceled {
			t.Errorf("%s ended with %s, want -ECANCELED", op.Kind, ErrnoRes(op.Res))
		}
	}
	if c.Res != 0 || lc.Res != 0 {
		t.Fatalf("CloseFD: %s, %s; want 0", ErrnoRes(c.Res), ErrnoRes(lc.Res))
	}
	// The peer reads what was sent, then the end of the connection.
	peer.SetReadDeadline(time.Now().Add(20 * time.Second))
	buf := make([]byte, 1<<16)
	var err error
	for err == nil {
		_, err = peer.Read(buf)
	}
	if ne, ok := err.(net.Error); ok && ne.Timeout() {
		t.Fatalf("peer never saw the connection end: %v", err)
	}
	if conn, err := net.DialTimeout("tcp4", (&net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: lsa.Port}).String(), 5*time.Second); err == nil {
		conn.Close()
		t.Fatal("the closed listener still accepts connections")
	}
	h.Quiet(20*time.Millisecond, "after close")
}

// testNoStale: after a receive is cancelled, data the peer keeps sending
// produces no completion; after an accept is cancelled, connections produce
// none; after an fd is closed and its number reused, only the new ops report.
func testNoStale(t *testing.T, e *Env) {
	h := e.New(t)
	fd, peer := TCPPair(t)
	h.Own(fd)
	r := h.Recv(fd, nil)
	peer.Write([]byte("first"))
	h.Until(0, "first data", func() bool { return r.Bytes > 0 })
	h.Cancel(r)
	h.Until(0, "recv cancelled", func() bool { return r.Done })
	for i := 0; i < 5; i++ {
		peer.Write([]byte("more data nobody asked for"))
		h.Wait(2 * time.Millisecond)
	}

	lfd, lsa := Listen(t, 64)
	h.Own(lfd)
	a := h.Accept(lfd)
	h.Wait(0)
	h.Cancel(a)
	h.Until(0, "accept cancelled", func() bool { return a.Done })
	for i := 0; i < 5; i++ {
		cfd := h.Own(Socket(t))
		unix.Connect(cfd, lsa)
		h.Wait(2 * time.Millisecond)
	}
	h.Quiet(20*time.Millisecond, "after cancel")

	// Close through the driver and reuse the number.
	r2 := h.Recv(fd, nil)
	h.Cancel(r2)
	c := h.CloseFD(fd)
	h.Until(0, "close", func() bool { return r2.Done && c.Done })
	peer.Write([]byte("to a closed socket"))
	fd2, peer2 := TCPPair(t) // likely the same number
	h.Own(fd2)
	var got []byte
	r3 := h.Recv(fd2, func(p []byte) { got = append(got, p...) })
	peer2.Write([]byte("new"))
	h.Until(0, "data on the new socket", func() bool { return len(got) == 3 })
	h.Cancel(r3)
	h.Until(0, "recv cancelled", func() bool { return r3.Done })
	h.Quiet(20*time.Millisecond, "after reuse")
}

package drivertest

import (
	"time"

	"testing"

	"golang.org/x/sys/unix"
)

// stormConns is the accept storm's size; the contract names 1000, race
// detector or not.
const stormConns = 1000

// testAcceptStorm: one multishot accept takes 1000 connections made by 1000
// driver connects; every accepted fd is non-blocking and close-on-exec;
// CloseFD of each reports 0; the accept ends with -ECANCELED.
func testAcceptStorm(t *testing.T, e *Env) {
	h := e.New(t)
	lfd, sa := Listen(t, 4096)
	h.Own(lfd)
	acc := h.Accept(lfd)
	conns := make([]*Op, stormConns)
	for i := range conns {
		fd := h.Own(Socket(t))
		Linger0(fd)
		conns[i] = h.Connect(fd, sa)
	}
	h.Until(0, "1000 accepts and connects", func() bool {
		return len(acc.More) >= stormConns && AllDone(conns...)
	})
	if acc.Done {
		t.Fatalf("accept ended early: %s", ErrnoRes(acc.Res))
	}
	for i, c := range conns {
		if c.Res != 0 {
			t.Fatalf("connect %d: %s", i, ErrnoRes(c.Res))
		}
	}
	seen := map[int32]bool{}
	for _, nfd := range acc.More {
		if seen[nfd] {
			t.Fatalf("accepted fd %d reported twice", nfd)
		}
		seen[nfd] = true
		fl, err := unix.FcntlInt(uintptr(nfd), unix.F_GETFL, 0)
		if err != nil || fl&unix.O_NONBLOCK == 0 {
			t.Fatalf("accepted fd %d: not non-blocking (flags %#x, %v)", nfd, fl, err)
		}
		fdfl, err := unix.FcntlInt(uintptr(nfd), unix.F_GETFD, 0)
		if err != nil || fdfl&unix.FD_CLOEXEC == 0 {
			t.Fatalf("accepted fd %d: not close-on-exec (%v)", nfd, err)
		}
	}
	// Nothing more is pending: exactly the 1000 connections were accepted.
	h.Quiet(20*time.Millisecond, "after the storm")
	if len(acc.More) != stormConns {
		t.Fatalf("accepted %d connections, want %d", len(acc.More), stormConns)
	}
	closes := make([]*Op, 0, stormConns)
	for _, nfd := range acc.More {
		Linger0(int(nfd))
		closes = append(closes, h.CloseFD(int(nfd)))
	}
	h.Cancel(acc)
	h.Until(0, "closes and the accept's end", func() bool { return acc.Done && AllDone(closes...) })
	for _, c := range closes {
		if c.Res != 0 {
			t.Fatalf("CloseFD(%d): %s", c.FD, ErrnoRes(c.Res))
		}
	}
	if acc.Res != -int32(unix.ECANCELED) {
		t.Fatalf("cancelled accept ended with %s, want -ECANCELED", ErrnoRes(acc.Res))
	}
}

// testConnectOK: a driver connect to a listening loopback port reports 0
// and the socket then carries data both ways.
func testConnectOK(t *testing.T, e *Env) {
	h := e.New(t)
	lfd, sa := Listen(t, 16)
	h.Own(lfd)
	acc := h.Accept(lfd)
	cfd := h.Own(Socket(t))
	c := h.Connect(cfd, sa)
	h.Until(0, "connect and accept", func() bool { return c.Done && len(acc.More) == 1 })
	if c.Res != 0 {
		t.Fatalf("connect: %s", ErrnoRes(c.Res))
	}
	sfd := int(acc.More[0])
	var got []byte
	r := h.Recv(sfd, func(p []byte) { got = append(got, p...) })
	s := h.Send(cfd, []byte("ping"))
	h.Until(0, "ping", func() bool { return s.Done && len(got) == 4 })
	if string(got) != "ping" || s.Res != 4 {
		t.Fatalf("got %q, send %s", got, ErrnoRes(s.Res))
	}
	// And back, on the accepted socket.
	var back []byte
	r2 := h.Recv(cfd, func(p []byte) { back = append(back, p...) })
	s2 := h.Send(sfd, []byte("pong"))
	h.Until(0, "pong", func() bool { return s2.Done && len(back) == 4 })
	if string(back) != "pong" {
		t.Fatalf("got %q", back)
	}
	// Closing the client ends the server's receive with EOF (Res 0).
	h.Cancel(r2)
	h.Until(0, "client recv cancelled", func() bool { return r2.Done })
	cl := h.CloseFD(cfd)
	h.Until(0, "EOF on the server side", func() bool { return r.Done && cl.Done })
	if r.Res != 0 || cl.Res != 0 {
		t.Fatalf("server recv ended with %s (want 0, EOF), close %s", ErrnoRes(r.Res), ErrnoRes(cl.Res))
	}
	h.Cancel(acc)
	h.Until(0, "accept cancelled", func() bool { return acc.Done })
}

// testConnectRefused: connecting to a loopback port with no listener (a
// bound socket that never listens) ends with -ECONNREFUSED.
func testConnectRefused(t *testing.T, e *Env) {
	h := e.New(t)
	bfd := h.Own(Socket(t))
	if err := unix.Bind(bfd, &unix.SockaddrInet4{Addr: [4]byte{127, 0, 0, 1}}); err != nil {
		t.Fatal(err)
	}
	sa := LocalAddr(t, bfd)
	for i := 0; i < 3; i++ {
		fd := h.Own(Socket(t))
		c := h.Connect(fd, sa)
		h.Until(0, "refused connect", func() bool { return c.Done })
		if c.Res != -int32(unix.ECONNREFUSED) {
			t.Fatalf("connect to a closed port: %s, want -ECONNREFUSED", ErrnoRes(c.Res))
		}
	}
}

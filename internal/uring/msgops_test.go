//go:build linux && cgo && !ringloop_nouring

package uring

import (
	"encoding/binary"
	"strings"
	"testing"
	"time"
	"unsafe"

	"github.com/ringloop/ringloop/internal/driver"
	"golang.org/x/sys/unix"
)

// udpPair returns two connected, non-blocking loopback UDP sockets.
func udpPair(t *testing.T) (a, b int) {
	t.Helper()
	open := func() int {
		fd, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_NONBLOCK|unix.SOCK_CLOEXEC, 0)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { unix.Close(fd) })
		if err := unix.Bind(fd, &unix.SockaddrInet4{Addr: [4]byte{127, 0, 0, 1}}); err != nil {
			t.Fatal(err)
		}
		return fd
	}
	a, b = open(), open()
	for _, p := range [][2]int{{a, b}, {b, a}} {
		sa, err := unix.Getsockname(p[1])
		if err != nil {
			t.Fatal(err)
		}
		if err := unix.Connect(p[0], sa); err != nil {
			t.Fatal(err)
		}
	}
	return a, b
}

// waitFor runs d's waits until done says so (10 s at most).
func waitFor(t *testing.T, d *Driver, fn func(c *driver.Completion), done func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !done() {
		if time.Now().After(deadline) {
			t.Fatal("timed out")
		}
		if _, err := d.Wait(10*time.Millisecond, fn); err != nil {
			t.Fatal(err)
		}
	}
}

// TestMsgOps: RecvMsg and SendMsgs run where the profile allows multishot
// RECVMSG (Features.Reasons says so; RecvMsgRoom is 0 elsewhere). A chain
// of three datagrams whose middle one the kernel refuses sends the first,
// reports the refusal, and ends counting one; RecvMsg reports each
// datagram with its source and length, and once cancelled leaves no op
// behind.
func TestMsgOps(t *testing.T) {
	forEachProfile(t, func(t *testing.T, p driver.Profile) {
		d := newLocked(t, driver.Config{Profile: p})
		multi := false
		for _, r := range d.Features().Reasons {
			multi = multi || strings.HasPrefix(r, "recvmsg: datagrams by multishot RECVMSG")
		}
		if !multi {
			if d.RecvMsgRoom() != 0 {
				t.Fatalf("RecvMsgRoom %d without multishot RECVMSG", d.RecvMsgRoom())
			}
			return
		}
		if d.RecvMsgRoom() < 65535 {
			t.Fatalf("RecvMsgRoom %d: a UDP datagram does not fit", d.RecvMsgRoom())
		}
		a, b := udpPair(t)
		live := d.LiveOps()
		d.RecvMsg(b, 1, false)
		payloads := [][]byte{[]byte("one"), make([]byte, 70000), []byte("three")}
		hdrs := make([]unix.Msghdr, len(payloads))
		iovs := make([]unix.Iovec, len(payloads))
		for i, pl := range payloads {
			iovs[i].Base = &pl[0]
			iovs[i].SetLen(len(pl))
			hdrs[i].Iov = &iovs[i]
			hdrs[i].SetIovlen(1)
		}
		d.SendMsgs(a, 2, hdrs)
		var got []string
		var refused, sent int32 = 0, -1
		from, _ := unix.Getsockname(a)
		fn := func(c *driver.Completion) {
			switch {
			case c.Tag == 2 && c.More:
				refused = c.Res
			case c.Tag == 2:
				sent = c.Res
			case c.Tag == 1 && c.Msg != nil:
				m := c.Msg
				if int(c.Res) != len(c.Data) || m.Size != len(c.Data) || m.Flags&unix.MSG_TRUNC != 0 {
					t.Errorf("datagram: res %d, %d bytes, size %d, flags %#x", c.Res, len(c.Data), m.Size, m.Flags)
				}
				port := binary.BigEndian.Uint16(m.Name[2:4])
				if fam := *(*uint16)(unsafe.Pointer(&m.Name[0])); fam != unix.AF_INET || int(port) != from.(*unix.SockaddrInet4).Port ||
					m.NameLen != unix.SizeofSockaddrInet4 {
					t.Errorf("source: family %d port %d (len %d), want %v", fam, port, m.NameLen, from)
				}
				got = append(got, string(c.Data))
			case c.Tag == 1:
				t.Errorf("RecvMsg ended: %d", c.Res)
			}
		}
		waitFor(t, d, fn, func() bool { return sent >= 0 && len(got) == 1 })
		if sent != 1 || refused != -int32(unix.EMSGSIZE) || got[0] != "one" {
			t.Fatalf("chain: sent %d, refused %d, received %q", sent, refused, got)
		}
		ended := false
		d.SendMsgs(a, 3, hdrs[2:])
		waitFor(t, d, func(c *driver.Completion) {
			if c.Tag == 1 && c.Msg == nil && !c.More {
				ended = c.Res == -int32(unix.ECANCELED)
				return
			}
			fn(c)
			if c.Tag == 1 && len(got) == 2 {
				d.Cancel(b, 1)
			}
		}, func() bool { return ended })
		if got[1] != "three" {
			t.Fatalf("received %q", got)
		}
		if d.LiveOps() != live {
			t.Fatalf("%d live ops after the ops ended, want %d", d.LiveOps(), live)
		}
	})
}

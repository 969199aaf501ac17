package packet_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"net/netip"
	"os"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ringloop/ringloop/engine"
	"github.com/ringloop/ringloop/internal/testenv"
	"github.com/ringloop/ringloop/packet"
	"github.com/ringloop/ringloop/tasks"
)

// pktHandler is a datagram handler for tests: it echoes (WriteTo, or Reply
// with reply set) unless onPacket says otherwise, and records errors and
// the close.
type pktHandler struct {
	reply    bool
	onPacket func(pc *packet.Conn, b []byte, from netip.AddrPort)
	onError  func(pc *packet.Conn, err error)
	got      atomic.Int64
	errs     chan error
	closed   chan error
}

func newPktHandler() *pktHandler {
	return &pktHandler{errs: make(chan error, 1024), closed: make(chan error, 1)}
}

func (h *pktHandler) OnPacket(pc *packet.Conn, b []byte, from netip.AddrPort) {
	h.got.Add(1)
	switch {
	case h.onPacket != nil:
		h.onPacket(pc, b, from)
	case h.reply:
		h.check(pc.Reply(b))
	default:
		h.check(pc.WriteTo(b, from))
	}
}

func (h *pktHandler) check(err error) {
	if err != nil {
		h.OnPacketError(nil, err)
	}
}

func (h *pktHandler) OnPacketError(pc *packet.Conn, err error) {
	if h.onError != nil {
		h.onError(pc, err)
		return
	}
	select {
	case h.errs <- err:
	default:
	}
}

func (h *pktHandler) OnPacketClose(pc *packet.Conn, err error) { h.closed <- err }

// waitClosed returns OnPacketClose's error.
func (h *pktHandler) waitClosed(t *testing.T) error {
	t.Helper()
	select {
	case err := <-h.closed:
		return err
	case <-time.After(30 * time.Second):
		t.Fatal("OnPacketClose not called")
		return nil
	}
}

// waitError returns the next error OnPacketError reported.
func (h *pktHandler) waitError(t *testing.T) error {
	t.Helper()
	select {
	case err := <-h.errs:
		return err
	case <-time.After(30 * time.Second):
		t.Fatal("OnPacketError not called")
		return nil
	}
}

// udpNets are the loopback networks the UDP tests run on: IPv4, and IPv6
// where the machine has ::1.
func udpNets() [][2]string {
	nets := [][2]string{{"udp4", "127.0.0.1:0"}}
	if probe, err := net.ListenPacket("udp6", "[::1]:0"); err == nil {
		probe.Close()
		nets = append(nets, [2]string{"udp6", "[::1]:0"})
	}
	return nets
}

func listenPacket(t *testing.T, l *engine.Loop, network, addr string, h packet.Handler, o ...*packet.Options) *packet.Conn {
	t.Helper()
	pc, err := packet.Listen(l, network, addr, h, optsOf(o))
	require.NoError(t, err)
	t.Cleanup(func() { _ = pc.Close() })
	return pc
}

// optsOf is a helper's optional options: nil (the defaults) when none.
func optsOf(o []*packet.Options) *packet.Options {
	if len(o) == 0 {
		return nil
	}
	return o[0]
}

// echoRounds runs peers client sockets at once, each sending rounds
// datagrams of random sizes (0 to 1400 bytes) one at a time and checking
// that each comes back byte for byte (one in flight per socket: nothing
// overflows a buffer on loopback, so nothing may be lost).
func echoRounds(t *testing.T, network string, server net.Addr, peers, rounds int) {
	t.Helper()
	var wg sync.WaitGroup
	errs := make(chan error, peers)
	for p := range peers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs <- echoPeer(network, server, p, rounds)
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
}

func echoPeer(network string, server net.Addr, seed, rounds int) error {
	var c net.Conn
	var err error
	if network == "unixgram" {
		// A unixgram peer must be bound to be answered.
		laddr := &net.UnixAddr{Name: fmt.Sprintf("@ringloop-test-peer-%d-%d-%d", os.Getpid(), seed, rand.Int64()), Net: "unixgram"}
		c, err = net.DialUnix("unixgram", laddr, server.(*net.UnixAddr))
	} else {
		c, err = net.DialUDP(network, nil, server.(*net.UDPAddr))
	}
	if err != nil {
		return err
	}
	defer c.Close()
	rng := rand.New(rand.NewPCG(uint64(seed), 7))
	buf := make([]byte, 2048)
	for i := range rounds {
		msg := make([]byte, rng.IntN(1401))
		for j := range msg {
			msg[j] = byte(rng.Uint32())
		}
		if _, err := c.Write(msg); err != nil {
			return fmt.Errorf("peer %d, datagram %d: %w", seed, i, err)
		}
		_ = c.SetReadDeadline(time.Now().Add(30 * time.Second))
		n, err := c.Read(buf)
		if err != nil {
			return fmt.Errorf("peer %d, datagram %d (%d bytes): %w", seed, i, len(msg), err)
		}
		if !bytes.Equal(buf[:n], msg) {
			return fmt.Errorf("peer %d, datagram %d: echoed %d bytes, want the %d sent", seed, i, n, len(msg))
		}
	}
	return nil
}

// TestPacketEchoUDP: an echo server on the loop (WriteTo to the source)
// answers 16 client sockets byte for byte, over IPv4 and IPv6, on every
// backend, profile and threading mode; the socket's address is the
// *net.UDPAddr it is bound to, and Close ends it with OnPacketClose(nil).
func TestPacketEchoUDP(t *testing.T) {
	testenv.ForEach(t, func(t *testing.T, c testenv.Combo) {
		testenv.CheckLeaks(t)
		l := newLoop(t, c)
		for _, n := range udpNets() {
			h := newPktHandler()
			pc := listenPacket(t, l, n[0], n[1], h)
			require.IsType(t, &net.UDPAddr{}, pc.LocalAddr())
			require.NotZero(t, pc.LocalAddr().(*net.UDPAddr).Port)
			require.Same(t, l, pc.Loop())
			before := l.Metrics()
			rounds := scale(20, 5)
			echoRounds(t, n[0], pc.LocalAddr(), 16, rounds)
			require.NoError(t, pc.Close())
			require.NoError(t, h.waitClosed(t))
			waitPacketCounts(t, l, before, uint64(16*rounds), uint64(16*rounds), 0)
			require.ErrorIs(t, pc.Close(), net.ErrClosed, "a second Close")
			require.ErrorIs(t, pc.WriteTo([]byte("x"), netip.MustParseAddrPort("127.0.0.1:9")), net.ErrClosed)
			require.Empty(t, h.errs)
		}
	})
}

// TestPacketDualStackUDP: "udp" on a wildcard IPv6 address serves IPv4
// peers too, reporting their sources unmapped, and answers them.
func TestPacketDualStackUDP(t *testing.T) {
	if len(udpNets()) < 2 {
		t.Log("no IPv6 loopback: dual stack not exercised")
		return
	}
	testenv.ForEachBackend(t, func(t *testing.T, c testenv.Combo) {
		testenv.CheckLeaks(t)
		l := newLoop(t, c)
		h := newPktHandler()
		var from4 atomic.Bool
		h.onPacket = func(pc *packet.Conn, b []byte, from netip.AddrPort) {
			from4.Store(from.Addr().Is4())
			h.check(pc.WriteTo(b, from))
		}
		pc := listenPacket(t, l, "udp", "[::]:0", h)
		port := pc.LocalAddr().(*net.UDPAddr).Port
		echoRounds(t, "udp4", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1), Port: port}, 4, 5)
		require.True(t, from4.Load(), "an IPv4 peer's source is an IPv4 address")
		echoRounds(t, "udp6", &net.UDPAddr{IP: net.IPv6loopback, Port: port}, 4, 5)
		require.False(t, from4.Load())
	})
}

// TestPacketTruncatedUDP: a datagram over MaxSize is not delivered cut: it
// is reported with its size (ErrTruncated), and Reply answers its source;
// one of exactly MaxSize is delivered whole.
func TestPacketTruncatedUDP(t *testing.T) {
	testenv.ForEach(t, func(t *testing.T, c testenv.Combo) {
		testenv.CheckLeaks(t)
		l := newLoop(t, c)
		for _, n := range udpNets() {
			h := newPktHandler()
			var replyErr atomic.Value
			h.onError = func(pc *packet.Conn, err error) {
				if errors.Is(err, packet.ErrTruncated) {
					replyErr.Store(fmt.Sprint(pc.Reply([]byte("too long")), " ", pc.SourceAddr()))
				}
				h.errs <- err
			}
			before := l.Metrics()
			pc := listenPacket(t, l, n[0], n[1], h, &packet.Options{MaxSize: 100})
			peer, err := net.DialUDP(n[0], nil, pc.LocalAddr().(*net.UDPAddr))
			require.NoError(t, err)
			defer peer.Close()
			_, err = peer.Write(make([]byte, 300))
			require.NoError(t, err)
			err = h.waitError(t)
			require.ErrorIs(t, err, packet.ErrTruncated)
			require.ErrorContains(t, err, "300 bytes")
			var oe *net.OpError
			require.ErrorAs(t, err, &oe)
			require.Equal(t, "read", oe.Op)
			require.Equal(t, peer.LocalAddr().String(), oe.Addr.String())
			buf := make([]byte, 512)
			_ = peer.SetReadDeadline(time.Now().Add(30 * time.Second))
			k, err := peer.Read(buf)
			require.NoError(t, err)
			require.Equal(t, "too long", string(buf[:k]))
			require.Equal(t, "<nil> "+peer.LocalAddr().String(), replyErr.Load())

			msg := bytes.Repeat([]byte{7}, 100)
			_, err = peer.Write(msg)
			require.NoError(t, err)
			k, err = peer.Read(buf)
			require.NoError(t, err)
			require.Equal(t, msg, buf[:k])
			require.EqualValues(t, 1, h.got.Load())
			// The cut one is counted dropped; the reply and the echo sent.
			waitPacketCounts(t, l, before, 1, 2, 1)
		}
	})
}

// waitPacketCounts waits for l's datagram metrics to have grown by in
// received, out sent and dropped since before (they are published once per
// loop iteration).
func waitPacketCounts(t *testing.T, l *engine.Loop, before engine.Metrics, in, out, dropped uint64) {
	t.Helper()
	var m engine.Metrics
	ok := testenv.Until(30*time.Second, func() bool {
		m = l.Metrics()
		return m.PacketsReceived-before.PacketsReceived == in && m.PacketsSent-before.PacketsSent == out &&
			m.PacketsDropped-before.PacketsDropped == dropped
	})
	require.True(t, ok, "datagrams received, sent, dropped: %d, %d, %d; want %d, %d, %d",
		m.PacketsReceived-before.PacketsReceived, m.PacketsSent-before.PacketsSent,
		m.PacketsDropped-before.PacketsDropped, in, out, dropped)
}

// closedPort returns a loopback address where no socket listens.
func closedPort(t *testing.T, network, addr string) string {
	t.Helper()
	probe, err := net.ListenPacket(network, addr)
	require.NoError(t, err)
	a := probe.LocalAddr().String()
	require.NoError(t, probe.Close())
	return a
}

// TestPacketICMPErrorUDP: a connected socket that sends to a closed port
// gets the ICMP port unreachable as syscall.ECONNREFUSED in OnPacketError,
// and goes on: the next datagram is still sent (and refused again).
func TestPacketICMPErrorUDP(t *testing.T) {
	testenv.ForEach(t, func(t *testing.T, c testenv.Combo) {
		testenv.CheckLeaks(t)
		l := newLoop(t, c)
		for _, n := range udpNets() {
			h := newPktHandler()
			pc, err := packet.Dial(l, n[0], closedPort(t, n[0], n[1]), h, nil)
			require.NoError(t, err)
			for range 2 {
				require.NoError(t, pc.WriteTo([]byte("anyone?"), netip.AddrPort{}))
				err := h.waitError(t)
				require.ErrorIs(t, err, syscall.ECONNREFUSED)
				var oe *net.OpError
				require.ErrorAs(t, err, &oe)
				require.Contains(t, []string{"read", "write"}, oe.Op)
			}
			require.NoError(t, pc.Close())
			require.NoError(t, h.waitClosed(t))
		}
	})
}

// TestPacketDialUDP: a dialled socket talks to its peer with the zero
// AddrPort, and WriteMsg to nil does the same; an unconnected socket
// refuses the zero AddrPort.
func TestPacketDialUDP(t *testing.T) {
	testenv.ForEachBackend(t, func(t *testing.T, c testenv.Combo) {
		testenv.CheckLeaks(t)
		l := newLoop(t, c)
		srv := listenPacket(t, l, "udp4", "127.0.0.1:0", newPktHandler())
		got := make(chan string, 4)
		h := newPktHandler()
		h.onPacket = func(pc *packet.Conn, b []byte, from netip.AddrPort) {
			got <- string(b) + " from " + from.String()
		}
		cl, err := packet.Dial(l, "udp", srv.LocalAddr().String(), h, nil)
		require.NoError(t, err)
		defer cl.Close()
		require.NoError(t, cl.WriteTo([]byte("one"), netip.AddrPort{}))
		require.NoError(t, cl.WriteMsg([]byte("two"), nil, nil))
		for _, want := range []string{"one", "two"} {
			select {
			case s := <-got:
				require.Equal(t, want+" from "+srv.LocalAddr().String(), s)
			case <-time.After(30 * time.Second):
				t.Fatal("no echo")
			}
		}
		require.Error(t, srv.WriteTo([]byte("x"), netip.AddrPort{}), "an unconnected socket needs a destination")
		require.Error(t, srv.WriteTo([]byte("x"), netip.MustParseAddrPort("[::1]:9")), "IPv6 on an IPv4 socket")
		require.Error(t, srv.WriteMsg([]byte("x"), nil, &net.UnixAddr{Name: "/x", Net: "unixgram"}))
	})
}

// TestPacketUnixgram: a unixgram server on a path and on an abstract name
// answers bound peers with Reply, tells their names (SourceAddr), removes
// its path at close; a Dial peer (autobound) is answered too.
func TestPacketUnixgram(t *testing.T) {
	testenv.ForEach(t, func(t *testing.T, c testenv.Combo) {
		testenv.CheckLeaks(t)
		l := newLoop(t, c)
		path := t.TempDir() + "/pkt.sock"
		for _, addr := range []string{path, fmt.Sprintf("@ringloop-test-%d-%d", os.Getpid(), rand.Int64())} {
			h := newPktHandler()
			var srcs sync.Map
			h.onPacket = func(pc *packet.Conn, b []byte, from netip.AddrPort) {
				if from.IsValid() {
					h.check(fmt.Errorf("unixgram source %v, want the zero AddrPort", from))
				}
				srcs.Store(pc.SourceAddr().String(), true)
				h.check(pc.Reply(b))
			}
			pc := listenPacket(t, l, "unixgram", addr, h)
			require.Equal(t, &net.UnixAddr{Name: addr, Net: "unixgram"}, pc.LocalAddr())
			echoRounds(t, "unixgram", pc.LocalAddr(), 8, scale(20, 5))
			n := 0
			srcs.Range(func(k, _ any) bool { n++; require.Contains(t, k, "@ringloop-test-peer-"); return true })
			require.Equal(t, 8, n, "SourceAddr names each peer")

			ch := newPktHandler()
			echoed := make(chan []byte, 1)
			ch.onPacket = func(_ *packet.Conn, b []byte, _ netip.AddrPort) { echoed <- bytes.Clone(b) }
			cl, err := packet.Dial(l, "unixgram", addr, ch, nil)
			require.NoError(t, err)
			require.NoError(t, cl.WriteTo([]byte("dialled"), netip.AddrPort{}))
			select {
			case b := <-echoed:
				require.Equal(t, "dialled", string(b))
			case <-time.After(30 * time.Second):
				t.Fatal("a dialled unixgram socket was not answered")
			}
			require.Error(t, cl.WriteTo([]byte("x"), netip.MustParseAddrPort("127.0.0.1:9")), "an AddrPort on a unixgram socket")
			require.NoError(t, cl.Close())
			require.NoError(t, ch.waitClosed(t))
			require.NoError(t, pc.Close())
			require.NoError(t, h.waitClosed(t))
			require.Empty(t, h.errs)
		}
		_, err := os.Stat(path)
		require.ErrorIs(t, err, os.ErrNotExist, "Close removes the path it bound")
	})
}

// TestPacketReusePortUDP: one socket per loop on one port with
// SO_REUSEPORT: the kernel spreads 32 peers over them, each socket serves
// some, and every peer is answered.
func TestPacketReusePortUDP(t *testing.T) {
	testenv.ForEach(t, func(t *testing.T, c testenv.Combo) {
		testenv.CheckLeaks(t)
		const loops = 2
		var hs [loops]*pktHandler
		var port string
		for i := range loops {
			l := newLoop(t, c)
			hs[i] = newPktHandler()
			addr := "127.0.0.1:0"
			if i > 0 {
				addr = port
			}
			pc := listenPacket(t, l, "udp4", addr, hs[i], &packet.Options{ReusePort: true})
			port = pc.LocalAddr().String()
		}
		ua, err := net.ResolveUDPAddr("udp4", port)
		require.NoError(t, err)
		echoRounds(t, "udp4", ua, 32, 3)
		for i, h := range hs {
			require.NotZero(t, h.got.Load(), "socket %d served no peer", i)
		}
	})
}

// TestPacketWriteFullUDP: the datagrams a socket holds unsent are bounded
// by its async write limit, on the loop and off it: with the loop busy
// holding a datagram of its own (so off-loop writes queue behind it rather
// than send directly), off-loop writes of 200 bytes (264 counted each)
// fill a 10 000-byte limit after exactly 37 and then fail with
// ErrWriteBufferFull (an ErrRejected); on the loop, writes within one task
// do the same. What was accepted is all sent, in order, and writing works
// again once it has been.
func TestPacketWriteFullUDP(t *testing.T) {
	testenv.ForEach(t, func(t *testing.T, c testenv.Combo) {
		testenv.CheckLeaks(t)
		l := newLoop(t, c)
		rx, err := net.ListenUDP("udp4", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
		require.NoError(t, err)
		defer rx.Close()
		to := rx.LocalAddr().(*net.UDPAddr).AddrPort()
		pc := listenPacket(t, l, "udp4", "127.0.0.1:0", newPktHandler(),
			&packet.Options{AsyncWriteLimit: 10000})
		const want = 10000 / (200 + 64)
		msg := make([]byte, 200)
		fill := func(first int) int {
			n := 0
			for ; ; n++ {
				binary.BigEndian.PutUint32(msg, uint32(first+n))
				if err := pc.WriteTo(msg, to); err != nil {
					require.ErrorIs(t, err, engine.ErrWriteBufferFull)
					require.ErrorIs(t, err, tasks.ErrRejected)
					return n
				}
			}
		}
		receive := func(n int) {
			buf := make([]byte, 512)
			for i := range n {
				_ = rx.SetReadDeadline(time.Now().Add(30 * time.Second))
				k, err := rx.Read(buf)
				require.NoError(t, err)
				require.Equal(t, 200, k)
				require.EqualValues(t, i, binary.BigEndian.Uint32(buf), "datagrams in the order written")
			}
		}

		release, held := make(chan struct{}), make(chan error, 1)
		require.NoError(t, l.Execute(tasks.Func(func() {
			binary.BigEndian.PutUint32(msg, 0)
			held <- pc.WriteTo(msg, to)
			<-release
		})))
		require.NoError(t, <-held)
		require.Equal(t, want, fill(1), "off the loop")
		close(release)
		receive(1 + want)

		onLoop, err := engine.Submit(l, func() (int, error) { return fill(0), nil }).Await(context.Background())
		require.NoError(t, err)
		require.Equal(t, want, onLoop, "on the loop")
		receive(want)

		require.NoError(t, pc.WriteTo(msg[:1], to), "room again once sent")
		receive(0)
	})
}

// TestPacketAsyncLoadUnixgram: 8 goroutines write 2 000 datagrams each
// through a connected unixgram socket (which the receiver slows down:
// the kernel's queue of 10 datagrams fills and the sender waits for
// writability), retrying when the socket is full: every accepted datagram
// arrives, each goroutine's in order, and none is lost.
func TestPacketAsyncLoadUnixgram(t *testing.T) {
	testenv.ForEach(t, func(t *testing.T, c testenv.Combo) {
		testenv.CheckLeaks(t)
		l := newLoop(t, c)
		const writers = 8
		per := scale(2000, 300)
		var next [writers]uint32
		var bad atomic.Value
		done := make(chan struct{})
		var total atomic.Int64
		rh := newPktHandler()
		rh.onPacket = func(_ *packet.Conn, b []byte, _ netip.AddrPort) {
			w, seq := b[0], binary.BigEndian.Uint32(b[1:])
			if int(w) >= writers || seq != next[w] || len(b) != 5+int(seq%300) {
				bad.CompareAndSwap(nil, fmt.Sprintf("writer %d: datagram %d (%d bytes), want %d", w, seq, len(b), next[w]))
			}
			next[w]++
			if total.Add(1) == int64(writers*per) {
				close(done)
			}
		}
		addr := fmt.Sprintf("@ringloop-test-load-%d-%d", os.Getpid(), rand.Int64())
		listenPacket(t, newLoop(t, c), "unixgram", addr, rh)
		sh := newPktHandler()
		pc, err := packet.Dial(l, "unixgram", addr, sh, &packet.Options{AsyncWriteLimit: 64 << 10})
		require.NoError(t, err)
		defer pc.Close()
		var full atomic.Int64
		var wg sync.WaitGroup
		for w := range writers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				buf := make([]byte, 5+300)
				for seq := range per {
					b := buf[:5+seq%300]
					b[0] = byte(w)
					binary.BigEndian.PutUint32(b[1:], uint32(seq))
					for {
						err := pc.WriteTo(b, netip.AddrPort{})
						if err == nil {
							break
						}
						if !errors.Is(err, engine.ErrWriteBufferFull) {
							bad.CompareAndSwap(nil, err.Error())
							return
						}
						full.Add(1)
						time.Sleep(100 * time.Microsecond) // back off, as a producer told to slow down does
					}
				}
			}()
		}
		wg.Wait()
		select {
		case <-done:
		case <-time.After(60 * time.Second):
			t.Fatalf("received %d of %d", total.Load(), writers*per)
		}
		require.Nil(t, bad.Load())
		require.Empty(t, sh.errs)
		t.Logf("%d writes found the socket full", full.Load())
	})
}

// TestPacketShutdownUDP: a loop shut down while peers keep sending
// closes its socket (OnPacketClose: ErrShutdown) and terminates; writes
// after that fail with net.ErrClosed, and nothing leaks.
func TestPacketShutdownUDP(t *testing.T) {
	testenv.ForEach(t, func(t *testing.T, c testenv.Combo) {
		testenv.CheckLeaks(t)
		l, err := engine.New(c.Options()...)
		require.NoError(t, err)
		h := newPktHandler()
		pc, err := packet.Listen(l, "udp4", "127.0.0.1:0", h, nil)
		require.NoError(t, err)
		stop := make(chan struct{})
		var wg sync.WaitGroup
		var sent atomic.Int64
		for range 4 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				conn, err := net.DialUDP("udp4", nil, pc.LocalAddr().(*net.UDPAddr))
				if err != nil {
					return
				}
				defer conn.Close()
				msg := make([]byte, 100)
				for {
					select {
					case <-stop:
						return
					default:
					}
					if _, err := conn.Write(msg); err == nil {
						sent.Add(1)
					}
					if sent.Load()%16 == 0 {
						time.Sleep(50 * time.Microsecond) // let the echoes drain now and then
					}
				}
			}()
		}
		testenv.Eventually(t, 30*time.Second, "datagrams echoed", func() bool { return h.got.Load() > 100 })
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		require.NoError(t, l.Shutdown(ctx))
		require.ErrorIs(t, h.waitClosed(t), engine.ErrShutdown)
		close(stop)
		wg.Wait()
		require.ErrorIs(t, pc.WriteTo([]byte("x"), netip.MustParseAddrPort("127.0.0.1:9")), net.ErrClosed)
		require.ErrorIs(t, pc.Close(), net.ErrClosed)
		_, err = packet.Listen(l, "udp4", "127.0.0.1:0", h, nil)
		require.ErrorIs(t, err, engine.ErrShutdown)
	})
}

// TestPacketPauseUDP: while paused the socket receives nothing; what came
// meanwhile arrives after ResumeRead, in order (called off the loop).
func TestPacketPauseUDP(t *testing.T) {
	testenv.ForEach(t, func(t *testing.T, c testenv.Combo) {
		testenv.CheckLeaks(t)
		l := newLoop(t, c)
		h := newPktHandler()
		got := make(chan byte, 16)
		h.onPacket = func(_ *packet.Conn, b []byte, _ netip.AddrPort) { got <- b[0] }
		pc := listenPacket(t, l, "udp4", "127.0.0.1:0", h)
		peer, err := net.DialUDP("udp4", nil, pc.LocalAddr().(*net.UDPAddr))
		require.NoError(t, err)
		defer peer.Close()
		pc.PauseRead()
		// A loop round trip: the pause (queued before it) has been applied.
		_, err = engine.Submit(l, func() (struct{}, error) { return struct{}{}, nil }).Await(context.Background())
		require.NoError(t, err)
		for i := range 5 {
			_, err := peer.Write([]byte{byte(i)})
			require.NoError(t, err)
		}
		_, err = engine.Submit(l, func() (struct{}, error) { return struct{}{}, nil }).Await(context.Background())
		require.NoError(t, err)
		require.Empty(t, got, "delivered while paused")
		pc.ResumeRead()
		for i := range 5 {
			select {
			case b := <-got:
				require.EqualValues(t, i, b)
			case <-time.After(30 * time.Second):
				t.Fatal("nothing delivered after ResumeRead")
			}
		}
	})
}

// TestPacketInfoUDP: with ReceiveInfo a datagram's destination address,
// interface and TOS byte reach Info, and Reply answers from that address;
// TOS and HopLimit set what the socket sends.
func TestPacketInfoUDP(t *testing.T) {
	lo := loopbackInterface(t)
	testenv.ForEach(t, func(t *testing.T, c testenv.Combo) {
		testenv.CheckLeaks(t)
		l := newLoop(t, c)
		for _, n := range udpNets() {
			infos := make(chan packet.Info, 1)
			h := newPktHandler()
			h.onPacket = func(pc *packet.Conn, b []byte, _ netip.AddrPort) {
				infos <- pc.Info()
				h.check(pc.Reply(b))
			}
			srv := listenPacket(t, l, n[0], n[1], h, &packet.Options{ReceiveInfo: true})
			ch := newPktHandler()
			echoed := make(chan packet.Info, 1)
			ch.onPacket = func(pc *packet.Conn, b []byte, _ netip.AddrPort) { echoed <- pc.Info() }
			cl, err := packet.Dial(l, n[0], srv.LocalAddr().String(), ch, &packet.Options{
				TOS: 0x28, HopLimit: 9, ReceiveInfo: true})
			require.NoError(t, err)
			require.NoError(t, cl.WriteTo([]byte("info"), netip.AddrPort{}))
			var pi packet.Info
			select {
			case pi = <-infos:
			case <-time.After(30 * time.Second):
				t.Fatal("no datagram")
			}
			require.Equal(t, srv.LocalAddr().(*net.UDPAddr).AddrPort().Addr(), pi.Local)
			require.Equal(t, lo.Index, pi.IfIndex)
			require.EqualValues(t, 0x28, pi.TOS)
			select {
			case back := <-echoed:
				require.Equal(t, cl.LocalAddr().(*net.UDPAddr).AddrPort().Addr(), back.Local)
			case <-time.After(30 * time.Second):
				t.Fatal("Reply not received")
			}
			require.Equal(t, packet.Info{}, srv.Info(), "outside OnPacket")
			require.Nil(t, srv.SourceAddr(), "outside OnPacket")
			require.Error(t, srv.Reply([]byte("x")), "outside OnPacket")
			require.NoError(t, cl.Close())
		}
	})
}

func loopbackInterface(t *testing.T) *net.Interface {
	t.Helper()
	ifs, err := net.Interfaces()
	require.NoError(t, err)
	for _, ifi := range ifs {
		if ifi.Flags&net.FlagLoopback != 0 {
			return &ifi
		}
	}
	t.Fatal("no loopback interface")
	return nil
}

// TestPacketPanicUDP: a panic in OnPacket closes that socket, and
// OnPacketClose gets an error matching ErrPanicked; the loop serves on.
func TestPacketPanicUDP(t *testing.T) {
	testenv.ForEachBackend(t, func(t *testing.T, c testenv.Combo) {
		testenv.CheckLeaks(t)
		l := newLoop(t, c, engine.WithLogger(discardLogger()))
		h := newPktHandler()
		h.onPacket = func(*packet.Conn, []byte, netip.AddrPort) { panic("boom") }
		pc, err := packet.Listen(l, "udp4", "127.0.0.1:0", h, nil)
		require.NoError(t, err)
		peer, err := net.DialUDP("udp4", nil, pc.LocalAddr().(*net.UDPAddr))
		require.NoError(t, err)
		defer peer.Close()
		_, err = peer.Write([]byte("x"))
		require.NoError(t, err)
		require.ErrorIs(t, h.waitClosed(t), tasks.ErrPanicked)
		echo := listenPacket(t, l, "udp4", "127.0.0.1:0", newPktHandler())
		echoRounds(t, "udp4", echo.LocalAddr(), 1, 2)
	})
}

// TestPacketArgsUDP: what Listen, Dial and Options
// refuse.
func TestPacketArgsUDP(t *testing.T) {
	l, err := engine.New()
	require.NoError(t, err)
	defer l.Close()
	h := newPktHandler()
	_, err = packet.Listen(l, "udp4", "127.0.0.1:0", nil, nil)
	require.Error(t, err)
	for _, bad := range [][2]string{{"tcp", "127.0.0.1:0"}, {"udp4", "[::1]:0"}, {"udp6", "127.0.0.1:0"}, {"udp", "nonsense"}} {
		_, err = packet.Listen(l, bad[0], bad[1], h, nil)
		var oe *net.OpError
		require.ErrorAs(t, err, &oe, "%v", bad)
		require.Equal(t, "listen", oe.Op)
	}
	for _, o := range []packet.Options{{MaxSize: -1}, {Batch: 2000}, {TOS: 256}, {HopLimit: -1}, {RecvBuffer: -1}, {AsyncWriteLimit: -1}} {
		_, err = packet.Listen(l, "udp4", "127.0.0.1:0", h, &o)
		require.Error(t, err, "%+v", o)
	}
	_, err = packet.Listen(l, "udp4", "127.0.0.1:0", h, &packet.Options{MulticastInterface: "no-such-if"})
	require.Error(t, err)
	_, err = packet.Dial(l, "unixgram", t.TempDir()+"/nobody", h, nil)
	require.ErrorIs(t, err, syscall.ENOENT)
	pc := listenPacket(t, l, "udp4", "127.0.0.1:0", h)
	require.Error(t, pc.JoinGroup(nil, netip.MustParseAddr("127.0.0.1")), "not a group")
	require.Error(t, pc.JoinGroup(nil, netip.MustParseAddr("ff02::1")), "an IPv6 group on an IPv4 socket")
}

// TestPacketEchoAllocsUDP: a steady-state echo round trip (recvmmsg →
// OnPacket → WriteTo → sendmmsg at the iteration's end, and the loop's
// waits between) allocates nothing in the whole process, on every backend,
// profile and threading mode.
func TestPacketEchoAllocsUDP(t *testing.T) {
	echoAllocs(t, func(h *pktHandler) {})
}

// echoAllocs counts the allocations of a UDP echo round trip in steady
// state on every combo, with the handler set by prep and the socket opened
// with opts; the answer is none.
func echoAllocs(t *testing.T, prep func(h *pktHandler), o ...*packet.Options) {
	if raceEnabled {
		t.Skip("the race detector allocates")
	}
	testenv.ForEach(t, func(t *testing.T, c testenv.Combo) {
		l := newLoop(t, c)
		h := newPktHandler()
		prep(h)
		pc := listenPacket(t, l, "udp4", "127.0.0.1:0", h, o...)
		peer, err := net.DialUDP("udp4", nil, pc.LocalAddr().(*net.UDPAddr))
		require.NoError(t, err)
		defer peer.Close()
		msg, buf := make([]byte, 128), make([]byte, 256)
		round := func() {
			if _, err := peer.Write(msg); err != nil {
				t.Fatal(err)
			}
			if n, err := peer.Read(buf); err != nil || n != len(msg) {
				t.Fatalf("echo: %d bytes, %v", n, err)
			}
		}
		for range 200 { // warm up: buffers reach their steady size
			round()
		}
		require.Zero(t, testing.AllocsPerRun(1000, round), "allocations per round trip")
		require.Empty(t, h.errs)
	})
}

// TestPacketWriteToPeersUDP: WriteTo on the loop keeps its last
// destination's sockaddr encoded; each datagram still reaches the peer it
// names when the destination changes (another port, another address form,
// back again), and a destination the socket refuses fails alone, leaving
// the next write to the last good one intact.
func TestPacketWriteToPeersUDP(t *testing.T) {
	testenv.ForEach(t, func(t *testing.T, c testenv.Combo) {
		l := newLoop(t, c)
		for _, n := range udpNets() {
			h := newPktHandler()
			pc := listenPacket(t, l, n[0], n[1], h)
			server := pc.LocalAddr().(*net.UDPAddr)
			a, b := burstPeer(t, n[0], server), burstPeer(t, n[0], server)
			pa := a.LocalAddr().(*net.UDPAddr).AddrPort()
			pb := b.LocalAddr().(*net.UDPAddr).AddrPort()
			bad := netip.MustParseAddrPort("[2001:db8::1]:9")
			if n[0] == "udp6" {
				// A zone no interface has: refused once the rest of the
				// sockaddr is written.
				bad = netip.MustParseAddrPort("[fe80::1%no-such-if]:9")
			}
			errs := onLoop(t, l, func() []error {
				return []error{
					pc.WriteTo([]byte("a0"), pa),
					pc.WriteTo([]byte("x"), bad),
					pc.WriteTo([]byte("a1"), pa),
					pc.WriteTo([]byte("b0"), pb),
					pc.WriteTo([]byte("x"), netip.AddrPort{}), // not connected
					pc.WriteTo([]byte("b1"), pb),
					pc.WriteTo([]byte("a2"), pa),
				}
			})
			require.NoError(t, errs[0])
			require.Error(t, errs[1], "a destination the socket cannot name")
			require.NoError(t, errs[2])
			require.NoError(t, errs[3])
			require.Error(t, errs[4], "no destination on an unconnected socket")
			require.NoError(t, errs[5])
			require.NoError(t, errs[6])
			for peer, want := range map[*net.UDPConn][]string{a: {"a0", "a1", "a2"}, b: {"b0", "b1"}} {
				buf := make([]byte, 16)
				require.NoError(t, peer.SetReadDeadline(time.Now().Add(10*time.Second)))
				for _, w := range want {
					k, err := peer.Read(buf)
					require.NoError(t, err)
					require.Equal(t, w, string(buf[:k]))
				}
			}
			require.Empty(t, h.errs)
		}
	})
}

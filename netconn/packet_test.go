package netconn_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ringloop/ringloop/engine"
	"github.com/ringloop/ringloop/internal/testenv"
	"github.com/ringloop/ringloop/netconn"
	"github.com/ringloop/ringloop/packet"
	"github.com/ringloop/ringloop/tasks"
)

var _ net.PacketConn = (*netconn.PacketConn)(nil)

// udpNets are the loopback UDP networks: IPv4, and IPv6 where the machine
// has ::1.
func udpNets() [][2]string {
	nets := [][2]string{{"udp4", "127.0.0.1:0"}}
	if probe, err := net.ListenPacket("udp6", "[::1]:0"); err == nil {
		probe.Close()
		nets = append(nets, [2]string{"udp6", "[::1]:0"})
	}
	return nets
}

func listenPacket(t *testing.T, loops engine.Loops, network, addr string, opts ...netconn.Option) *netconn.PacketConn {
	t.Helper()
	pc, err := netconn.ListenPacket(loops, network, addr, opts...)
	require.NoError(t, err)
	t.Cleanup(func() { _ = pc.Close() })
	return pc
}

// serveEcho answers every datagram from a goroutine, as net code does,
// until the socket is closed.
func serveEcho(pc net.PacketConn) (done chan error) {
	done = make(chan error, 1)
	go func() {
		buf := make([]byte, 64<<10)
		for {
			n, addr, err := pc.ReadFrom(buf)
			if err != nil {
				done <- err
				return
			}
			if _, err := pc.WriteTo(buf[:n], addr); err != nil {
				done <- err
				return
			}
		}
	}()
	return done
}

// echoPeers runs peers client sockets, each sending rounds datagrams of
// random sizes one at a time and checking each echo byte for byte.
func echoPeers(t *testing.T, network string, server net.Addr, peers, rounds int) {
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
		laddr := &net.UnixAddr{Name: fmt.Sprintf("@ringloop-netconn-peer-%d-%d-%d", os.Getpid(), seed, rand.Int64()), Net: "unixgram"}
		c, err = net.DialUnix("unixgram", laddr, server.(*net.UnixAddr))
	} else {
		c, err = net.DialUDP(network, nil, server.(*net.UDPAddr))
	}
	if err != nil {
		return err
	}
	defer c.Close()
	rng := rand.New(rand.NewPCG(uint64(seed), 11))
	buf := make([]byte, 2048)
	for i := range rounds {
		msg := make([]byte, rng.IntN(1401))
		for j := range msg {
			msg[j] = byte(rng.Uint32())
		}
		if _, err := c.Write(msg); err != nil {
			return err
		}
		_ = c.SetReadDeadline(time.Now().Add(30 * time.Second))
		n, err := c.Read(buf)
		if err != nil {
			return fmt.Errorf("peer %d, datagram %d: %w", seed, i, err)
		}
		if !bytes.Equal(buf[:n], msg) {
			return fmt.Errorf("peer %d, datagram %d: echoed %d bytes, want the %d sent", seed, i, n, len(msg))
		}
	}
	return nil
}

// TestListenPacketUDP: a net.PacketConn on the loop, served by a goroutine
// with ReadFrom and WriteTo as net code serves a net.UDPConn, echoes 16
// client sockets byte for byte over IPv4 and IPv6, on one loop and on a
// group; Close ends the serving goroutine's ReadFrom with net.ErrClosed.
func TestListenPacketUDP(t *testing.T) {
	forEach(t, func(t *testing.T, loops engine.Loops) {
		for _, n := range udpNets() {
			pc := listenPacket(t, loops, n[0], n[1])
			require.IsType(t, &net.UDPAddr{}, pc.LocalAddr())
			done := serveEcho(pc)
			echoPeers(t, n[0], pc.LocalAddr(), 16, 10)
			require.NoError(t, pc.Close())
			require.ErrorIs(t, <-done, net.ErrClosed)
			require.ErrorIs(t, pc.Close(), net.ErrClosed)
		}
	})
}

// TestPacketUnixgramNetconn: on a unixgram socket ReadFrom names the
// sender (*net.UnixAddr) and WriteTo answers it.
func TestPacketUnixgramNetconn(t *testing.T) {
	testenv.ForEachBackend(t, func(t *testing.T, c testenv.Combo) {
		testenv.CheckLeaks(t)
		pc := listenPacket(t, newLoop(t, c), "unixgram", t.TempDir()+"/echo.sock")
		done := serveEcho(pc)
		echoPeers(t, "unixgram", pc.LocalAddr(), 4, 10)
		require.NoError(t, pc.Close())
		require.ErrorIs(t, <-done, net.ErrClosed)
	})
}

// TestPacketDeadlinesUDP: a passed read deadline fails ReadFrom with
// os.ErrDeadlineExceeded (a net.Error whose Timeout is true), also one
// already waiting; clearing it reads again; Close wakes a waiting
// ReadFrom.
func TestPacketDeadlinesUDP(t *testing.T) {
	testenv.ForEachBackend(t, func(t *testing.T, c testenv.Combo) {
		testenv.CheckLeaks(t)
		pc := listenPacket(t, newLoop(t, c), "udp4", "127.0.0.1:0")
		buf := make([]byte, 64)
		require.NoError(t, pc.SetReadDeadline(time.Now().Add(-time.Second)))
		_, _, err := pc.ReadFrom(buf)
		require.ErrorIs(t, err, os.ErrDeadlineExceeded)
		var ne net.Error
		require.ErrorAs(t, err, &ne)
		require.True(t, ne.Timeout())

		require.NoError(t, pc.SetReadDeadline(time.Time{}))
		waiting := make(chan error, 1)
		go func() {
			_, _, err := pc.ReadFrom(buf)
			waiting <- err
		}()
		require.NoError(t, pc.SetReadDeadline(time.Now().Add(50*time.Millisecond)))
		select {
		case err := <-waiting:
			require.ErrorIs(t, err, os.ErrDeadlineExceeded)
		case <-time.After(30 * time.Second):
			t.Fatal("a waiting ReadFrom outlived its deadline")
		}

		require.NoError(t, pc.SetDeadline(time.Time{}))
		peer, err := net.DialUDP("udp4", nil, pc.LocalAddr().(*net.UDPAddr))
		require.NoError(t, err)
		defer peer.Close()
		_, err = peer.Write([]byte("after"))
		require.NoError(t, err)
		n, addr, err := pc.ReadFrom(buf)
		require.NoError(t, err)
		require.Equal(t, "after", string(buf[:n]))
		require.Equal(t, peer.LocalAddr().String(), addr.String())

		go func() {
			_, _, err := pc.ReadFrom(buf)
			waiting <- err
		}()
		require.NoError(t, pc.Close())
		require.ErrorIs(t, <-waiting, net.ErrClosed)
		_, err = pc.WriteTo([]byte("x"), addr)
		require.ErrorIs(t, err, net.ErrClosed)
	})
}

// TestPacketWriteWaitsUDP: WriteTo waits while the socket holds its async
// write limit unsent (here: its loop busy, holding a datagram of its own,
// so writes queue behind it rather than send directly), fails at the write
// deadline, and goes on once the loop has taken the queue; nothing
// accepted is lost, nothing overtakes.
func TestPacketWriteWaitsUDP(t *testing.T) {
	testenv.ForEachBackend(t, func(t *testing.T, c testenv.Combo) {
		testenv.CheckLeaks(t)
		l := newLoop(t, c).(*engine.Loop)
		rx, err := net.ListenUDP("udp4", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
		require.NoError(t, err)
		defer rx.Close()
		pc := listenPacket(t, l, "udp4", "127.0.0.1:0",
			netconn.WithPacketOptions(packet.Options{AsyncWriteLimit: 4096}))
		block, started := make(chan struct{}), make(chan struct{})
		msg := make([]byte, 100)
		require.NoError(t, l.Execute(tasks.Func(func() {
			if err := pc.Engine().WriteTo(msg, rx.LocalAddr().(*net.UDPAddr).AddrPort()); err != nil {
				panic(err)
			}
			close(started)
			<-block
		})))
		<-started
		sent := 1 // the loop's
		require.NoError(t, pc.SetWriteDeadline(time.Now().Add(100*time.Millisecond)))
		for {
			binary.BigEndian.PutUint32(msg, uint32(sent))
			if _, err := pc.WriteTo(msg, rx.LocalAddr()); err != nil {
				require.ErrorIs(t, err, os.ErrDeadlineExceeded)
				break
			}
			sent++
		}
		require.Equal(t, 1+4096/(100+64), sent, "accepted before the limit")
		require.NoError(t, pc.SetWriteDeadline(time.Time{}))
		wrote := make(chan error, 1)
		go func() {
			binary.BigEndian.PutUint32(msg, uint32(sent))
			_, err := pc.WriteTo(msg, rx.LocalAddr())
			wrote <- err
		}()
		close(block)
		require.NoError(t, <-wrote)
		buf := make([]byte, 200)
		for i := range sent + 1 {
			_ = rx.SetReadDeadline(time.Now().Add(30 * time.Second))
			n, err := rx.Read(buf)
			require.NoError(t, err)
			require.Equal(t, 100, n)
			require.EqualValues(t, i, binary.BigEndian.Uint32(buf))
		}
	})
}

// TestPacketBackpressureUnixgram: a reader slower than its peer holds at
// most its read limit: the loop stops receiving, the kernel makes the
// sender wait (a unixgram socket loses nothing), and all 3 000 datagrams
// arrive in order once the reader catches up.
func TestPacketBackpressureUnixgram(t *testing.T) {
	forEach(t, func(t *testing.T, loops engine.Loops) {
		addr := fmt.Sprintf("@ringloop-netconn-bp-%d-%d", os.Getpid(), rand.Int64())
		pc := listenPacket(t, loops, "unixgram", addr, netconn.WithLimits(netconn.Limits{Read: 4096}))
		peer, err := net.DialUnix("unixgram", nil, pc.LocalAddr().(*net.UnixAddr))
		require.NoError(t, err)
		defer peer.Close()
		const total = 3000
		sent := make(chan error, 1)
		go func() {
			msg := make([]byte, 200)
			for i := range total {
				binary.BigEndian.PutUint32(msg, uint32(i))
				_ = peer.SetWriteDeadline(time.Now().Add(30 * time.Second))
				if _, err := peer.Write(msg); err != nil {
					sent <- err
					return
				}
			}
			sent <- nil
		}()
		buf := make([]byte, 512)
		for i := range total {
			require.NoError(t, pc.SetReadDeadline(time.Now().Add(30*time.Second)))
			n, _, err := pc.ReadFrom(buf)
			require.NoError(t, err)
			require.Equal(t, 200, n)
			require.EqualValues(t, i, binary.BigEndian.Uint32(buf))
		}
		require.NoError(t, <-sent)
	})
}

// TestPacketShutdownNetconn: when the loop shuts down under a socket,
// ReadFrom and WriteTo fail with its reason instead of waiting.
func TestPacketShutdownNetconn(t *testing.T) {
	testenv.ForEachBackend(t, func(t *testing.T, c testenv.Combo) {
		testenv.CheckLeaks(t)
		l, err := engine.New(c.Options()...)
		require.NoError(t, err)
		pc, err := netconn.ListenPacket(l, "udp4", "127.0.0.1:0")
		require.NoError(t, err)
		reading := make(chan error, 1)
		go func() {
			_, _, err := pc.ReadFrom(make([]byte, 16))
			reading <- err
		}()
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		require.NoError(t, l.Shutdown(ctx))
		select {
		case err := <-reading:
			require.ErrorIs(t, err, engine.ErrShutdown)
		case <-time.After(30 * time.Second):
			t.Fatal("ReadFrom still waits after the loop shut down")
		}
		_, err = pc.WriteTo([]byte("x"), pc.LocalAddr())
		require.ErrorIs(t, err, engine.ErrShutdown)
		require.NoError(t, pc.Close())
	})
}

// TestPacketOptionsNetconn: WithPacketOptions reaches the socket (its
// MaxSize truncates), and WithConnOptions, whose engine options a datagram
// socket does not take, is refused rather than ignored.
func TestPacketOptionsNetconn(t *testing.T) {
	l, err := engine.New()
	require.NoError(t, err)
	defer l.Close()
	_, err = netconn.ListenPacket(l, "udp4", "127.0.0.1:0",
		netconn.WithConnOptions(engine.WithSocketOptions(engine.SocketOptions{RecvBuffer: 1 << 20})))
	var oe *net.OpError
	require.ErrorAs(t, err, &oe)
	require.Equal(t, "listen", oe.Op)
	pc, err := netconn.ListenPacket(l, "udp4", "127.0.0.1:0", netconn.WithPacketOptions(packet.Options{MaxSize: 8}))
	require.NoError(t, err)
	defer pc.Close()
	peer, err := net.DialUDP("udp4", nil, pc.LocalAddr().(*net.UDPAddr))
	require.NoError(t, err)
	defer peer.Close()
	_, err = peer.Write([]byte("longer than eight"))
	require.NoError(t, err)
	require.NoError(t, pc.SetReadDeadline(time.Now().Add(30*time.Second)))
	_, _, err = pc.ReadFrom(make([]byte, 64))
	require.ErrorIs(t, err, packet.ErrTruncated)
}

// TestPacketConcurrentReadersUDP: readers waiting at once on one socket
// read every datagram between them, each once, though only the datagram
// that finds the queue empty wakes a reader (a reader that leaves some
// wakes the next).
func TestPacketConcurrentReadersUDP(t *testing.T) {
	forEach(t, func(t *testing.T, loops engine.Loops) {
		pc := listenPacket(t, loops, "udp4", "127.0.0.1:0")
		const readers, total = 4, 400
		got := make(chan int, total)
		for range readers {
			go func() {
				buf := make([]byte, 16)
				for {
					n, _, err := pc.ReadFrom(buf)
					if err != nil {
						return
					}
					if n == 2 {
						got <- int(buf[0])<<8 | int(buf[1])
					}
				}
			}()
		}
		peer, err := net.DialUDP("udp4", nil, pc.LocalAddr().(*net.UDPAddr))
		require.NoError(t, err)
		defer peer.Close()
		seen := make([]bool, total)
		deadline := time.After(20 * time.Second)
		for i := 0; i < total; i++ {
			// One at a time when i is even (each wakes a reader from an
			// empty queue), in pairs otherwise.
			if _, err := peer.Write([]byte{byte(i >> 8), byte(i)}); err != nil {
				t.Fatal(err)
			}
			if i%2 == 1 {
				continue
			}
			select {
			case v := <-got:
				require.False(t, seen[v], "datagram %d read twice", v)
				seen[v] = true
			case <-deadline:
				t.Fatalf("datagram %d not read", i)
			}
		}
		for range total / 2 {
			select {
			case v := <-got:
				require.False(t, seen[v], "datagram %d read twice", v)
				seen[v] = true
			case <-deadline:
				t.Fatal("datagrams left unread")
			}
		}
		require.NotContains(t, seen, false)
	})
}

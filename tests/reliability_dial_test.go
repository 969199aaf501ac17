package tests

import (
	"context"
	"encoding/binary"
	"net"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/ringloop/ringloop/engine"
	"github.com/ringloop/ringloop/internal/testenv"
	"github.com/ringloop/ringloop/tasks"
)

// fakeDNS is a DNS server on loopback UDP that answers A queries with ips
// (AAAA queries with no address), each answer held until release is closed:
// a slow resolver the test controls.
type fakeDNS struct {
	pc      net.PacketConn
	ips     []net.IP
	release chan struct{}
	queries atomic.Int32
	wg      sync.WaitGroup // the server
	answers sync.WaitGroup // held answers
}

// newFakeDNS starts the server; its cleanup answers every held query and
// stops it. Start it before testenv.CheckLeaks: Go's resolver may send a
// query after the lookup was cancelled (a slow machine starts its AAAA
// goroutine late), and a server that stopped before the leak check would
// leave that query to wait out the resolver's timeout, counted as a leak.
func newFakeDNS(t *testing.T, ips ...string) *fakeDNS {
	t.Helper()
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	require.NoError(t, err)
	d := &fakeDNS{pc: pc, release: make(chan struct{})}
	for _, s := range ips {
		d.ips = append(d.ips, net.ParseIP(s).To4())
	}
	d.wg.Add(1)
	go d.serve()
	t.Cleanup(func() {
		d.open()
		d.answers.Wait() // answer every query, so no lookup waits for its timeout
		pc.Close()
		d.wg.Wait()
	})
	return d
}

var releaseOnce sync.Map

// open lets the held answers (and all later ones) go.
func (d *fakeDNS) open() {
	if _, loaded := releaseOnce.LoadOrStore(d, true); !loaded {
		close(d.release)
	}
}

// resolver returns a Go resolver that asks only this server.
func (d *fakeDNS) resolver() *net.Resolver {
	return &net.Resolver{PreferGo: true, Dial: func(ctx context.Context, _, _ string) (net.Conn, error) {
		var nd net.Dialer
		return nd.DialContext(ctx, "udp", d.pc.LocalAddr().String())
	}}
}

func (d *fakeDNS) serve() {
	defer d.wg.Done()
	buf := make([]byte, 1500)
	for {
		n, from, err := d.pc.ReadFrom(buf)
		if err != nil {
			return
		}
		q := append([]byte(nil), buf[:n]...)
		d.queries.Add(1)
		d.answers.Add(1)
		go func() {
			defer d.answers.Done()
			<-d.release
			if resp := d.answer(q); resp != nil {
				_, _ = d.pc.WriteTo(resp, from)
			}
		}()
	}
}

// answer builds the reply to query q: its question, and one A record per ip
// for an A question.
func (d *fakeDNS) answer(q []byte) []byte {
	if len(q) < 12 {
		return nil
	}
	end := 12
	for end < len(q) && q[end] != 0 {
		end += int(q[end]) + 1
	}
	end += 5 // the root label, QTYPE, QCLASS
	if end > len(q) {
		return nil
	}
	qtype := binary.BigEndian.Uint16(q[end-4:])
	var answers [][]byte
	if qtype == 1 { // A
		for _, ip := range d.ips {
			rr := []byte{0xc0, 12, 0, 1, 0, 1, 0, 0, 0, 60, 0, 4}
			answers = append(answers, append(rr, ip...))
		}
	}
	resp := append([]byte(nil), q[:end]...)
	binary.BigEndian.PutUint16(resp[2:], 0x8180) // response, recursion desired and available
	binary.BigEndian.PutUint16(resp[4:], 1)
	binary.BigEndian.PutUint16(resp[6:], uint16(len(answers)))
	binary.BigEndian.PutUint16(resp[8:], 0)
	binary.BigEndian.PutUint16(resp[10:], 0)
	for _, a := range answers {
		resp = append(resp, a...)
	}
	return resp
}

// TestDialAsyncResolvesOffTheLoop: DialAsync of a host name from the loop
// itself returns at once; the loop runs other work while the name resolves
// slowly; then each address is tried in turn (the first refuses) and the
// connection works.
func TestDialAsyncResolvesOffTheLoop(t *testing.T) {
	testenv.ForEachBackend(t, func(t *testing.T, c testenv.Combo) {
		dns := newFakeDNS(t, "127.0.0.2", "127.0.0.1") // first: it answers late queries until the leak check is done
		testenv.CheckLeaks(t)
		l := newLoop(t, c)
		ln := listenEcho(t, l)
		port := ln.Addr().(*net.TCPAddr).Port
		// 127.0.0.2 has no listener on the port: connecting there is refused.
		r := newRecorder()
		addr := net.JoinHostPort("slow.ringloop.test", strconv.Itoa(port))

		fut := make(chan tasks.Future[*engine.Conn], 1)
		require.NoError(t, l.Execute(tasks.Func(func() {
			fut <- engine.DialAsync(context.Background(), l, "tcp", addr, r, engine.WithResolver(dns.resolver()))
		})))
		// While the answer is held, the loop still runs tasks.
		testenv.Eventually(t, 10*time.Second, "the DNS query", func() bool { return dns.queries.Load() > 0 })
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_, err := engine.Submit(l, func() (struct{}, error) { return struct{}{}, nil }).Await(ctx)
		require.NoError(t, err, "the loop is blocked while the name resolves")
		dns.open()
		c0, err := (<-fut).Await(ctx)
		require.NoError(t, err)
		require.Same(t, c0, <-r.opened)
		require.Equal(t, "127.0.0.1", c0.RemoteAddr().(*net.TCPAddr).IP.String())
		require.NoError(t, c0.AsyncWrite([]byte("ping")))
		testenv.Eventually(t, 10*time.Second, "the echo", func() bool { return string(r.bytes()) == "ping" })
		require.NoError(t, c0.Close())
		require.NoError(t, waitErr(t, r.closed))
	})
}

// TestDialAsyncHonoursContextWhileResolving: cancelling the context while
// the name resolves fails the dial with the context's error, promptly.
func TestDialAsyncHonoursContextWhileResolving(t *testing.T) {
	testenv.ForEachBackend(t, func(t *testing.T, c testenv.Combo) {
		dns := newFakeDNS(t, "127.0.0.1") // first: it answers late queries until the leak check is done
		testenv.CheckLeaks(t)
		l := newLoop(t, c)
		ctx, cancel := context.WithCancel(context.Background())
		f := engine.DialAsync(ctx, l, "tcp", "held.ringloop.test:9", newRecorder(), engine.WithResolver(dns.resolver()))
		testenv.Eventually(t, 10*time.Second, "the DNS query", func() bool { return dns.queries.Load() > 0 })
		require.False(t, f.IsDone())
		cancel()
		wctx, wcancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer wcancel()
		_, err := f.Await(wctx)
		require.ErrorIs(t, err, context.Canceled)
		dns.open() // the resolver's read of the held answer ends now, not at its 5 s timeout
	})
}

// TestDialAsyncTriesEveryAddress: when every address refuses, the dial
// fails with the last one's error.
func TestDialAsyncTriesEveryAddress(t *testing.T) {
	testenv.ForEachBackend(t, func(t *testing.T, c testenv.Combo) {
		dns := newFakeDNS(t, "127.0.0.2", "127.0.0.3") // first: it answers late queries until the leak check is done
		testenv.CheckLeaks(t)
		l := newLoop(t, c)
		// A port nobody listens on: bind one, note it, close it.
		probe, err := net.Listen("tcp", "127.0.0.1:0")
		require.NoError(t, err)
		port := probe.Addr().(*net.TCPAddr).Port
		require.NoError(t, probe.Close())
		dns.open()
		_, err = engine.Dial(context.Background(), l, "tcp", net.JoinHostPort("refused.ringloop.test", strconv.Itoa(port)),
			newRecorder(), engine.WithResolver(dns.resolver()))
		require.ErrorIs(t, err, unix.ECONNREFUSED)
		require.ErrorContains(t, err, "127.0.0.3", "the last address was tried")
	})
}

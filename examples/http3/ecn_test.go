package main

import (
	"bytes"
	"context"
	"crypto/tls"
	"io"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/quic-go/quic-go"
	"github.com/quic-go/quic-go/qlog"
	"github.com/quic-go/quic-go/qlogwriter"

	"github.com/ringloop/ringloop/internal/testenv"
	"github.com/ringloop/ringloop/netconn"
)

// TestECNAndLocalAddress: quic-go serving on ringloop's PacketConn, bound
// to the wildcard address, reads the ECN marks and the local address of
// what it receives. The client, on a net.UDPConn, marks its packets ECT(0)
// and finds ECN capable only if the server's ACKs count the marks (it
// gives ECN up otherwise); the server tags packets received with their
// mark; and the server's connection has 127.0.0.1 as its local address,
// which quic-go takes from the pktinfo of the first packet (0.0.0.0
// without it).
func TestECNAndLocalAddress(t *testing.T) {
	pki := testenv.NewPKI(t)
	leaf := pki.Leaf(t, "localhost", "localhost", "127.0.0.1")
	testenv.ForEachBackend(t, func(t *testing.T, c testenv.Combo) {
		testenv.CheckLeaks(t)
		loop := testenv.NewLoop(t, c)
		pc, err := netconn.ListenPacket(loop, "udp4", "0.0.0.0:0")
		if err != nil {
			t.Fatal(err)
		}
		defer pc.Close()
		var server, client ecnTrace
		srv := &quic.Transport{Conn: pc}
		defer srv.Close()
		ln, err := srv.Listen(&tls.Config{Certificates: []tls.Certificate{leaf}, NextProtos: []string{"ecn"}},
			&quic.Config{Tracer: server.tracer})
		if err != nil {
			t.Fatal(err)
		}
		served := make(chan error, 1)
		var local net.Addr
		go func() {
			var err error
			local, err = echoOne(ln)
			served <- err
		}()

		udp, err := net.ListenUDP("udp4", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
		if err != nil {
			t.Fatal(err)
		}
		defer udp.Close()
		cli := &quic.Transport{Conn: udp}
		defer cli.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		to := &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1), Port: pc.LocalAddr().(*net.UDPAddr).Port}
		conn, err := cli.Dial(ctx, to, &tls.Config{RootCAs: pki.Pool, ServerName: "localhost", NextProtos: []string{"ecn"}},
			&quic.Config{Tracer: client.tracer})
		if err != nil {
			t.Fatal(err)
		}
		defer conn.CloseWithError(0, "")
		st, err := conn.OpenStreamSync(ctx)
		if err != nil {
			t.Fatal(err)
		}
		msg := bytes.Repeat([]byte("ecn!"), 64<<10)
		go func() {
			st.Write(msg)
			st.Close()
		}()
		got, err := io.ReadAll(st)
		if err != nil || !bytes.Equal(got, msg) {
			t.Fatalf("echo: %d of %d bytes, %v", len(got), len(msg), err)
		}
		if err := <-served; err != nil {
			t.Fatal(err)
		}
		if ip := local.(*net.UDPAddr).IP; !ip.Equal(net.IPv4(127, 0, 0, 1)) {
			t.Fatalf("the server's connection has local address %v, not 127.0.0.1", ip)
		}
		select {
		case <-client.capable:
		case <-client.failed:
			t.Fatalf("the client's ECN validation failed: %v", client.states())
		case <-ctx.Done():
			t.Fatalf("the client's ECN validation: %v, not capable", client.states())
		}
		if n := server.ect0(); n == 0 {
			t.Fatal("the server read no ECT(0) mark")
		}
	})
}

// echoOne accepts one connection, echoes its first stream and returns the
// connection's local address.
func echoOne(ln *quic.Listener) (net.Addr, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn, err := ln.Accept(ctx)
	if err != nil {
		return nil, err
	}
	st, err := conn.AcceptStream(ctx)
	if err != nil {
		return nil, err
	}
	if _, err := io.Copy(st, st); err != nil {
		return nil, err
	}
	return conn.LocalAddr(), st.Close()
}

// ecnTrace records a connection's ECN states and the marks of what it
// receives (a qlog trace with one producer per connection).
type ecnTrace struct {
	mu       sync.Mutex
	seen     []qlog.ECNState
	received int
	capable  chan struct{}
	failed   chan struct{}
	once     sync.Once
}

func (e *ecnTrace) tracer(context.Context, bool, quic.ConnectionID) qlogwriter.Trace {
	e.once.Do(func() { e.capable, e.failed = make(chan struct{}), make(chan struct{}) })
	return e
}

func (e *ecnTrace) AddProducer() qlogwriter.Recorder { return e }
func (e *ecnTrace) Close() error                     { return nil }

func (e *ecnTrace) RecordEvent(ev qlogwriter.Event) {
	e.mu.Lock()
	defer e.mu.Unlock()
	switch ev := ev.(type) {
	case qlog.ECNStateUpdated:
		e.seen = append(e.seen, ev.State)
		switch ev.State {
		case qlog.ECNStateCapable:
			close(e.capable)
		case qlog.ECNStateFailed:
			close(e.failed)
		}
	case qlog.PacketReceived:
		if ev.ECN == qlog.ECT0 {
			e.received++
		}
	}
}

func (e *ecnTrace) states() []qlog.ECNState {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]qlog.ECNState(nil), e.seen...)
}

func (e *ecnTrace) ect0() int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.received
}

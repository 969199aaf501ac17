// Command benchclient is the load generator the runner starts in its own
// process, pinned to its own core. It prints one line of JSON with what it
// measured.
//
//	benchclient echo -addr 127.0.0.1:PORT -conns 64 -size 128 -duration 2s [-verify] [-tls]
//	benchclient http -addr 127.0.0.1:PORT -conns 50 -rate 20000 -duration 2s
//	benchclient handshake -addr 127.0.0.1:PORT -conns 16 -size 32 -duration 2s
//	benchclient idle -addr 127.0.0.1:PORT -conns 10000 [-http|-tls|-ws|-h2] [-warm 10000]
//	benchclient echo -ws ...   (the echo client over WebSocket, path /echo)
//	benchclient broadcast -addr 127.0.0.1:PORT -conns 10000 -size 128 -window 16 -duration 2s
//	benchclient udp -addr 127.0.0.1:PORT -conns 64 -inflight 8 -size 64 -duration 2s [-verify]
//
// udp is the UDP echo client: -conns sockets, each keeping -inflight
// datagrams out at the server; datagrams unanswered for 200 ms are counted
// lost and replaced (the last ones, after the window, get 1 s).
//
// handshake runs -conns dialers, each making connections that complete a
// full TLS 1.3 handshake, echo -size bytes and close.
//
// idle first makes -warm exchanges on one connection (over TLS after 100
// full handshakes) and prints "warm"; on a line from stdin it opens the
// connections (one exchange each, after a full handshake over TLS), prints
// "ready N" and holds them until stdin closes. -h2 makes each exchange a
// GET over HTTP/2 on a TLS connection that negotiated h2 by ALPN.
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/ringloop/ringloop/bench/client"
)

func main() {
	if len(os.Args) < 2 {
		fail(fmt.Errorf("usage: benchclient echo|http|handshake|idle|broadcast|udp [flags]"))
	}
	mode := os.Args[1]
	fs := flag.NewFlagSet(mode, flag.ExitOnError)
	addr := fs.String("addr", "", "server address")
	conns := fs.Int("conns", 64, "connections")
	size := fs.Int("size", 128, "echo message size")
	verify := fs.Bool("verify", false, "echo: vary every message and check all bytes (SHA-256); udp: check every echo byte for byte")
	useTLS := fs.Bool("tls", false, "echo: TLS 1.3 on every connection (certificate unchecked), handshakes before the clock starts; idle: TLS 1.3, a full handshake per connection")
	rate := fs.Float64("rate", 10000, "http: requests per second, all connections")
	warmup := fs.Duration("warmup", 250*time.Millisecond, "warm-up before measuring")
	duration := fs.Duration("duration", 2*time.Second, "measured time")
	http := fs.Bool("http", false, "idle: make the one exchange an HTTP request")
	ws := fs.Bool("ws", false, "echo, idle: speak WebSocket (path /echo)")
	h2 := fs.Bool("h2", false, "idle: TLS 1.3 negotiating h2, a full handshake and one GET over HTTP/2 per connection")
	inflight := fs.Int("inflight", 8, "udp: datagrams out at the server per socket")
	window := fs.Int("window", 16, "broadcast: messages in flight (the next waits until every member has the one this far back)")
	warm := fs.Int("warm", 10000, "idle: exchanges on one connection before the idle ones")
	_ = fs.Parse(os.Args[2:])

	ctx, cancel := context.WithTimeout(context.Background(), *warmup+*duration+2*time.Minute)
	defer cancel()
	var res any
	var err error
	switch mode {
	case "echo":
		res, err = client.RunEcho(ctx, client.EchoConfig{Addr: *addr, Conns: *conns, Size: *size, Warmup: *warmup, Duration: *duration, Verify: *verify, TLS: *useTLS, WebSocket: *ws})
	case "udp":
		res, err = client.RunUDPEcho(ctx, client.UDPEchoConfig{Addr: *addr, Sockets: *conns, InFlight: *inflight, Size: *size, Warmup: *warmup, Duration: *duration, Verify: *verify})
	case "broadcast":
		res, err = client.RunBroadcast(ctx, client.BroadcastConfig{Addr: *addr, Path: "/bcast", Conns: *conns, Size: *size, Window: *window, Warmup: *warmup, Duration: *duration})
	case "http":
		res, err = client.RunOpenLoop(ctx, client.OpenLoopConfig{Addr: *addr, Conns: *conns, Rate: *rate, Warmup: *warmup, Duration: *duration})
	case "handshake":
		res, err = client.RunHandshakes(ctx, client.HandshakeConfig{Addr: *addr, Dialers: *conns, Size: *size, Warmup: *warmup, Duration: *duration})
	case "idle":
		proto := client.ProtoEcho
		switch {
		case btoi(*http)+btoi(*useTLS)+btoi(*ws)+btoi(*h2) > 1:
			err = fmt.Errorf("idle: one of -http, -tls, -ws and -h2")
		case *http:
			proto = client.ProtoHTTP
		case *useTLS:
			proto = client.ProtoTLSEcho
		case *ws:
			proto = client.ProtoWebSocket
		case *h2:
			proto = client.ProtoH2
		}
		if err != nil {
			break
		}
		if err = client.Warm(ctx, *addr, *warm, proto); err != nil {
			break
		}
		fmt.Println("warm")
		in := bufio.NewReader(os.Stdin)
		if _, err = in.ReadString('\n'); err != nil {
			break
		}
		var closeAll func()
		if closeAll, err = client.Idle(ctx, *addr, *conns, proto); err == nil {
			fmt.Printf("ready %d\n", *conns)
			_, _ = io.Copy(io.Discard, in) // hold them until the runner closes our stdin
			closeAll()
			return
		}
	default:
		err = fmt.Errorf("unknown mode %q (want echo, http, handshake, idle, broadcast or udp)", mode)
	}
	if err != nil {
		fail(err)
	}
	out, _ := json.Marshal(res)
	fmt.Println(string(out))
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "benchclient:", err)
	os.Exit(1)
}

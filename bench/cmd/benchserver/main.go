// Command benchserver runs one registered peer (see package peers) and
// prints its banner as its first line:
//
//	listening 127.0.0.1:40123 peer=net kind=echo backend=netpoll threading=goroutines gomaxprocs=1 detail=""
//
// It then reads commands on stdin: "stats" answers with the process's
// allocation count ("stats mallocs=N"); "heap FILE" collects garbage,
// writes a heap profile to FILE and answers "heap alloc=N inuse=N ...";
// EOF stops the server and exits 0. -cpuprofile FILE profiles the run's
// CPU until then.
//
// With -auto it prints what engine.New() runs with no options and exits.
//
// With -inproc it is instead the in-process scenario: it starts the peer,
// runs the echo or open-loop HTTP client as goroutines in the same process,
// prints "result {json}" and exits.
//
//	benchserver -peer ringloop-uring -threading locked
//	GOMAXPROCS=2 benchserver -peer net -inproc echo -conns 64 -size 128 -duration 2s
//	benchserver -peer netconn+tls -threading parked -inproc echo -tls -conns 64 -size 1024
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"runtime"
	"runtime/pprof"
	"strings"
	"time"

	"github.com/ringloop/ringloop/bench/client"
	"github.com/ringloop/ringloop/bench/peers"
)

func main() {
	name := flag.String("peer", "", "peer to serve: one of "+fmt.Sprint(peers.Names("")))
	addr := flag.String("addr", "127.0.0.1:0", "address to listen on")
	threading := flag.String("threading", "", "ringloop threading mode (default: $"+peers.ThreadingEnv+", else the engine's default)")
	zone := flag.String("zone", "", "DNS peers: the zone's master file")
	inproc := flag.String("inproc", "", "run a client in this process instead: echo or http")
	conns := flag.Int("conns", 64, "in-process client connections")
	size := flag.Int("size", 128, "in-process echo message size")
	useTLS := flag.Bool("tls", false, "in-process echo over TLS (for TLS peers)")
	rate := flag.Float64("rate", 10000, "in-process open-loop HTTP request rate")
	warmup := flag.Duration("warmup", 200*time.Millisecond, "in-process warm-up")
	duration := flag.Duration("duration", 2*time.Second, "in-process measured time")
	auto := flag.Bool("auto", false, "print what engine.New() picks with no options ({\"backend\",\"threading\",\"reason\"}) and exit")
	cpuProfile := flag.String("cpuprofile", "", "write a CPU profile of the server's run to this file (where a case's CPU goes)")
	memRate := flag.Int("memprofilerate", 0, "runtime.MemProfileRate for the heap command (default: the runtime's, one sample per 512 KiB)")
	flag.Parse()
	if *memRate > 0 {
		runtime.MemProfileRate = *memRate
	}
	if *cpuProfile != "" {
		stop, err := startCPUProfile(*cpuProfile)
		if err != nil {
			fail(err)
		}
		defer stop()
	}

	if *auto {
		info, err := peers.Automatic()
		if err != nil {
			fail(err)
		}
		out, _ := json.Marshal(map[string]string{"backend": info.Backend, "threading": info.Threading, "reason": info.Detail})
		fmt.Println(string(out))
		return
	}

	p, err := peers.Lookup(*name)
	if err != nil {
		fail(err)
	}
	if p.Start == nil {
		fail(fmt.Errorf("peer %s is a program of its own (%s), not a Go peer", p.Name, p.Program.Source))
	}
	srv, err := p.Start(peers.Config{Addr: *addr, Threading: *threading, Zone: *zone})
	if err != nil {
		fail(err)
	}
	fmt.Println(peers.Banner(srv.Addr(), p, srv.Info()))

	if *inproc != "" {
		ctx, cancel := context.WithTimeout(context.Background(), *warmup+*duration+time.Minute)
		defer cancel()
		var res any
		cpu0 := cpuNow()
		var m0, m1 runtime.MemStats
		runtime.ReadMemStats(&m0)
		switch *inproc {
		case "echo":
			res, err = client.RunEcho(ctx, client.EchoConfig{Addr: srv.Addr(), Conns: *conns, Size: *size, Warmup: *warmup, Duration: *duration, TLS: *useTLS})
		case "http":
			res, err = client.RunOpenLoop(ctx, client.OpenLoopConfig{Addr: srv.Addr(), Conns: *conns, Rate: *rate, Warmup: *warmup, Duration: *duration})
		default:
			err = fmt.Errorf("-inproc: want echo or http, have %q", *inproc)
		}
		if err != nil {
			fail(err)
		}
		runtime.ReadMemStats(&m1)
		out, _ := json.Marshal(map[string]any{"client": res, "process_cpu_ns": int64(cpuNow() - cpu0), "mallocs": m1.Mallocs - m0.Mallocs})
		fmt.Printf("result %s\n", out)
		_ = srv.Close()
		return
	}

	in := bufio.NewScanner(os.Stdin)
	for in.Scan() {
		if path, ok := strings.CutPrefix(in.Text(), "heap "); ok {
			heap(path)
			continue
		}
		if in.Text() == "stats" {
			var m runtime.MemStats
			runtime.ReadMemStats(&m)
			fmt.Printf("stats mallocs=%d\n", m.Mallocs)
		}
	}
	if err := srv.Close(); err != nil {
		fail(err)
	}
}

// heap collects garbage, writes a heap profile to path and answers with
// the heap's figures: what an idle case holds, by allocation site.
func heap(path string) {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	err := writeHeapProfile(path)
	fmt.Printf("heap alloc=%d inuse=%d stack=%d sys=%d err=%v\n", m.HeapAlloc, m.HeapInuse, m.StackInuse, m.Sys, err)
}

func writeHeapProfile(path string) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := pprof.WriteHeapProfile(f); err != nil {
		_ = f.Close()
		return err
	}
	return f.Close()
}

// startCPUProfile profiles the process into path until the returned stop.
func startCPUProfile(path string) (func(), error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		_ = f.Close()
		return nil, err
	}
	return func() { pprof.StopCPUProfile(); _ = f.Close() }, nil
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "benchserver:", err)
	os.Exit(1)
}

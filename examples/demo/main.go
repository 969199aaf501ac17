// Command demo starts a ringloop echo server, drives real traffic through it
// from loopback clients, checks every byte came back, and prints what the
// loop did and which backend it chose; then it runs the same load against a
// goroutine-per-connection net echo server for a side-by-side figure.
package main

import (
	"context"
	"crypto/sha256"
	"flag"
	"fmt"
	"io"
	"log"
	"net"
	"os"
	"sort"
	"sync"
	"time"

	"github.com/ringloop/ringloop/engine"
	"github.com/ringloop/ringloop/examples/echo"
)

func main() {
	conns := flag.Int("conns", 50, "client connections")
	msgs := flag.Int("msgs", 2000, "messages per connection")
	size := flag.Int("size", 1024, "message size in bytes")
	flag.Parse()

	fmt.Printf("ringloop demo: %d connections × %d messages × %d B, echo over loopback\n\n", *conns, *msgs, *size)
	var rows []result
	for _, b := range []engine.Backend{engine.BackendAuto, engine.BackendEpoll} {
		r, err := runRingloop(b, *conns, *msgs, *size)
		if err != nil {
			log.Fatalf("ringloop (%v): %v", b, err)
		}
		rows = append(rows, r)
	}
	r, err := runNet(*conns, *msgs, *size)
	if err != nil {
		log.Fatalf("net: %v", err)
	}
	rows = append(rows, r)

	fmt.Printf("\n%-28s %12s %10s %10s %s\n", "server", "msgs/s", "p50", "p99", "ratio vs net")
	base := rows[len(rows)-1].rate
	for _, r := range rows {
		fmt.Printf("%-28s %12.0f %10v %10v %.2fx\n", r.name, r.rate, r.p50, r.p99, r.rate/base)
	}
	fmt.Println("\nOne run, clients in this process and unpinned: not a benchmark. `make latency` measures")
	fmt.Println("across processes on pinned cores; `make bench` runs the micro-benchmarks.")
}

type result struct {
	name     string
	rate     float64
	p50, p99 time.Duration
}

func runRingloop(b engine.Backend, conns, msgs, size int) (result, error) {
	loop, err := engine.New(engine.WithBackend(b), engine.WithName("demo"))
	if err != nil {
		return result{}, err
	}
	ln, err := engine.Listen(loop, "tcp", "127.0.0.1:0", echo.Handler{})
	if err != nil {
		return result{}, err
	}
	info := loop.Backend()
	fmt.Printf("ringloop server on %s\n  backend: %s\n  why:     %s\n  kernel features: %s\n", ln.Addr(), info.Name, info.Reason, info.Features)
	r, err := drive(ln.Addr().String(), conns, msgs, size)
	if err != nil {
		return result{}, err
	}
	m := loop.Metrics()
	fmt.Printf("  traffic: %d messages echoed, every byte checked (SHA-256)\n", conns*msgs)
	fmt.Printf("  loop:    %d iterations, %d completions, %d tasks, %d wake-ups, %.1f completions per wait\n",
		m.Iterations, m.Completions, m.TasksRun, m.Wakes, float64(m.Completions)/float64(max(m.Waits, 1)))
	_ = ln.Close()
	if _, err := loop.ShutdownGracefully(0, time.Second).Await(context.Background()); err != nil {
		return result{}, err
	}
	fmt.Printf("  shut down: %s\n\n", loop.State())
	r.name = "ringloop " + info.Name
	return r, nil
}

func runNet(conns, msgs, size int) (result, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return result{}, err
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() { defer c.Close(); _, _ = io.Copy(c, c) }()
		}
	}()
	fmt.Printf("net echo server (goroutine per connection) on %s\n", ln.Addr())
	r, err := drive(ln.Addr().String(), conns, msgs, size)
	r.name = "net (goroutine/conn)"
	return r, err
}

// drive runs the load: each connection sends a message, reads its echo,
// and repeats; it checks the SHA-256 of all bytes sent and received.
func drive(addr string, conns, msgs, size int) (result, error) {
	var wg sync.WaitGroup
	lats := make([][]time.Duration, conns)
	errs := make(chan error, conns)
	start := time.Now()
	for i := range conns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c, err := net.Dial("tcp", addr)
			if err != nil {
				errs <- err
				return
			}
			defer c.Close()
			msg := make([]byte, size)
			buf := make([]byte, size)
			hs, hr := sha256.New(), sha256.New()
			lat := make([]time.Duration, 0, msgs)
			for j := range msgs {
				for k := range msg {
					msg[k] = byte(i + j + k)
				}
				t := time.Now()
				if _, err := c.Write(msg); err != nil {
					errs <- err
					return
				}
				if _, err := io.ReadFull(c, buf); err != nil {
					errs <- err
					return
				}
				lat = append(lat, time.Since(t))
				hs.Write(msg)
				hr.Write(buf)
			}
			if string(hs.Sum(nil)) != string(hr.Sum(nil)) {
				errs <- fmt.Errorf("connection %d: echoed bytes differ", i)
				return
			}
			lats[i] = lat
		}()
	}
	wg.Wait()
	el := time.Since(start)
	close(errs)
	if err := <-errs; err != nil {
		return result{}, err
	}
	var all []time.Duration
	for _, l := range lats {
		all = append(all, l...)
	}
	sort.Slice(all, func(i, j int) bool { return all[i] < all[j] })
	return result{rate: float64(conns*msgs) / el.Seconds(), p50: all[len(all)/2], p99: all[len(all)*99/100]}, nil
}

func init() { log.SetOutput(os.Stderr); log.SetFlags(0) }

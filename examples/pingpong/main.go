// Command pingpong measures request/response latency over one TCP
// connection: it sends a message, waits for the echo, and repeats, then
// prints messages per second and the p50/p99 round trip. With -serve it is
// instead a goroutine-per-connection net echo server, the baseline.
//
// Run the server and the client in separate processes on separate cores (see
// `make latency`), as a real client would be:
//
//	taskset -c 0 env GOMAXPROCS=1 go run ./examples/echoserver
//	taskset -c 1 go run ./examples/pingpong -addr 127.0.0.1:PORT
package main

import (
	"flag"
	"fmt"
	"io"
	"log"
	"net"
	"sort"
	"time"
)

func main() {
	addr := flag.String("addr", "", "echo server to measure")
	serve := flag.Bool("serve", false, "be a net echo server instead (prints its address)")
	n := flag.Int("n", 20000, "round trips")
	size := flag.Int("size", 128, "message size in bytes")
	name := flag.String("name", "server", "label for the result line")
	flag.Parse()
	if *serve {
		serveNet()
		return
	}
	c, err := net.Dial("tcp", *addr)
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()
	msg, buf := make([]byte, *size), make([]byte, *size)
	lat := make([]time.Duration, 0, *n)
	start := time.Now()
	for range *n {
		t := time.Now()
		if _, err := c.Write(msg); err != nil {
			log.Fatal(err)
		}
		if _, err := io.ReadFull(c, buf); err != nil {
			log.Fatal(err)
		}
		lat = append(lat, time.Since(t))
	}
	el := time.Since(start)
	sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
	fmt.Printf("%-32s %8.0f msgs/s  p50 %9v  p99 %9v\n", *name, float64(*n)/el.Seconds(),
		lat[len(lat)/2].Round(100*time.Nanosecond), lat[len(lat)*99/100].Round(100*time.Nanosecond))
}

func serveNet() {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("listening %s backend=net\n", ln.Addr())
	for {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		go func() { defer c.Close(); _, _ = io.Copy(c, c) }()
	}
}

// Command mainsub runs the main/sub reactor model (Netty's boss and worker
// groups): one boss loop accepts, a group of worker loops serves, and every
// accepted connection is handed to one worker for its whole life — with
// io_uring's MSG_RING where the kernel has it, else through the worker's task
// ring. It serves an echo on 127.0.0.1, drives a little traffic itself,
// prints where the connections went and exits.
package main

import (
	"context"
	"fmt"
	"io"
	"log"
	"net"
	"sync"
	"time"

	"github.com/ringloop/ringloop/examples/echo"
	"github.com/ringloop/ringloop/loopgroup"
)

func main() {
	// The boss group: one loop is enough to accept on one port.
	boss, err := loopgroup.New(loopgroup.WithLoops(1), loopgroup.WithName("boss"))
	if err != nil {
		log.Fatal(err)
	}
	defer boss.Close()
	// The worker group: the sub-reactors that read, write and run handlers.
	workers, err := loopgroup.New(loopgroup.WithLoops(4), loopgroup.WithName("worker"))
	if err != nil {
		log.Fatal(err)
	}
	defer workers.Close()

	srv, err := loopgroup.Serve(workers, "tcp", "127.0.0.1:0", echo.Handler{}, loopgroup.WithBoss(boss))
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("main/sub reactors: boss %s accepts, %d workers serve, on %s\n",
		srv.Listeners()[0].Loop().Name(), len(workers.Loops()), srv.Addr())

	// Drive traffic: 40 clients, each echoes a few messages and stays open
	// until all are counted.
	const clients = 40
	conns, err := drive(srv.Addr().String(), clients, 10)
	if err != nil {
		log.Fatal(err)
	}
	for _, l := range workers.Loops() {
		fmt.Printf("  %s serves %d connections\n", l.Name(), workers.Connections(l))
	}
	// The boss's metrics count its hand-offs and how they travelled.
	st := boss.Loops()[0].Metrics()
	fmt.Printf("  hand-offs: %d by MSG_RING, %d by task ring (backend %s)\n",
		st.MsgRingHandoffs, st.Handoffs-st.MsgRingHandoffs, workers.Loops()[0].Backend().Name)
	for _, c := range conns {
		c.Close()
	}

	// Stop accepting, wait for the connections to finish, then stop the
	// groups.
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := srv.Shutdown(ctx); err != nil {
		log.Fatal(err)
	}
	fmt.Printf("served %d connections; shut down cleanly\n", st.Accepted)
}

// drive opens n connections and echoes msgs messages on each, concurrently;
// it returns the connections, still open.
func drive(addr string, n, msgs int) ([]net.Conn, error) {
	conns := make([]net.Conn, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			conns[i], errs[i] = echoClient(addr, msgs)
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	return conns, nil
}

func echoClient(addr string, msgs int) (net.Conn, error) {
	c, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		return nil, err
	}
	_ = c.SetDeadline(time.Now().Add(10 * time.Second))
	msg, buf := []byte("ping from a client\n"), make([]byte, 19)
	for range msgs {
		if _, err := c.Write(msg); err != nil {
			return nil, err
		}
		if _, err := io.ReadFull(c, buf); err != nil {
			return nil, err
		}
		if string(buf) != string(msg) {
			return nil, fmt.Errorf("echo mismatch: %q", buf)
		}
	}
	return c, nil
}

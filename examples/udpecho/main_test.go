package main

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/ringloop/ringloop/internal/testenv"
)

func TestMain(m *testing.M) {
	testenv.RunMain(main)
	os.Exit(m.Run())
}

// TestUDPEcho runs the command, over IPv4 and (where the machine has ::1)
// IPv6, and echoes through it from 64 client sockets at once, each sending
// 20 datagrams of random sizes and content (0 to 1400 bytes) one at a time
// and checking each reply byte for byte; then SIGINT stops it with exit 0.
func TestUDPEcho(t *testing.T) {
	addrs := []string{"127.0.0.1:0"}
	if probe, err := net.ListenPacket("udp6", "[::1]:0"); err == nil {
		probe.Close()
		addrs = append(addrs, "[::1]:0")
	}
	testenv.ForEach(t, func(t *testing.T, c testenv.Combo) {
		for _, addr := range addrs {
			p := testenv.StartMain(t, c, "-addr", addr)
			var wg sync.WaitGroup
			errs := make(chan error, 64)
			for peer := range 64 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					errs <- echoThrough(p.Addr, peer, 20)
				}()
			}
			wg.Wait()
			close(errs)
			for err := range errs {
				if err != nil {
					t.Fatal(err)
				}
			}
			p.Interrupt(t)
		}
	})
}

func echoThrough(addr string, seed, rounds int) error {
	conn, err := net.Dial("udp", addr)
	if err != nil {
		return err
	}
	defer conn.Close()
	rng := rand.New(rand.NewPCG(uint64(seed), 3))
	buf := make([]byte, 2048)
	for i := range rounds {
		msg := make([]byte, rng.IntN(1401))
		for j := range msg {
			msg[j] = byte(rng.Uint32())
		}
		if _, err := conn.Write(msg); err != nil {
			return err
		}
		_ = conn.SetReadDeadline(time.Now().Add(30 * time.Second))
		n, err := conn.Read(buf)
		if err != nil {
			return fmt.Errorf("socket %d, datagram %d: %w", seed, i, err)
		}
		if !bytes.Equal(buf[:n], msg) {
			return fmt.Errorf("socket %d, datagram %d: %d bytes back, want the %d sent", seed, i, n, len(msg))
		}
	}
	return nil
}

package main

import (
	"bufio"
	"bytes"
	"io"
	"math/rand/v2"
	"net"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/ringloop/ringloop/internal/testenv"
)

func TestMain(m *testing.M) {
	testenv.RunMain(main)
	os.Exit(m.Run())
}

// TestKV runs the command and drives it as a pipelining client would:
// commands in one stream written in random pieces (one of them a 100 KB
// value), answers read in order; then a line over the limit ends that
// connection, the server goes on, and SIGINT stops it with exit 0.
func TestKV(t *testing.T) {
	testenv.ForEach(t, func(t *testing.T, c testenv.Combo) {
		p := testenv.StartMain(t, c, "-addr", "127.0.0.1:0")
		conn, err := net.DialTimeout("tcp", p.Addr, 10*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		_ = conn.SetDeadline(time.Now().Add(60 * time.Second))
		big := strings.Repeat("v", 100<<10)
		cmds := []string{"SET a 1", "GET a", "SET big " + big, "GET big", "DEL a", "DEL a", "GET a", "NOPE", "SET x"}
		want := []string{"OK", "1", "OK", big, "1", "0", "NIL", "ERR unknown command", "ERR usage: SET key value"}
		stream := []byte(strings.Join(cmds, "\r\n") + "\r\n")
		go func() {
			rng := rand.New(rand.NewPCG(3, 4))
			for len(stream) > 0 {
				n := min(len(stream), 1+rng.IntN(20<<10))
				if _, err := conn.Write(stream[:n]); err != nil {
					return
				}
				stream = stream[n:]
			}
		}()
		r := bufio.NewReaderSize(conn, 256<<10)
		for i, w := range want {
			line, err := r.ReadString('\n')
			if err != nil {
				t.Fatalf("answer %d: %v", i, err)
			}
			if got := strings.TrimSuffix(line, "\r\n"); got != w {
				t.Fatalf("answer %d to %.20q: %.40q, want %.40q", i, cmds[i], got, w)
			}
		}

		// A line over 1 MiB: that connection ends, the server serves on.
		bad, err := net.DialTimeout("tcp", p.Addr, 10*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		defer bad.Close()
		_ = bad.SetDeadline(time.Now().Add(60 * time.Second))
		go bad.Write(bytes.Repeat([]byte("x"), 1<<20+10))
		if n, err := io.Copy(io.Discard, bad); err == nil && n != 0 {
			t.Fatalf("read %d bytes from a connection that sent an over-long line", n)
		}
		if _, err := conn.Write([]byte("GET big\r\n")); err != nil {
			t.Fatal(err)
		}
		if line, err := r.ReadString('\n'); err != nil || len(line) != len(big)+2 {
			t.Fatalf("after the over-long line: %d bytes, %v", len(line), err)
		}
		p.Interrupt(t)
	})
}

package main

import (
	"io"
	"net"
	"os"
	"testing"
	"time"

	"github.com/ringloop/ringloop/internal/testenv"
)

func TestMain(m *testing.M) {
	testenv.RunMain(main)
	os.Exit(m.Run())
}

// TestEcho runs the command, echoes through it, and stops it with SIGINT.
func TestEcho(t *testing.T) {
	testenv.ForEach(t, func(t *testing.T, c testenv.Combo) {
		p := testenv.StartMain(t, c, "-addr", "127.0.0.1:0")
		conn, err := net.DialTimeout("tcp", p.Addr, 10*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		_ = conn.SetDeadline(time.Now().Add(30 * time.Second))
		msg := []byte("hello, ringloop")
		if _, err := conn.Write(msg); err != nil {
			t.Fatal(err)
		}
		got := make([]byte, len(msg))
		if _, err := io.ReadFull(conn, got); err != nil || string(got) != string(msg) {
			t.Fatalf("echo: %q, %v", got, err)
		}
		p.Interrupt(t)
	})
}

package main

import (
	"io"
	"net/http"
	"os"
	"testing"
	"time"

	"github.com/ringloop/ringloop/internal/testenv"
)

func TestMain(m *testing.M) {
	testenv.RunMain(main)
	os.Exit(m.Run())
}

// TestHello runs the command, asks it through Go's http.Client, and stops it
// with SIGINT.
func TestHello(t *testing.T) {
	testenv.ForEach(t, func(t *testing.T, c testenv.Combo) {
		p := testenv.StartMain(t, c, "-addr", "127.0.0.1:0")
		cl := &http.Client{Timeout: 30 * time.Second}
		defer cl.CloseIdleConnections()
		res, err := cl.Get("http://" + p.Addr + "/hello/gopher")
		if err != nil {
			t.Fatal(err)
		}
		b, err := io.ReadAll(res.Body)
		res.Body.Close()
		if err != nil || res.StatusCode != 200 || string(b) != "hello, gopher\n" {
			t.Fatalf("GET: %d %q %v", res.StatusCode, b, err)
		}
		p.Interrupt(t)
	})
}

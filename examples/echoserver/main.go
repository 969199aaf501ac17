// Command echoserver serves the examples/echo handler on one ringloop loop.
//
// It picks its backend the way every ringloop program does: io_uring where
// the kernel allows it, else epoll with the reason logged once;
// RINGLOOP_BACKEND=io_uring|epoll and RINGLOOP_KERNEL_PROFILE override the
// choice. Its first line on stdout is machine-readable:
//
//	listening 127.0.0.1:40123 backend=epoll profile=native reason="auto: fell back to epoll: ..."
//
// It serves until SIGINT or SIGTERM, or until its stdin (when a pipe or a
// socket) is closed, so a parent process can stop it by closing the pipe or by
// exiting. Then it shuts down gracefully and exits 0.
//
//	go run ./examples/echoserver -addr 127.0.0.1:7000
//	CGO_ENABLED=0 go run ./examples/echoserver   # epoll: built without liburing
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/ringloop/ringloop/engine"
	"github.com/ringloop/ringloop/examples/echo"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:0", "TCP address to listen on")
	busy := flag.Duration("busy-poll", 0, "poll without sleeping for this long after work (engine.WithSpin with busy; 0: the default adaptive spin)")
	flag.Parse()
	if err := run(*addr, *busy); err != nil {
		fmt.Fprintln(os.Stderr, "echoserver:", err)
		os.Exit(1)
	}
}

func run(addr string, busy time.Duration) error {
	// The default backend is auto; New fails only when a backend is forced
	// (RINGLOOP_BACKEND=io_uring where io_uring is refused) or a variable is
	// invalid.
	opts := []engine.Option{engine.WithName("echoserver")}
	if busy > 0 {
		opts = append(opts, engine.WithSpin(busy, true))
	}
	loop, err := engine.New(opts...)
	if err != nil {
		return err
	}
	ln, err := engine.Listen(loop, "tcp", addr, echo.Handler{})
	if err != nil {
		_ = loop.Close()
		return err
	}

	// Catch the signals before announcing the address: whoever reads the
	// line may signal at once.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if watchable(os.Stdin) {
		go func() {
			_, _ = io.Copy(io.Discard, os.Stdin) // returns at EOF: the parent closed it
			stop()
		}()
	}
	info := loop.Backend()
	fmt.Printf("listening %s backend=%s profile=%s reason=%q\n", ln.Addr(), info.Name, info.Features.Profile, info.Reason)
	<-ctx.Done()

	// Stop accepting, then let the loop finish what is queued: a short quiet
	// period is plenty for an echo server; open connections are closed.
	_ = ln.Close()
	if err := loop.ShutdownGracefully(100*time.Millisecond, 5*time.Second); err != nil {
		return err
	}
	return loop.Close() // waits: the quiet period set above stays
}

// watchable reports whether f is a pipe or a socket: a terminal or /dev/null
// never reports a close worth stopping for (and a background job reading its
// terminal would be stopped by SIGTTIN).
func watchable(f *os.File) bool {
	st, err := f.Stat()
	return err == nil && st.Mode()&(os.ModeNamedPipe|os.ModeSocket) != 0
}

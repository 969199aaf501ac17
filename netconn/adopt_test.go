package netconn_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/ringloop/ringloop/engine"
	"github.com/ringloop/ringloop/internal/driver"
	"github.com/ringloop/ringloop/internal/testenv"
	"github.com/ringloop/ringloop/netconn"
)

// childEnv makes the test binary act as a socket-activated server (see
// TestMain) instead of running tests.
const childEnv = "NETCONN_TEST_ACTIVATED_CHILD"

func TestMain(m *testing.M) {
	if os.Getenv(childEnv) == "1" {
		if err := activatedChild(); err != nil {
			fmt.Fprintln(os.Stderr, "child:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// activatedChild serves HTTP on the socket it was activated with until a
// request for /quit.
func activatedChild() error {
	files, err := netconn.ActivationFiles()
	if err != nil {
		return err
	}
	if len(files) != 1 || files[0].Name() != "web" {
		return fmt.Errorf("activation files %v", files)
	}
	if os.Getenv("LISTEN_FDS") != "" {
		return fmt.Errorf("LISTEN_FDS still set")
	}
	loop, err := engine.New() // backend and profile from the environment
	if err != nil {
		return err
	}
	defer loop.Close()
	ln, err := netconn.FileListener(loop, files[0])
	if err != nil {
		return err
	}
	files[0].Close()
	srv := &http.Server{}
	shut := make(chan error, 1)
	srv.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "%d %s %s", os.Getpid(), loop.Backend().Name, loop.Backend().Threading)
		if r.URL.Path == "/quit" {
			go func() { shut <- srv.Shutdown(context.Background()) }() // after this answer
		}
	})
	if err := srv.Serve(ln); err != http.ErrServerClosed {
		return err
	}
	return <-shut // Serve returns at once; Shutdown when the answer is sent
}

// TestHotRestart hands a ringloop listener to a child process through
// exec.Cmd.ExtraFiles with systemd's LISTEN_FDS protocol; the parent stops
// accepting and the child, adopting the socket, answers on the same
// address.
func TestHotRestart(t *testing.T) {
	testenv.ForEach(t, func(t *testing.T, c testenv.Combo) {
		testenv.CheckLeaks(t)
		loop := newLoop(t, c).Next()
		ln := listen(t, loop)
		addr := ln.Addr().String()
		f, err := ln.File()
		require.NoError(t, err)
		require.NoError(t, ln.Close()) // the old process stops accepting; the socket lives on in f

		// LISTEN_PID must be the child's own pid: sh sets it, then execs.
		cmd := exec.Command("/bin/sh", "-c", `LISTEN_PID=$$ exec "$0" "$@"`, os.Args[0], "-test.run=^$")
		cmd.Env = append(os.Environ(), childEnv+"=1", "LISTEN_FDS=1", "LISTEN_FDNAMES=web",
			testenv.BackendEnv+"="+c.Backend.String(), driver.ProfileEnv+"="+string(c.Profile),
			testenv.ThreadingEnv+"="+c.Threading.String())
		cmd.ExtraFiles = []*os.File{f}
		var out testenv.SyncBuffer
		cmd.Stdout, cmd.Stderr = &out, &out
		require.NoError(t, cmd.Start())
		exited := false
		t.Cleanup(func() {
			if !exited {
				_ = cmd.Process.Kill()
				_ = cmd.Wait()
			}
		})
		require.NoError(t, f.Close())

		client := &http.Client{Timeout: 20 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
		get := func(path string) string {
			resp, err := client.Get("http://" + addr + path)
			require.NoError(t, err, "child output: %s", &out)
			defer resp.Body.Close()
			b, err := io.ReadAll(resp.Body)
			require.NoError(t, err)
			return string(b)
		}
		for range 3 {
			fields := strings.Fields(get("/"))
			require.Len(t, fields, 3)
			require.Equal(t, strconv.Itoa(cmd.Process.Pid), fields[0], "answered by the child")
			require.Equal(t, loop.Backend().Name.String(), fields[1], "the child runs the same backend")
			require.Equal(t, c.Threading.String(), fields[2], "and the same threading mode")
		}
		get("/quit")
		exited = true
		require.NoError(t, cmd.Wait(), "child output: %s", &out)
	})
}

// TestActivationFilesIgnoresOthers: variables meant for another pid are
// left alone and yield nothing; a bad count is an error.
func TestActivationFiles(t *testing.T) {
	t.Setenv("LISTEN_PID", strconv.Itoa(os.Getpid()+1))
	t.Setenv("LISTEN_FDS", "1")
	files, err := netconn.ActivationFiles()
	require.NoError(t, err)
	require.Empty(t, files)
	require.Equal(t, "1", os.Getenv("LISTEN_FDS"))

	t.Setenv("LISTEN_PID", strconv.Itoa(os.Getpid()))
	t.Setenv("LISTEN_FDS", "many")
	_, err = netconn.ActivationFiles()
	require.ErrorContains(t, err, "LISTEN_FDS")
	require.Empty(t, os.Getenv("LISTEN_FDS"), "unset after reading")
}

// TestFileConn adopts connections accepted and dialed by package net (TCP)
// and a Unix socket pair, and echoes through them; the caller's file stays
// open and usable as the caller's.
func TestFileConn(t *testing.T) {
	forEach(t, func(t *testing.T, loops engine.Loops) {
		nl, err := net.Listen("tcp", "127.0.0.1:0")
		require.NoError(t, err)
		defer nl.Close()
		peer, err := net.Dial("tcp", nl.Addr().String())
		require.NoError(t, err)
		defer peer.Close()
		acc, err := nl.Accept()
		require.NoError(t, err)
		f, err := acc.(*net.TCPConn).File()
		require.NoError(t, err)
		acc.Close()
		nc, err := netconn.FileConn(loops, f)
		require.NoError(t, err)
		require.NoError(t, f.Close())
		require.Equal(t, peer.LocalAddr().String(), nc.RemoteAddr().String())
		echoThrough(t, nc, peer)

		fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
		require.NoError(t, err)
		mine, theirs := os.NewFile(uintptr(fds[0]), "mine"), os.NewFile(uintptr(fds[1]), "theirs")
		defer theirs.Close()
		uc, err := netconn.FileConn(loops, mine)
		require.NoError(t, err)
		require.NoError(t, mine.Close())
		tc, err := net.FileConn(theirs)
		require.NoError(t, err)
		defer tc.Close()
		echoThrough(t, uc, tc)
	})
}

// echoThrough sends from a to b and back, then closes a and sees b read EOF.
func echoThrough(t *testing.T, a, b net.Conn) {
	msg := bytes.Repeat([]byte("ringloop "), 10000)
	go func() { _, _ = a.Write(msg) }()
	got := make([]byte, len(msg))
	require.NoError(t, b.SetDeadline(time.Now().Add(20*time.Second)))
	_, err := io.ReadFull(b, got)
	require.NoError(t, err)
	require.Equal(t, msg, got)
	_, err = b.Write([]byte("back"))
	require.NoError(t, err)
	back := make([]byte, 4)
	_, err = io.ReadFull(a, back)
	require.NoError(t, err)
	require.Equal(t, "back", string(back))
	require.NoError(t, a.Close())
	_, err = b.Read(back)
	require.ErrorIs(t, err, io.EOF)
}

// TestAdoptRejects: a non-socket, a connected socket passed as a listener
// and a listener passed as a connection are refused, and the fd stays the
// caller's, open.
func TestAdoptRejects(t *testing.T) {
	testenv.ForEachBackend(t, func(t *testing.T, c testenv.Combo) {
		testenv.CheckLeaks(t)
		loop := newLoop(t, c).Next()
		var p [2]int
		require.NoError(t, unix.Pipe2(p[:], unix.O_CLOEXEC))
		defer unix.Close(p[0])
		defer unix.Close(p[1])
		_, err := engine.ListenFD(loop, p[0], nopHandler{})
		require.ErrorContains(t, err, "not a socket")
		_, err = engine.Adopt(loop, p[0], nopHandler{})
		require.ErrorContains(t, err, "not a socket")

		nl, err := net.Listen("tcp", "127.0.0.1:0")
		require.NoError(t, err)
		defer nl.Close()
		lf, err := nl.(*net.TCPListener).File()
		require.NoError(t, err)
		defer lf.Close()
		_, err = engine.Adopt(loop, int(lf.Fd()), nopHandler{})
		require.ErrorContains(t, err, "not a connected socket")
		_, err = netconn.FileConn(loop, lf)
		require.Error(t, err)

		pc, err := net.Dial("tcp", nl.Addr().String())
		require.NoError(t, err)
		defer pc.Close()
		cf, err := pc.(*net.TCPConn).File()
		require.NoError(t, err)
		defer cf.Close()
		_, err = engine.ListenFD(loop, int(cf.Fd()), nopHandler{})
		require.ErrorContains(t, err, "not a listening socket")
		_, err = unix.FcntlInt(cf.Fd(), unix.F_GETFD, 0)
		require.NoError(t, err, "a refused fd stays open")
	})
}

type nopHandler struct{}

func (nopHandler) OnOpen(*engine.Conn)         {}
func (nopHandler) OnData(*engine.Conn, []byte) {}
func (nopHandler) OnClose(*engine.Conn, error) {}

package runner

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/ringloop/ringloop/bench/peers"
)

// server is a peer running in a process of its own.
type server struct {
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	out    *bufio.Reader
	stderr *tailBuffer
	addr   string
	kv     map[string]string
	goPeer bool // answers "stats"
}

// startServer starts variant v as the scenario says (pinned or not,
// GOMAXPROCS) and waits for its banner.
func (r *Runner) startServer(ctx context.Context, v variant, sc Scenario, extra ...string) (*server, error) {
	var argv []string
	if v.peer.Program != nil {
		argv = []string{r.programPath(v.peer)}
	} else {
		argv = []string{r.bin("benchserver"), "-peer", v.peer.Name}
		if v.mode != "" {
			argv = append(argv, "-threading", v.mode)
		}
		if v.peer.Kind == peers.DNS {
			argv = append(argv, "-zone", filepath.Join(r.Root, peers.DNSZoneFile))
		}
	}
	argv = append(argv, extra...)
	if sc.Pinned {
		argv = append([]string{"taskset", "-c", r.ServerCPU}, argv...)
	}
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Env = append(os.Environ(), "GOMAXPROCS="+strconv.Itoa(sc.GOMAXPROCS))
	s := &server{cmd: cmd, stderr: &tailBuffer{max: 4096}, goPeer: v.peer.Program == nil}
	cmd.Stderr = s.stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	s.stdin, s.out = stdin, bufio.NewReader(stdout)
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	line, err := readLine(ctx, s.out, 30*time.Second)
	if err != nil {
		s.stop()
		return nil, fmt.Errorf("%s: no banner (%v): %s", v.label, err, s.stderr)
	}
	if s.addr, s.kv, err = peers.ParseBanner(line); err != nil {
		s.stop()
		return nil, err
	}
	return s, nil
}

func (s *server) pid() int { return s.cmd.Process.Pid }

// mallocs asks a Go server for its allocation count.
func (s *server) mallocs(ctx context.Context) (uint64, bool) {
	if !s.goPeer {
		return 0, false
	}
	if _, err := io.WriteString(s.stdin, "stats\n"); err != nil {
		return 0, false
	}
	line, err := readLine(ctx, s.out, 10*time.Second)
	if err != nil {
		return 0, false
	}
	v, ok := strings.CutPrefix(strings.TrimSpace(line), "stats mallocs=")
	n, err := strconv.ParseUint(v, 10, 64)
	return n, ok && err == nil
}

// stop closes the server's stdin (its signal to exit) and waits, killing it
// if it lingers.
func (s *server) stop() error {
	_ = s.stdin.Close()
	done := make(chan error, 1)
	go func() { done <- s.cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			return fmt.Errorf("exit: %v: %s", err, s.stderr)
		}
		return nil
	case <-time.After(10 * time.Second):
		_ = s.cmd.Process.Kill()
		<-done
		return fmt.Errorf("did not exit within 10s of its stdin closing; killed")
	}
}

// readLine reads one line with a time limit.
func readLine(ctx context.Context, r *bufio.Reader, limit time.Duration) (string, error) {
	type res struct {
		s   string
		err error
	}
	ch := make(chan res, 1)
	go func() {
		s, err := r.ReadString('\n')
		ch <- res{s, err}
	}()
	select {
	case x := <-ch:
		return x.s, x.err
	case <-time.After(limit):
		return "", fmt.Errorf("no line within %v", limit)
	case <-ctx.Done():
		return "", ctx.Err()
	}
}

// runOutput runs argv and returns its stdout; stderr goes into errors.
func runOutput(ctx context.Context, argv []string) (string, error) {
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	var out bytes.Buffer
	errb := &tailBuffer{max: 4096}
	cmd.Stdout, cmd.Stderr = &out, errb
	if err := cmd.Run(); err != nil {
		return out.String(), fmt.Errorf("%s: %v: %s", argv[0], err, errb)
	}
	return out.String(), nil
}

// tailBuffer keeps the last max bytes written to it.
type tailBuffer struct {
	mu  sync.Mutex
	max int
	b   []byte
}

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.b = append(t.b, p...)
	if len(t.b) > t.max {
		t.b = t.b[len(t.b)-t.max:]
	}
	return len(p), nil
}

func (t *tailBuffer) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return strings.TrimSpace(string(t.b))
}

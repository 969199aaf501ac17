package runner

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"time"

	"github.com/ringloop/ringloop/bench/client"
	"github.com/ringloop/ringloop/bench/peers"
	"github.com/ringloop/ringloop/bench/proc"
	"github.com/ringloop/ringloop/bench/stats"
)

// idle reads how much the server's resident memory grows per idle
// connection: after a warm-up connection has made 10,000 exchanges (so buffer
// pools and heap are in use; over TLS after 100 full handshakes too),
// c.Conns connections make one exchange each (over TLS after a full
// handshake) and stay open.
func (r *Runner) idle(ctx context.Context, c Case, srv *server, rd *Round) error {
	argv := append(r.wrap(c), r.bin("benchclient"), "idle", "-addr", srv.addr, "-conns", strconv.Itoa(c.Conns), "-warm", strconv.Itoa(c.Warm))
	switch c.Kind {
	case peers.HTTP:
		argv = append(argv, "-http")
	case peers.TLSEcho:
		argv = append(argv, "-tls")
	case peers.H2:
		argv = append(argv, "-h2") // each connection negotiates h2 by ALPN and makes one GET
	case peers.HTTPS, peers.H2C:
		return errors.New("n/a: the idle client speaks neither HTTPS nor h2c")
	case peers.WebSocket:
		argv = append(argv, "-ws") // each connection completes the handshake and echoes a message
	}
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	stderr := &tailBuffer{max: 4096}
	cmd.Stderr = stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return err
	}
	if err := cmd.Start(); err != nil {
		return err
	}
	defer func() {
		_ = stdin.Close() // the client closes its connections and exits
		_ = cmd.Wait()
	}()
	out := bufio.NewReader(stdout)
	line, err := readLine(ctx, out, 2*time.Minute)
	if err != nil || line != "warm\n" {
		return fmt.Errorf("idle client: %q %v: %s", line, err, stderr)
	}
	s0, err := settled(srv.pid(), proc.Sample{})
	if err != nil {
		return err
	}
	if _, err := io.WriteString(stdin, "go\n"); err != nil {
		return err
	}
	line, err = readLine(ctx, out, 2*time.Minute)
	if err != nil || !strings.HasPrefix(line, "ready ") {
		return fmt.Errorf("idle client: %q %v: %s", line, err, stderr)
	}
	s1, err := settled(srv.pid(), s0)
	if err != nil {
		return err
	}
	rd.RSSPerConn = stats.Num(float64(s1.RSS-s0.RSS) / float64(c.Conns))
	return nil
}

// rest reads what a server costs with no client at all: after c.Warmup to
// settle (start-up work done), it samples /proc, waits c.Duration and
// samples again. CPU is counted in 10 ms ticks, so the window must be long
// for a small figure to mean anything (10 s: 0.1% of a core per tick).
// New threads is the net change in the thread count over the window.
func rest(ctx context.Context, c Case, pid int, rd *Round) error {
	if err := sleep(ctx, c.Warmup); err != nil {
		return err
	}
	s0, err := proc.Read(pid)
	if err != nil {
		return err
	}
	t0 := time.Now()
	if err := sleep(ctx, c.Duration); err != nil {
		return err
	}
	s1, err := proc.Read(pid)
	if err != nil {
		return err
	}
	wall := time.Since(t0)
	d := s1.Sub(s0)
	rd.RestCPU = stats.Num(100 * d.CPU.Seconds() / wall.Seconds())
	rd.Threads = stats.Num(s1.Threads)
	rd.NewThreads = stats.Num(d.Threads)
	rd.WakeupsPerS = stats.Num(float64(d.Voluntary) / wall.Seconds())
	return nil
}

// sleep waits d, or until ctx is done.
func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// settled samples pid until two readings 100 ms apart agree within 1% (a
// Go server may still be freeing what it used), at most 20 times.
func settled(pid int, prev proc.Sample) (proc.Sample, error) {
	var s1 proc.Sample
	for i := range 20 {
		time.Sleep(100 * time.Millisecond)
		s, err := proc.Read(pid)
		if err != nil {
			return s, err
		}
		if i > 0 && abs(s.RSS-s1.RSS)*100 <= s1.RSS {
			return s, nil
		}
		s1 = s
	}
	return s1, nil
}

func abs(x int64) int64 {
	if x < 0 {
		return -x
	}
	return x
}

// syscalls counts the server's system calls over a short run, under perf
// (the raw_syscalls:sys_enter tracepoint, counting in the kernel) where it
// works, else strace -c -f (which slows the server a lot but counts the
// same calls). The method used goes into the report.
func (r *Runner) syscalls(ctx context.Context, c Case, srv *server, rd *Round) error {
	load := r.loadArgv(c, srv.addr)
	n, total, method, err := countSyscalls(ctx, srv.pid(), load, c.Kind)
	if err != nil {
		return err
	}
	if total <= 0 {
		return errors.New("no request completed")
	}
	rd.Syscalls = stats.Num(float64(n) / float64(total))
	rd.Note = "counted with " + method
	return nil
}

// loadArgv is the client command of a system-call run.
func (r *Runner) loadArgv(c Case, addr string) []string {
	if c.Kind == peers.HTTP {
		return append(r.wrap(c), "wrk", "-t1", "-c"+strconv.Itoa(c.Conns), "-d"+strconv.Itoa(max(1, int(c.Duration.Seconds())))+"s", "http://"+addr+"/plaintext")
	}
	return append(append(r.wrap(c), r.bin("benchclient")), echoArgs(c, addr)...)
}

// countSyscalls runs load while counting pid's system calls; it returns the
// count, the requests the load completed and the method.
func countSyscalls(ctx context.Context, pid int, load []string, k peers.Kind) (calls, reqs int64, method string, err error) {
	if _, perr := exec.LookPath("perf"); perr == nil {
		argv := append([]string{"perf", "stat", "-x,", "-e", "raw_syscalls:sys_enter", "-p", strconv.Itoa(pid), "--"}, load...)
		cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
		var out strings.Builder
		errb := &tailBuffer{max: 8192}
		cmd.Stdout, cmd.Stderr = &out, errb
		if err := cmd.Run(); err == nil {
			if n, perr := ParsePerfCount(errb.String()); perr == nil {
				reqs, err := loadRequests(out.String(), k)
				return n, reqs, "perf stat -e raw_syscalls:sys_enter -p PID (separate short run)", err
			}
		}
	}
	if _, serr := exec.LookPath("strace"); serr != nil {
		return 0, 0, "", errors.New("neither perf nor strace can count system calls here (make deps installs strace)")
	}
	tr := exec.CommandContext(ctx, "strace", "-c", "-f", "-p", strconv.Itoa(pid))
	trOut := &tailBuffer{max: 1 << 16}
	tr.Stderr = trOut
	if err := tr.Start(); err != nil {
		return 0, 0, "", err
	}
	time.Sleep(300 * time.Millisecond) // strace attaches to every thread before it counts
	out, lerr := runOutput(ctx, load)
	_ = tr.Process.Signal(os.Interrupt)
	_ = tr.Wait()
	if lerr != nil {
		return 0, 0, "", lerr
	}
	n, err := ParseStraceTotal(trOut.String())
	if err != nil {
		return 0, 0, "", err
	}
	reqs, err = loadRequests(out, k)
	return n, reqs, "strace -c -f -p PID (separate short run)", err
}

// loadRequests reads how many requests a system-call run's load completed.
func loadRequests(out string, k peers.Kind) (int64, error) {
	if k == peers.HTTP {
		res, err := client.ParseWrk(out)
		return res.Requests, err
	}
	var res client.EchoResult
	if err := jsonLine(out, &res); err != nil {
		return 0, err
	}
	return res.Total, nil
}

// ParsePerfCount reads the count from `perf stat -x,` output (one event).
// "<not counted>" (the task never ran) is zero.
func ParsePerfCount(s string) (int64, error) {
	sc := bufio.NewScanner(strings.NewReader(s))
	for sc.Scan() {
		f := strings.Split(sc.Text(), ",")
		if len(f) < 3 || !strings.Contains(f[2], "sys_enter") {
			continue
		}
		if strings.HasPrefix(f[0], "<not") {
			return 0, nil
		}
		return strconv.ParseInt(f[0], 10, 64)
	}
	return 0, fmt.Errorf("perf: no count in %q", s)
}

// ParseStraceTotal reads the calls column of the "total" line of strace -c.
func ParseStraceTotal(s string) (int64, error) {
	var header []string
	sc := bufio.NewScanner(strings.NewReader(s))
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		f := strings.Fields(line)
		if strings.HasPrefix(line, "% time") {
			header = f[1:] // "%" and "time" are one column
			continue
		}
		if len(f) > 0 && f[len(f)-1] == "total" && header != nil {
			// % time, seconds, usecs/call, calls, errors, syscall; errors
			// may be blank, so find calls from the left.
			for i, h := range header {
				if h == "calls" && i < len(f)-1 {
					return strconv.ParseInt(f[i], 10, 64)
				}
			}
		}
	}
	return 0, fmt.Errorf("strace: no total line in %q", s)
}

func jsonLine(s string, v any) error {
	return json.Unmarshal([]byte(strings.TrimSpace(s)), v)
}

package testenv

import (
	"bufio"
	"io"
	"os"
	"os/exec"
	"regexp"
	"syscall"
	"testing"
	"time"
)

// mainEnv marks a test binary started by StartMain: it runs the program's
// main instead of its tests.
const mainEnv = "RINGLOOP_TEST_RUN_MAIN"

// RunMain, called first in a command's TestMain, runs main and exits when
// the binary was started by StartMain; otherwise it returns and the tests
// run. So a command's test drives the real main, flags, signals and exit
// code included, with no go tool at hand (the kernel VMs have none).
func RunMain(main func()) {
	if os.Getenv(mainEnv) == "1" {
		main()
		os.Exit(0)
	}
}

// MainProcess is a command's main running in a child process.
type MainProcess struct {
	// Addr is the address the program printed in its "listening on ADDR" line.
	Addr   string
	cmd    *exec.Cmd
	err    error // Wait's result, set before exited closes
	exited chan struct{}
}

var listening = regexp.MustCompile(`listening on (\S+?):?(\s|$)`)

// StartMain starts this test binary as the command (see RunMain) with args,
// under the combo's backend, kernel profile and threading mode, and waits
// for the line "listening on ADDR" on its standard error (its log). Its
// output goes to the test log.
func StartMain(t *testing.T, c Combo, args ...string) *MainProcess {
	t.Helper()
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(os.Environ(), mainEnv+"=1",
		BackendEnv+"="+c.Backend.String(),
		KernelProfileEnv+"="+string(c.Profile),
		ThreadingEnv+"="+c.Threading.String())
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stdout = os.Stdout
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	p := &MainProcess{cmd: cmd, exited: make(chan struct{})}
	addr := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			t.Log(sc.Text())
			if m := listening.FindStringSubmatch(sc.Text()); m != nil {
				select {
				case addr <- m[1]:
				default:
				}
			}
		}
		_, _ = io.Copy(io.Discard, stderr)
		p.err = cmd.Wait()
		close(p.exited)
	}()
	t.Cleanup(func() { _ = cmd.Process.Kill(); <-p.exited })
	select {
	case p.Addr = <-addr:
	case <-p.exited:
		t.Fatalf("exited before listening: %v", p.err)
	case <-time.After(60 * time.Second):
		t.Fatal("no \"listening on\" line within 60s")
	}
	return p
}

// Interrupt sends SIGINT, as Ctrl-C does, and fails t unless the program
// then exits with status 0.
func (p *MainProcess) Interrupt(t *testing.T) {
	t.Helper()
	if err := p.cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	select {
	case <-p.exited:
		if p.err != nil {
			t.Fatalf("after SIGINT: %v", p.err)
		}
	case <-time.After(60 * time.Second):
		t.Fatal("still running 60s after SIGINT")
	}
}

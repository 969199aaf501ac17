// Command vminit is the /init of the initramfs that `make test-kernels` boots
// under qemu on each pinned Debian kernel.
//
// It mounts /proc, /sys, /dev and /tmp, brings up lo, raises RLIMIT_NOFILE
// and RLIMIT_MEMLOCK, reports what ringloop's probe chooses on this kernel,
// runs every test binary in /tests (or those ringloop_pkgs names) with
// -test.short and -test.parallel=2, prints one verdict line per binary and powers the machine
// off. Packages ringloop_uringonly names run their combos on io_uring only.
// Where ringloop_expect=io_uring the tests run with
// RINGLOOP_REQUIRE_URING=1: an io_uring test that would skip fails. Its console lines are what the
// host-side runner (tests/kernels/run) parses:
//
//	KERNEL release=5.10.0-32-cloud-amd64 rmem_max=212992
//	PROBE backend=io_uring threading=parked features="ext_arg nodrop ..." reason="auto: io_uring available"
//	REASON recv: re-armed single-shot, ...
//	RUN pkg=engine
//	SKIP pkg=engine test=TestMsgRing/locked reason="handoff_internal_test.go:49: this kernel has no IORING_OP_MSG_RING"
//	VERDICT pkg=engine status=pass passed=120 failed=0 skipped=2 seconds=81.4
//	DONE
//
// Verdicts count leaf tests (a test with subtests counts its subtests, so
// one whose subtests all skip counts as skipped). Test output is echoed in
// full for a binary that fails; skipped tests are always listed with their
// reason, and the host checks each against tests/skips.txt, so that a skip
// cannot hide a missing feature.
package main

import (
	"bufio"
	"bytes"
	"encoding/base64"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"github.com/ringloop/ringloop/engine"
	"github.com/ringloop/ringloop/internal/testenv"
	"github.com/ringloop/ringloop/internal/testsum"
)

// testTimeout bounds one test binary (its -test.timeout), below the host's
// per-boot timeout so a hang still ends in a verdict line with a stack dump.
const testTimeout = "12m"

func main() {
	if err := setup(); err != nil {
		fmt.Println("SETUP-ERROR", err)
	} else {
		report()
		runAll()
		fmt.Println("DONE")
	}
	unix.Sync()
	_ = unix.Reboot(unix.LINUX_REBOOT_CMD_POWER_OFF)
	// Unreachable unless power-off failed; exiting PID 1 panics the kernel,
	// and panic=-1 with qemu's -no-reboot ends the VM all the same.
}

// setup makes the minimal system the tests need.
func setup() error {
	for _, m := range []struct{ dir, fs string }{
		{"/proc", "proc"}, {"/sys", "sysfs"}, {"/dev", "devtmpfs"}, {"/tmp", "tmpfs"},
	} {
		if err := os.MkdirAll(m.dir, 0o755); err != nil {
			return err
		}
		if err := unix.Mount(m.fs, m.dir, m.fs, 0, ""); err != nil && err != unix.EBUSY {
			return fmt.Errorf("mount %s on %s: %w", m.fs, m.dir, err)
		}
	}
	if err := linkUp("lo"); err != nil {
		return err
	}
	for _, l := range []struct {
		res int
		val uint64
	}{{unix.RLIMIT_NOFILE, 1 << 20}, {unix.RLIMIT_MEMLOCK, unix.RLIM_INFINITY}} {
		if err := unix.Setrlimit(l.res, &unix.Rlimit{Cur: l.val, Max: l.val}); err != nil {
			return fmt.Errorf("setrlimit %d: %w", l.res, err)
		}
	}
	return nil
}

// linkUp sets IFF_UP on the interface: the kernel gives lo 127.0.0.1 and
// ::1 itself.
func linkUp(name string) error {
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	ifr, err := unix.NewIfreq(name)
	if err != nil {
		return err
	}
	if err := unix.IoctlIfreq(fd, unix.SIOCGIFFLAGS, ifr); err != nil {
		return fmt.Errorf("%s flags: %w", name, err)
	}
	ifr.SetUint16(ifr.Uint16() | unix.IFF_UP | unix.IFF_RUNNING)
	if err := unix.IoctlIfreq(fd, unix.SIOCSIFFLAGS, ifr); err != nil {
		return fmt.Errorf("%s up: %w", name, err)
	}
	return nil
}

// report prints the kernel and what an automatic loop chooses on it.
func report() {
	var u unix.Utsname
	_ = unix.Uname(&u)
	rmem, _ := os.ReadFile("/proc/sys/net/core/rmem_max")
	fmt.Printf("KERNEL release=%s rmem_max=%s\n", unix.ByteSliceToString(u.Release[:]), strings.TrimSpace(string(rmem)))
	loop, err := engine.New(engine.WithName("probe"))
	if err != nil {
		fmt.Printf("PROBE error=%q\n", err.Error())
		return
	}
	info := loop.Backend()
	f := info.Features
	reasons := f.Reasons
	f.Reasons = nil
	fmt.Printf("PROBE backend=%s threading=%s features=%q reason=%q\n", info.Name, info.Threading, featureList(f.String()), info.Reason)
	for _, r := range reasons {
		fmt.Println("REASON", r)
	}
	_ = loop.Close()
}

// featureList extracts the bracketed feature names from Features.String.
func featureList(s string) string {
	if i, j := strings.IndexByte(s, '['), strings.LastIndexByte(s, ']'); i >= 0 && j > i {
		return s[i+1 : j]
	}
	return s
}

// runAll runs each /tests/*.test in name order, or those ringloop_pkgs
// names (the kernel's command line hands it to /init as environment).
func runAll() {
	bins, _ := filepath.Glob("/tests/*.test")
	sort.Strings(bins)
	only := strings.Split(os.Getenv("ringloop_pkgs"), ",")
	for _, bin := range bins {
		if only[0] == "" || slices.Contains(only, strings.TrimSuffix(filepath.Base(bin), ".test")) {
			run(bin)
		}
	}
}

// testArgs decodes the extra test flags the host's -testargs put on the
// kernel's command line: base64url of the space-separated flags, since the
// kernel keeps a word with a dot in it from /init.
func testArgs(enc string) []string {
	if enc == "" {
		return nil
	}
	b, err := base64.RawURLEncoding.DecodeString(enc)
	if err != nil {
		fmt.Println("SETUP-ERROR ringloop_testargs:", err)
		return nil
	}
	return strings.Fields(string(b))
}

func run(bin string) {
	pkg := strings.TrimSuffix(filepath.Base(bin), ".test")
	fmt.Printf("RUN pkg=%s\n", pkg)
	dir := filepath.Join("/tmp", pkg)
	_ = os.MkdirAll(dir, 0o755)
	// -test.parallel at the vCPU count: under TCG the VM is CPU-bound (two
	// binaries at once took as long as one after the other), so the
	// packages that raise it for their waiting tests would only add load.
	cmd := exec.Command(bin, append([]string{"-test.short", "-test.v", "-test.timeout=" + testTimeout, "-test.parallel=2"},
		testArgs(os.Getenv("ringloop_testargs"))...)...)
	cmd.Dir = dir
	cmd.Env = []string{
		"PATH=/bin", "HOME=/tmp", "TMPDIR=/tmp",
		// The kernel is real: test what it has, not a profile's mask.
		"RINGLOOP_TEST_PROFILES=native",
		// No Go toolchain here: the CGO_ENABLED=0 echoserver is prebuilt.
		"RINGLOOP_ECHOSERVER=/bin/echoserver",
		"RINGLOOP_EXAMPLES=/examples",
	}
	if os.Getenv("ringloop_expect") == "io_uring" {
		// This kernel must run io_uring: its tests may not skip.
		cmd.Env = append(cmd.Env, "RINGLOOP_REQUIRE_URING=1")
	}
	if slices.Contains(strings.Split(os.Getenv("ringloop_uringonly"), ","), pkg) {
		// A protocol layer: the host runs its epoll combos here under the
		// io_uring-disabled boot (see tests/kernels/run's layerPkgs).
		cmd.Env = append(cmd.Env, testenv.BackendsEnv+"=io_uring")
	}
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	start := time.Now()
	err := cmd.Run()
	secs := time.Since(start).Seconds()

	v := testsum.NewVerbose()
	sc := bufio.NewScanner(bytes.NewReader(out.Bytes()))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		v.Line(sc.Text())
	}
	counts := v.Counts()
	status := "pass"
	if err != nil || counts.Failed > 0 {
		status = "fail"
		fmt.Printf("OUTPUT-BEGIN pkg=%s\n%sOUTPUT-END pkg=%s (%v)\n", pkg, out.Bytes(), pkg, err)
	}
	for _, s := range v.Skips() {
		fmt.Printf("SKIP pkg=%s test=%s reason=%q\n", pkg, s.Test, s.Reason)
	}
	fmt.Printf("VERDICT pkg=%s status=%s passed=%d failed=%d skipped=%d seconds=%.1f\n",
		pkg, status, counts.Passed, counts.Failed, counts.Skipped, secs)
}

// Command run is the host side of `make test-kernels`: it builds every
// library package's tests as static binaries, packs them with tests/kernels/vminit
// as /init into an initramfs, boots each pinned Debian kernel (fetched by
// tests/kernels/fetch.sh) under qemu's TCG emulation, as many at once as the
// host has cores (each VM's vCPUs share one host thread, see boot), and
// prints per kernel what ringloop's probe chose and each package's verdict.
// It exits non-zero if any package fails, any boot times out or any kernel
// gives no verdict.
//
//	go run ./tests/kernels/run -pins tests/kernels/pins -cache ~/.cache/ringloop/kernels
//	go run ./tests/kernels/run ... -kernels 5.10 -pkgs websocket -testargs "-test.run=TestHub -test.count=4 -test.short=false"
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"time"
)

func main() {
	pins := flag.String("pins", "tests/kernels/pins", "pinned kernels (name suite package version sha256)")
	cache := flag.String("cache", "", "directory fetch.sh extracted the kernels into (NAME/vmlinuz)")
	out := flag.String("out", "bin/kernels", "work directory for binaries, initramfs and console logs")
	bootTimeout := flag.Duration("boot-timeout", 25*time.Minute, "limit for one kernel's boot and test run")
	only := flag.String("kernels", "", "comma-separated kernel names to boot (default: all pinned)")
	pkgs := flag.String("pkgs", "", "comma-separated packages to run in each boot (default: all; for chasing one failure)")
	parallel := flag.Int("parallel", runtime.NumCPU(), "boots at once (each VM takes one host core)")
	testArgs := flag.String("testargs", "", `extra flags for every test binary, after -test.short (for chasing one failure: "-test.run=TestHub -test.count=4 -test.short=false")`)
	flag.Parse()
	if err := run(*pins, *cache, *out, *only, *pkgs, *testArgs, *bootTimeout, max(*parallel, 1)); err != nil {
		fmt.Fprintln(os.Stderr, "test-kernels:", err)
		os.Exit(1)
	}
}

func run(pinsFile, cache, out, only, pkgList, testArgs string, bootTimeout time.Duration, parallel int) error {
	kernels, err := readPins(pinsFile, only)
	if err != nil {
		return err
	}
	if cache == "" {
		return fmt.Errorf("-cache is required")
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		return err
	}
	if err := loadSkips(); err != nil {
		return err
	}
	start := time.Now()
	initrd, pkgs, err := build(out)
	if err != nil {
		return err
	}
	fmt.Printf("test-kernels: built %d test binaries and /init in %v\n", len(pkgs), time.Since(start).Round(time.Second))
	specs := boots(kernels)
	for i := range specs {
		b := &specs[i]
		b.testArgs = testArgs
		if pkgList != "" {
			b.only = strings.Split(pkgList, ",")
		}
		if _, err := os.Stat(filepath.Join(cache, b.kernel.name, "vmlinuz")); err != nil {
			return fmt.Errorf("kernel %s: %w (run tests/kernels/fetch.sh first)", b.kernel.name, err)
		}
	}
	results := make([]*kernelResult, len(specs))
	slots := make(chan struct{}, parallel)
	var wg sync.WaitGroup
	for i, b := range specs {
		slots <- struct{}{}
		wg.Go(func() {
			defer func() { <-slots }()
			vmlinuz := filepath.Join(cache, b.kernel.name, "vmlinuz")
			results[i] = boot(b, vmlinuz, initrd, filepath.Join(out, b.name+".log"), bootTimeout)
		})
	}
	wg.Wait()
	failed := printTable(os.Stdout, results, pkgs)
	if err := writeMarkdown(filepath.Join(out, "kernels.md"), results, pkgs); err != nil {
		return err
	}
	if err := writeResults(out, only == "" && pkgList == "" && testArgs == "", results, pkgs, time.Since(start), parallel); err != nil {
		return err
	}
	fmt.Printf("test-kernels: %d kernels in %v (qemu TCG, -smp 2 on one host thread, %d at once, tests run with -test.short)\n",
		len(results), time.Since(start).Round(time.Second), parallel)
	if err := recordStage(results, pkgs, time.Since(start)); err != nil {
		return err
	}
	if failed > 0 {
		return fmt.Errorf("%d of %d kernels failed (console logs: %s)", failed, len(results), out)
	}
	return nil
}

// bootSpec is one qemu run: a pinned kernel, extra words for its command
// line, the backend its probe must choose, and the packages it runs (all
// when empty).
type bootSpec struct {
	kernel
	name      string   // log file and table row
	label     string   // what the row shows
	args      string   // kernel command line additions
	testArgs  string   // extra flags for every test binary (-testargs)
	uringOnly []string // packages whose combos run on io_uring only
	expect    string   // backend the probe must choose
	only      []string
}

// refusedKernel is booted a second time with io_uring switched off by the
// kernel.io_uring_disabled sysctl (Linux 6.6 and later), so that the
// matrix shows the epoll fallback chosen and working on a kernel that
// refuses io_uring. To bound the time it runs the integration suites and
// the protocol layers only.
const refusedKernel = "6.12"

var refusedPkgs = []string{"tests", "engine", "packet", "loopgroup", "netconn", "httpserver", "looptls", "websocket"}

// layerPkgs are the protocol layers over engine: what they ask of a kernel
// is what engine's own suites ask, so in the io_uring boots their combos run
// on io_uring only (RINGLOOP_TEST_BACKENDS), and on epoll in the refused
// boot, where epoll is the backend the kernel leaves. Every boot still runs
// engine, packet, tests, netconn and loopgroup on both backends; the host runs
// everything on both under every kernel profile. Under TCG the VM is
// CPU-bound (qemu's one thread at 100%), so this halves the layers' share,
// about half of a boot.
var layerPkgs = []string{"httpserver", "websocket", "looptls", "examples.websocket"}

// boots lists each pinned kernel's boot (the probe must choose io_uring),
// then the io_uring-disabled boot of refusedKernel (it must choose epoll).
func boots(kernels []kernel) []bootSpec {
	var bs []bootSpec
	for _, k := range kernels {
		bs = append(bs, bootSpec{kernel: k, name: k.name, label: k.name, expect: "io_uring", uringOnly: layerPkgs})
	}
	for _, k := range kernels {
		if k.name == refusedKernel {
			bs = append(bs, bootSpec{kernel: k, name: k.name + "-nouring", label: k.name + " io_uring disabled",
				args: "sysctl.kernel.io_uring_disabled=2", expect: "epoll", only: refusedPkgs})
		}
	}
	return bs
}

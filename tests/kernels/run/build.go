package main

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
)

// staticFlags link a cgo binary statically, liburing and libc included: the
// initramfs has no shared libraries. netgo and osusergo keep the resolver
// and user lookups in Go, which glibc cannot do in a static binary.
var staticFlags = []string{"-tags", "netgo,osusergo", "-ldflags", "-s -w -linkmode external -extldflags -static"}

// hostTools are the programs tests run besides their own binaries (sh for
// netconn's hot restart, curl and wrk as httpserver's clients, curl and
// openssl s_client as looptls's TLS peers). They are copied from the host
// (make deps installs them) with the shared libraries ldd lists, at the same
// paths. openssl runs without its configuration file (/usr/lib/ssl is not
// copied): a missing default file is no error, and s_client needs none.
var hostTools = []string{"sh", "curl", "wrk", "openssl"}

// examplePrograms are the reactor-model programs loopgroup's tests run
// (from /examples, named by RINGLOOP_EXAMPLES in the VM).
var examplePrograms = []string{"./examples/mainsub", "./examples/single", "./examples/reuseport"}

// kernel is one line of the pins file.
type kernel struct {
	name, suite, pkg, version string
}

func readPins(path, only string) ([]kernel, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	want := map[string]bool{}
	for _, n := range strings.Split(only, ",") {
		if n != "" {
			want[n] = true
		}
	}
	var ks []kernel
	found := map[string]bool{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fs := strings.Fields(sc.Text())
		if len(fs) == 0 || strings.HasPrefix(fs[0], "#") {
			continue
		}
		if len(fs) != 5 {
			return nil, fmt.Errorf("%s: want name suite package version sha256: %q", path, sc.Text())
		}
		if len(want) == 0 || want[fs[0]] {
			ks = append(ks, kernel{fs[0], fs[1], fs[2], fs[3]})
			found[fs[0]] = true
		}
	}
	for n := range want {
		if !found[n] {
			return nil, fmt.Errorf("-kernels names no pinned kernel: %s", n)
		}
	}
	return ks, sc.Err()
}

// build compiles the test binaries of every package in the module that has
// tests (a nested module, such as bench/, is not part of ./..., nor are
// this tool's own tests), the /init
// and the CGO_ENABLED=0 echoserver the tests/ suite drives, and packs them
// into out/initramfs.cpio. It returns that path and the packages' short
// names.
func build(out string) (string, []string, error) {
	list, err := goOut(nil, "list", "-f", "{{if or .TestGoFiles .XTestGoFiles}}{{.ImportPath}}{{end}}", "./...")
	if err != nil {
		return "", nil, err
	}
	kernelFree, err := withoutSyscalls()
	if err != nil {
		return "", nil, err
	}
	var pkgs []string
	for _, p := range strings.Fields(list) {
		// This tool's own tests, and the build checks (they run the go
		// tool), run on the host; so do packages whose tests make no
		// system call of their own.
		if !strings.Contains(p, "/tests/kernels/") && !strings.HasSuffix(p, "/tests/builds") && !kernelFree[p] {
			pkgs = append(pkgs, p)
		}
	}
	if len(pkgs) == 0 {
		return "", nil, fmt.Errorf("go list found no package with tests")
	}
	testDir := filepath.Join(out, "tests")
	if err := os.RemoveAll(testDir); err != nil {
		return "", nil, err
	}
	if err := os.MkdirAll(testDir, 0o755); err != nil {
		return "", nil, err
	}
	// One test binary per package, named after the package's directory
	// path so that two packages with the same last element do not clash.
	var names []string
	for _, p := range pkgs {
		name := shortName(p)
		names = append(names, name)
		args := append([]string{"test", "-c", "-o", filepath.Join(testDir, name+".test")}, staticFlags...)
		if _, err := goOut(nil, append(args, p)...); err != nil {
			return "", nil, err
		}
	}
	init := filepath.Join(out, "init")
	if _, err := goOut(nil, append(append([]string{"build", "-o", init}, staticFlags...), "./tests/kernels/vminit")...); err != nil {
		return "", nil, err
	}
	echo := filepath.Join(out, "echoserver")
	if _, err := goOut([]string{"CGO_ENABLED=0"}, "build", "-o", echo, "./examples/echoserver"); err != nil {
		return "", nil, err
	}
	exDir := filepath.Join(out, "examples")
	if _, err := goOut(nil, append(append([]string{"build", "-o", exDir + string(filepath.Separator)}, staticFlags...),
		examplePrograms...)...); err != nil {
		return "", nil, err
	}

	fs := newInitramfs()
	fs.add("init", init)
	fs.add("bin/echoserver", echo)
	for _, p := range examplePrograms {
		name := filepath.Base(p)
		fs.add("examples/"+name, filepath.Join(exDir, name))
	}
	fs.addData("etc/hosts", []byte("127.0.0.1 localhost\n::1 localhost ip6-localhost ip6-loopback\n"))
	for _, d := range []string{"proc", "sys", "dev", "tmp"} {
		fs.dir(d)
	}
	for _, n := range names {
		fs.add("tests/"+n+".test", filepath.Join(testDir, n+".test"))
	}
	for _, tool := range hostTools {
		if err := addHostTool(fs, tool); err != nil {
			return "", nil, err
		}
	}
	initrd := filepath.Join(out, "initramfs.cpio")
	if err := fs.write(initrd); err != nil {
		return "", nil, err
	}
	sort.Strings(names)
	return initrd, names, nil
}

// withoutSyscalls returns the packages whose test binaries do not link
// golang.org/x/sys/unix, through which all of ringloop's system calls go:
// their tests (tasks' lock-free queues, timers' heap) run user-space code
// only, which no kernel can change, so booting them under each kernel
// adds emulated minutes (tasks' stress test spins producers against a
// consumer on two emulated CPUs) and tests nothing the host runs do not.
func withoutSyscalls() (map[string]bool, error) {
	out, err := goOut(nil, "list", "-test", "-f", `{{if eq .Name "main"}}{{.ImportPath}} {{join .Deps " "}}{{end}}`, "./...")
	if err != nil {
		return nil, err
	}
	free := map[string]bool{}
	for _, line := range strings.Split(out, "\n") {
		fs := strings.Fields(line)
		if len(fs) == 0 || !strings.HasSuffix(fs[0], ".test") {
			continue
		}
		if !slices.Contains(fs[1:], "golang.org/x/sys/unix") {
			free[strings.TrimSuffix(fs[0], ".test")] = true
		}
	}
	return free, nil
}

// addHostTool adds the host's program name as /bin/name, and the shared
// libraries it needs at their own paths.
func addHostTool(fs *initramfs, name string) error {
	path, err := exec.LookPath(name)
	if err != nil {
		return fmt.Errorf("%w (make deps installs it; tests in the VM run it)", err)
	}
	fs.add("bin/"+name, path)
	out, err := exec.Command("ldd", path).Output()
	if err != nil {
		return fmt.Errorf("ldd %s: %w", path, err)
	}
	for _, line := range strings.Split(string(out), "\n") {
		for _, f := range strings.Fields(line) {
			if strings.HasPrefix(f, "/") {
				fs.add(strings.TrimPrefix(f, "/"), f)
			}
		}
	}
	return nil
}

// shortName turns an import path into a file name: the path inside the
// module with slashes as dots ("internal.drivertest").
func shortName(importPath string) string {
	const module = "github.com/ringloop/ringloop/"
	return strings.ReplaceAll(strings.TrimPrefix(importPath, module), "/", ".")
}

// goOut runs the go command with extra environment and returns its stdout.
func goOut(env []string, args ...string) (string, error) {
	cmd := exec.Command("go", args...)
	cmd.Env = append(os.Environ(), env...)
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("go %s: %w", strings.Join(args, " "), err)
	}
	return string(out), nil
}

package main

import (
	"testing"

	"github.com/ringloop/ringloop/internal/testsum"
)

// The module's allowlist parses, and names the io_uring-disabled boot's
// io_uring combos (a test of the file here: this package's tests stay on
// the host, where the source tree is).
func TestModuleSkipsFile(t *testing.T) {
	const p = "../../skips.txt"
	a, err := testsum.ReadAllowlist(p)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := a.Allowed("kernels/"+refusedKernel+"-nouring", "httpserver", "TestX/io_uring/native/parked"); !ok {
		t.Errorf("%s: the io_uring-disabled boot's io_uring combos may not skip", p)
	}
	if _, ok := a.Allowed("kernels/"+refusedKernel, "httpserver", "TestX/io_uring/native/parked"); ok {
		t.Errorf("%s: io_uring combos may skip on a boot that has io_uring", p)
	}
}

// The VMs leave out exactly the packages whose tests make no system call
// (tasks, internal/taskq and internal/timers are pure user-space code; engine is not).
func TestWithoutSyscalls(t *testing.T) {
	t.Chdir("../../..") // the module's root, where make runs this tool
	free, err := withoutSyscalls()
	if err != nil {
		t.Fatal(err)
	}
	const m = "github.com/ringloop/ringloop/"
	for p, want := range map[string]bool{m + "tasks": true, m + "internal/timers": true, m + "internal/taskq": true, m + "engine": false, m + "internal/uring": false, m + "tests": false} {
		if free[p] != want {
			t.Errorf("%s: without system calls %v, want %v", p, free[p], want)
		}
	}
}

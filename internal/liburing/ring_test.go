//go:build linux && cgo && !ringloop_nouring

package liburing

import (
	"bytes"
	"debug/elf"
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

func newRing(t *testing.T, entries, cq, flags uint32) *Ring {
	t.Helper()
	r, err := Setup(entries, cq, flags)
	if err != nil {
		t.Fatalf("Setup: %v", err)
	}
	t.Cleanup(r.Close)
	return r
}

func newBatch(t *testing.T, nops, ncqe int) *Batch {
	b := NewBatch(nops, 4, ncqe)
	t.Cleanup(b.Free)
	return b
}

// TestStaticallyLinked: liburing is linked in, not loaded at run time: the
// binary does not need liburing.so (what ldd would list) and none is mapped.
func TestStaticallyLinked(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	f, err := elf.Open(exe)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	libs, err := f.ImportedLibraries()
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range libs {
		if strings.HasPrefix(l, "liburing") {
			t.Fatalf("the binary needs %s (all: %v)", l, libs)
		}
	}
	maps, err := os.ReadFile("/proc/self/maps")
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(maps, []byte("liburing.so")) {
		t.Fatalf("liburing.so mapped:\n%s", maps)
	}
}

// TestRunNops: SQEs go in and their CQEs come back in one Run,
// with one io_uring_enter.
func TestRunNops(t *testing.T) {
	r := newRing(t, 16, 0, 0)
	if p := r.Params(); p.SQEntries != 16 || p.CQEntries != 32 || p.Features&FeatNoDrop == 0 {
		t.Fatalf("params %+v", p)
	}
	probe, err := r.Probe()
	if err != nil || !probe[IORingOpNop] || !probe[IORingOpRecv] {
		t.Fatalf("probe: %v", err)
	}
	b := newBatch(t, 8, 16)
	ops := b.SQEs()
	for i := 0; i < 8; i++ {
		ops[i] = SQE{Opcode: IORingOpNop, UserData: uint64(100 + i)}
	}
	n, left, err := r.Run(b, 8, 0, -1, 16)
	if err != nil || n != 8 || left != 0 {
		t.Fatalf("Run: %d, %d, %v", n, left, err)
	}
	for i, c := range b.CQEs()[:n] {
		if c.UserData != uint64(100+i) || c.Res != 0 {
			t.Fatalf("cqe %d: %+v", i, c)
		}
	}
	if s := r.Stats(); s.Enters != 1 || s.Submitted != 8 || s.Completions != 8 {
		t.Fatalf("stats %+v", s)
	}
	// Nothing to submit and nothing to wait for: no system call.
	if n, _, err := r.Run(b, 0, 0, 0, 16); n != 0 || err != nil {
		t.Fatalf("idle Run: %d, %v", n, err)
	}
	if s := r.Stats(); s.Enters != 1 {
		t.Fatalf("idle Run entered the kernel: %+v", s)
	}
}

// TestRunSQFull: more SQEs than SQ entries are submitted in rounds;
// a CQ smaller than the batch overflows into the kernel's list and is
// flushed; nothing is lost.
func TestRunSQFull(t *testing.T) {
	r := newRing(t, 2, 4, 0)
	b := newBatch(t, 64, 64)
	ops := b.SQEs()
	for i := range ops {
		ops[i] = SQE{Opcode: IORingOpNop, UserData: uint64(i)}
	}
	n, _, err := r.Run(b, 64, 0, 0, 64)
	if err != nil || n != 64 {
		t.Fatalf("Run: %d, %v", n, err)
	}
	for i, c := range b.CQEs() {
		if c.UserData != uint64(i) {
			t.Fatalf("cqe %d: %+v", i, c)
		}
	}
	if s := r.Stats(); s.SQFull == 0 || s.Overflow == 0 {
		t.Fatalf("stats %+v", s)
	}
}

// TestRunTimeouts: a Run with nothing pending waits out its timeout, through
// EXT_ARG or through a timeout SQE (whose CQE Run consumes itself).
func TestRunTimeouts(t *testing.T) {
	for _, ext := range []bool{true, false} {
		r := newRing(t, 4, 0, 0)
		r.SetExtArg(ext)
		b := newBatch(t, 4, 4)
		start := time.Now()
		n, _, err := r.Run(b, 0, 0, int64(3*time.Millisecond), 4)
		if el := time.Since(start); el < 3*time.Millisecond || err != nil {
			t.Fatalf("ext %v: Run returned after %v: %v", ext, el, err)
		}
		if n != 0 {
			t.Fatalf("ext %v: %d completions after a timeout", ext, n)
		}
	}
}

// TestEnableDisabledRing: a ring set up disabled refuses submissions until
// Enable.
func TestEnableDisabledRing(t *testing.T) {
	r := newRing(t, 4, 0, SetupRDisabled)
	b := newBatch(t, 4, 4)
	b.SQEs()[0] = SQE{Opcode: IORingOpNop, UserData: 1}
	if _, _, err := r.Run(b, 1, 0, 0, 4); !errors.Is(err, unix.EBADFD) {
		t.Fatalf("Run on a disabled ring: %v", err)
	}
	if err := r.Enable(); err != nil {
		t.Fatal(err)
	}
	b.SQEs()[0] = SQE{Opcode: IORingOpNop, UserData: 2}
	n, _, err := r.Run(b, 1, 0, -1, 4)
	if err != nil || n < 1 {
		t.Fatalf("Run after Enable: %d, %v", n, err)
	}
}

// TestSetupError: io_uring_setup's errno comes back as is.
func TestSetupError(t *testing.T) {
	if _, err := Setup(1<<20, 0, 0); !errors.Is(err, unix.EINVAL) {
		t.Fatalf("Setup(2^20): %v", err)
	}
}

// TestGrowSQEs keeps the SQEs written before growing.
func TestGrowSQEs(t *testing.T) {
	b := newBatch(t, 2, 2)
	b.SQEs()[1] = SQE{Opcode: IORingOpNop, UserData: 42}
	b.GrowSQEs(100)
	if ops := b.SQEs(); len(ops) != 100 || ops[1].UserData != 42 {
		t.Fatalf("after GrowSQEs: %d SQEs, %+v", len(ops), ops[1])
	}
}

// TestSilentCompletions: completions marked SilentUserData are consumed in
// C, and do not end a wait, with either kind of timeout.
func TestSilentCompletions(t *testing.T) {
	for _, ext := range []bool{true, false} {
		r := newRing(t, 4, 0, 0)
		r.SetExtArg(ext)
		b := newBatch(t, 4, 4)
		ops := b.SQEs()
		ops[0] = SQE{Opcode: IORingOpNop, UserData: SilentUserData | 1}
		ops[1] = SQE{Opcode: IORingOpAsyncCancel, Addr: 12345, UserData: SilentUserData | 2} // -ENOENT: not an error
		start := time.Now()
		n, _, err := r.Run(b, 2, 0, int64(5*time.Millisecond), 4)
		if el := time.Since(start); err != nil || n != 0 || el < 5*time.Millisecond {
			t.Fatalf("ext %v: Run: %d, %v after %v", ext, n, err, el)
		}
		// Two enters at most: the silent CQEs, posted at submission, end the
		// first wait; the shim drops them and waits on.
		if s := r.Stats(); s.Silent != 2 || s.SilentErr != 0 || s.Enters > 2 {
			t.Fatalf("ext %v: stats %+v", ext, s)
		}
		ops[0] = SQE{Opcode: IORingOpNop, UserData: SilentUserData | 3}
		ops[1] = SQE{Opcode: IORingOpNop, UserData: 7}
		if n, _, err := r.Run(b, 2, 0, -1, 4); n != 1 || err != nil || b.CQEs()[0].UserData != 7 {
			t.Fatalf("ext %v: mixed Run: %d, %v, %+v", ext, n, err, b.CQEs()[0])
		}
	}
}

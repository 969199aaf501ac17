//go:build linux && cgo && !ringloop_nouring

package uring

import (
	"errors"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/ringloop/ringloop/internal/driver"
	"github.com/ringloop/ringloop/internal/liburing"
	"golang.org/x/sys/unix"
)

// TestSetupErrorsSayWhy: a refused io_uring_setup yields an error that is
// both ErrUringUnavailable and the errno, and explains the errno.
func TestSetupErrorsSayWhy(t *testing.T) {
	defer func(f func(uint32, uint32, uint32) (*liburing.Ring, error)) { setupRing = f }(setupRing)
	for errno, want := range map[unix.Errno]string{
		unix.EPERM:  "blocked by seccomp or kernel.io_uring_disabled",
		unix.ENOSYS: "kernel without io_uring",
		unix.ENOMEM: "RLIMIT_MEMLOCK too small (kernels before 5.12)",
	} {
		calls := 0
		setupRing = func(uint32, uint32, uint32) (*liburing.Ring, error) {
			calls++
			return nil, errno
		}
		fds := countFDs(t)
		d, err := New(driver.Config{})
		if d != nil || err == nil {
			t.Fatalf("%v: New succeeded", errno)
		}
		if !errors.Is(err, driver.ErrUringUnavailable) || !errors.Is(err, errno) {
			t.Fatalf("%v: error %q is not ErrUringUnavailable and the errno", errno, err)
		}
		if !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), errno.Error()) {
			t.Fatalf("%v: error %q does not say %q", errno, err, want)
		}
		if calls != 1 {
			t.Fatalf("%v: setup tried %d times; only EINVAL steps down the ladder", errno, calls)
		}
		if n := countFDs(t); n != fds {
			t.Fatalf("%v: fds %d before, %d after a failed New", errno, fds, n)
		}
	}
}

// TestSetupLadder: EINVAL (a flag the kernel lacks) steps down to plainer
// setup flags; the driver still works and says which flags it got.
func TestSetupLadder(t *testing.T) {
	defer func(f func(uint32, uint32, uint32) (*liburing.Ring, error)) { setupRing = f }(setupRing)
	real := setupRing
	setupRing = func(e, c, flags uint32) (*liburing.Ring, error) {
		if flags&(liburing.SetupSingleIssuer|liburing.SetupDeferTaskrun|liburing.SetupCoopTaskrun) != 0 {
			return nil, unix.EINVAL // a kernel without the taskrun flags
		}
		return real(e, c, flags)
	}
	d := newLocked(t, driver.Config{})
	f := d.Features()
	if f.SingleIssuer || f.DeferTaskrun || f.CoopTaskrun {
		t.Fatalf("features %v after the taskrun flags were refused", f)
	}
	if !strings.Contains(f.Reasons[0], "no taskrun flags") {
		t.Fatalf("reason %q", f.Reasons[0])
	}
	echo(t, d)
}

// TestSetupInvalidEntries: a real EINVAL from the kernel surfaces with its
// meaning once the ladder is exhausted.
func TestSetupInvalidEntries(t *testing.T) {
	_, err := New(driver.Config{Entries: 1 << 20})
	if !errors.Is(err, driver.ErrUringUnavailable) || !errors.Is(err, unix.EINVAL) {
		t.Fatalf("New with 2^20 entries: %v", err)
	}
	if !strings.Contains(err.Error(), "entries") {
		t.Fatalf("error %q does not explain EINVAL", err)
	}
}

// TestFeaturesPerProfile: each profile masks the probe to its kernel, and
// the variant chosen for each op follows; on a kernel older than the profile
// (or without some backport) the driver chooses what this kernel has, as
// asked of it directly.
func TestFeaturesPerProfile(t *testing.T) {
	type want = featureSet
	wants := map[driver.Profile]want{
		driver.Kernel510: {polled: true},
		driver.Kernel515: {extArg: true, multiPoll: true, polled: true},
		driver.Kernel519: {extArg: true, multiPoll: true, multiAccept: true, bufRing: true, msgRing: true, cancelFD: true, coop: true},
		driver.Kernel61:  {extArg: true, multiPoll: true, multiAccept: true, bufRing: true, msgRing: true, cancelFD: true, multiRecv: true, single: true, deferTR: true},
		driver.Native:    {extArg: true, multiPoll: true, multiAccept: true, bufRing: true, msgRing: true, cancelFD: true, multiRecv: true, single: true, deferTR: true},
	}
	forEachProfile(t, func(t *testing.T, p driver.Profile) {
		d := newLocked(t, driver.Config{Profile: p})
		f := d.Features()
		got := want{f.ExtArg, f.MultishotAccept, f.MultishotRecv, f.MultishotPoll, f.BufRing, f.PolledRecv, f.MsgRing, f.CancelFD,
			f.SingleIssuer, f.DeferTaskrun, f.CoopTaskrun}
		k := kernel(t)
		if w := k.on(wants[p]); got != w {
			t.Fatalf("profile %s: features %s\ngot  %+v\nwant %+v (kernel %+v)", p, f, got, w, k)
		}
		if f.Backend != driver.NameURing || f.Profile != p || !f.NoDrop || !f.FastPoll {
			t.Fatalf("profile %s: %s", p, f)
		}
		if len(f.Reasons) < 8 {
			t.Fatalf("profile %s: too few reasons: %q", p, f.Reasons)
		}
		t.Log(f)
		echo(t, d)
	})
}

// TestEnableOnLoopThread: New on one goroutine, Enable and Wait on another
// (locked) one, as the engine does.
func TestEnableOnLoopThread(t *testing.T) {
	d, err := New(driver.Config{})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error)
	go func() {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		defer d.Close()
		if err := d.Enable(); err != nil {
			done <- err
			return
		}
		done <- echoErr(d)
	}()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

// TestWaitFromWrongThread: with SINGLE_ISSUER, a Wait on another thread
// fails with an error that says what to do, instead of misbehaving; on a
// kernel without it (Debian's 5.10), any thread may wait.
func TestWaitFromWrongThread(t *testing.T) {
	d, err := New(driver.Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	single := kernel(t).single
	if d.Features().SingleIssuer != single {
		t.Fatalf("SINGLE_ISSUER %v on a kernel that has it: %v (%s)", d.Features().SingleIssuer, single, d.Features())
	}
	enabled := make(chan struct{})
	release := make(chan struct{})
	go func() {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		if err := d.Enable(); err != nil {
			t.Error(err)
		}
		close(enabled)
		<-release // keep this thread (the issuer) alive and busy
	}()
	<-enabled
	defer close(release)
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	_, err = d.Wait(time.Millisecond, func(*driver.Completion) {})
	if !single {
		if err != nil {
			t.Fatalf("Wait from another thread without SINGLE_ISSUER: %v", err)
		}
		return
	}
	if !errors.Is(err, unix.EEXIST) || !strings.Contains(err.Error(), "LockOSThread") {
		t.Fatalf("Wait from another thread: %v", err)
	}
}

// TestNewRefusesParked: the ring serves locked loops only; a parked loop's
// driver is NewBatched, and New says so rather than building a ring whose
// completion work would follow whichever thread submitted.
func TestNewRefusesParked(t *testing.T) {
	d, err := New(driver.Config{Parked: true})
	if err == nil {
		d.Close()
		t.Fatal("New built a parked ring")
	}
	if !strings.Contains(err.Error(), "NewBatched") {
		t.Fatalf("New(Parked): %v, want it to name NewBatched", err)
	}
}

//go:build linux && cgo && !ringloop_nouring

package uring

import (
	"fmt"
	"os"
	"strings"
	"testing"
	"unsafe"

	"github.com/ringloop/ringloop/internal/driver"
	"github.com/ringloop/ringloop/internal/drivertest"
	"github.com/ringloop/ringloop/internal/liburing"
)

// mappingPerms returns the permissions of the mapping holding addr in
// /proc/self/maps, or "" when addr is not mapped.
func mappingPerms(t *testing.T, addr uintptr) string {
	t.Helper()
	maps, err := os.ReadFile("/proc/self/maps")
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(maps), "\n") {
		var lo, hi uintptr
		var perms string
		if n, _ := fmt.Sscanf(line, "%x-%x %s", &lo, &hi, &perms); n == 3 && lo <= addr && addr < hi {
			return perms
		}
	}
	return ""
}

// TestCloseOffThreadKeepsKernelMemoryReserved: Close from a thread that
// cannot drain the ring (SINGLE_ISSUER) does not unmap the receive buffers
// a receive still armed in the kernel may write into: their addresses stay
// reserved, inaccessible, so nothing else can be mapped there.
func TestCloseOffThreadKeepsKernelMemoryReserved(t *testing.T) {
	var d *Driver
	withRecvMode(recvMultiRing, func() { d = newLocked(t, driver.Config{}) })
	if d.setupFlags&liburing.SetupSingleIssuer == 0 {
		t.Skip("no SINGLE_ISSUER ring here: Close drains from any thread")
	}
	if d.recv == recvPlain {
		t.Skip("no provided buffers on this kernel")
	}
	if err := d.Enable(); err != nil {
		t.Fatal(err)
	}
	h := drivertest.NewHarness(t, d)
	fd, _ := drivertest.TCPPair(t)
	h.Own(fd)
	h.Recv(fd, nil)
	h.Wait(0) // the receive is in the kernel
	buf := uintptr(unsafe.Pointer(&d.bufs.mem[0]))
	if p := mappingPerms(t, buf); !strings.HasPrefix(p, "rw") {
		t.Fatalf("receive buffers mapped %q before Close", p)
	}
	before := QuarantinedBytes()
	done := make(chan struct{})
	go func() { d.Close(); close(done) }() // another thread
	<-done
	if p := mappingPerms(t, buf); !strings.HasPrefix(p, "---") {
		t.Fatalf("receive buffers after an undrained Close: mapping %q, want an inaccessible reservation", p)
	}
	if QuarantinedBytes() <= before {
		t.Fatal("QuarantinedBytes did not count the held-back memory")
	}
}

//go:build linux && cgo && !ringloop_nouring

package uring

import (
	"fmt"
	"sync/atomic"
	"testing"
	"time"
	"unsafe"

	"github.com/ringloop/ringloop/internal/liburing"
	"golang.org/x/sys/unix"
)

// The benchmarks in this file measure designs the driver does not use (the
// package doc's "Designs measured and not used" says why): registered files
// and SEND_ZC. They drive a plain ring from Go the way the parked variant
// does (SQEs written into shared memory, MSG_DONTWAIT requests completing
// inside one io_uring_enter), so the figures compare with its costs.

// UAPI values liburing 2.3's header lacks (6.2).
const (
	sendZCReportUsage   = 1 << 3  // IORING_SEND_ZC_REPORT_USAGE, in the SQE's ioprio
	notifUsageZCCopied  = 1 << 31 // IORING_NOTIF_USAGE_ZC_COPIED, in the notification's res
	cqeFMore            = 1 << 1  // IORING_CQE_F_MORE
	cqeFNotif           = 1 << 3  // IORING_CQE_F_NOTIF
	ioringRegisterFiles = 2       // IORING_REGISTER_FILES
	iosqeFixedFile      = 1       // IOSQE_FIXED_FILE
)

// benchRing is a plain ring driven from Go, as ringBatch drives it.
type benchRing struct {
	ring *liburing.Ring
	raw  liburing.RawRing
	cqes []benchCQE // the last enter's completions
}

type benchCQE struct {
	ud    uint64
	res   int32
	flags uint32
}

func newBenchRing(b *testing.B) *benchRing {
	r, err := liburing.Setup(64, 128, 0)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(r.Close)
	br := &benchRing{ring: r, raw: r.Raw(), cqes: make([]benchCQE, 0, 128)}
	for i := uint32(0); i < br.raw.SQEntries; i++ {
		*(*uint32)(unsafe.Add(br.raw.SQArray, 4*i)) = i
	}
	return br
}

// put queues one SQE; enter submits what put queued.
func (r *benchRing) put(opcode, sqeFlags uint8, ioprio uint16, fd int32, p []byte, msgFlags uint32, ud uint64) {
	tail := *r.raw.SQTail
	*(*liburing.SQE)(unsafe.Add(r.raw.SQEs, uintptr(tail&r.raw.SQMask)*liburing.SQESize)) = liburing.SQE{
		Opcode: opcode, Flags: sqeFlags, IOPrio: ioprio, FD: fd,
		Addr: uint64(uintptr(unsafe.Pointer(&p[0]))), Len: uint32(len(p)), OpFlags: msgFlags, UserData: ud,
	}
	atomic.StoreUint32(r.raw.SQTail, tail+1)
}

// enter submits the queued SQEs, waits for wait completions and collects
// every CQE posted into r.cqes.
func (r *benchRing) enter(b *testing.B, wait int) {
	toSubmit := *r.raw.SQTail - atomic.LoadUint32(r.raw.SQHead)
	for {
		_, _, errno := unix.Syscall6(unix.SYS_IO_URING_ENTER, uintptr(r.raw.FD), uintptr(toSubmit), uintptr(wait), liburing.EnterGetEvent, 0, 0)
		if errno == 0 {
			break
		}
		if errno != unix.EINTR {
			b.Fatalf("io_uring_enter: %v", errno)
		}
		toSubmit = *r.raw.SQTail - atomic.LoadUint32(r.raw.SQHead)
	}
	r.cqes = r.cqes[:0]
	head, tail := *r.raw.CQHead, atomic.LoadUint32(r.raw.CQTail)
	for ; head != tail; head++ {
		c := (*liburing.CQE)(unsafe.Add(r.raw.CQEs, uintptr(head&r.raw.CQMask)*liburing.CQESize))
		r.cqes = append(r.cqes, benchCQE{ud: c.UserData, res: c.Res, flags: c.Flags})
	}
	atomic.StoreUint32(r.raw.CQHead, head)
}

// benchBuf returns n bytes outside the Go heap: the kernel reads and
// writes it while the goroutine may move its stack, and needs no pin.
func benchBuf(b *testing.B, n int) []byte {
	p, err := mmap(n)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { unix.Munmap(p) })
	return p
}

// cpuClock is the process's user+system CPU time.
func cpuClock() time.Duration {
	var ru unix.Rusage
	unix.Getrusage(unix.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// reportCPU adds the process's CPU per op since start to the output.
func reportCPU(b *testing.B, start time.Duration) {
	b.ReportMetric(float64(cpuClock()-start)/float64(b.N), "cpu-ns/op")
}

// BenchmarkFixedFiles: one op is an echo round trip on a loopback TCP pair,
// 128 B: SEND on one end, RECV on the other, SEND back, RECV, four
// MSG_DONTWAIT SQEs in one io_uring_enter that complete inline (the parked
// variant's shape). "registered" names the sockets by their index in the
// ring's registered file table (IOSQE_FIXED_FILE), which spares the kernel
// an fget and fput per request.
func BenchmarkFixedFiles(b *testing.B) {
	for _, fixed := range []bool{false, true} {
		name := map[bool]string{false: "plain", true: "registered"}[fixed]
		b.Run(name, func(b *testing.B) {
			r := newBenchRing(b)
			c, s := tcpPair(b)
			fc, fs, flags := int32(c), int32(s), uint8(0)
			if fixed {
				fds := []int32{int32(c), int32(s)}
				if _, _, errno := unix.Syscall6(unix.SYS_IO_URING_REGISTER, uintptr(r.raw.FD), ioringRegisterFiles,
					uintptr(unsafe.Pointer(&fds[0])), uintptr(len(fds)), 0, 0); errno != 0 {
					b.Skipf("IORING_REGISTER_FILES: %v", errno)
				}
				fc, fs, flags = 0, 1, iosqeFixedFile
			}
			msg, buf := benchBuf(b, 128), benchBuf(b, 4096)
			const dw = unix.MSG_DONTWAIT | unix.MSG_NOSIGNAL
			b.ReportAllocs()
			start := cpuClock()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				r.put(liburing.IORingOpSend, flags, 0, fc, msg, dw, 1)
				r.put(liburing.IORingOpRecv, flags, 0, fs, buf, unix.MSG_DONTWAIT, 2)
				r.put(liburing.IORingOpSend, flags, 0, fs, msg, dw, 3)
				r.put(liburing.IORingOpRecv, flags, 0, fc, buf, unix.MSG_DONTWAIT, 4)
				r.enter(b, 4)
				if len(r.cqes) != 4 {
					b.Fatalf("%d completions, want 4", len(r.cqes))
				}
				for _, cq := range r.cqes {
					if cq.res != int32(len(msg)) {
						b.Fatalf("op %d: res %d, want %d (a short or failed transfer)", cq.ud, cq.res, len(msg))
					}
				}
			}
			b.StopTimer()
			reportCPU(b, start)
		})
	}
}

// BenchmarkSendZC: one op is a send of size bytes on a loopback TCP pair and
// its receive on the other end, SEND or SEND_ZC queued with RECVs in one
// io_uring_enter, which waits for the send's completion and, for SEND_ZC,
// for its notification (the buffer is the kernel's until then). SEND_ZC asks
// the kernel to report whether it copied (IORING_SEND_ZC_REPORT_USAGE):
// "copied/notif" is the fraction of notifications that say so. On loopback
// the kernel copies a zerocopy skb's pages when it is delivered to a local
// socket (skb_orphan_frags_rx), so SEND_ZC pays its page pinning and
// notification and saves no copy.
func BenchmarkSendZC(b *testing.B) {
	for _, size := range []int{128, 1024, 16 << 10, 64 << 10} {
		for _, zc := range []bool{false, true} {
			name := fmt.Sprintf("%d/%s", size, map[bool]string{false: "send", true: "send_zc"}[zc])
			b.Run(name, func(b *testing.B) {
				if zc && !kernel(b).zc {
					b.Skip("kernel without IORING_OP_SEND_ZC (6.0)")
				}
				benchSend(b, size, zc)
			})
		}
	}
}

func benchSend(b *testing.B, size int, zc bool) {
	r := newBenchRing(b)
	c, s := tcpPair(b)
	for _, fd := range []int{c, s} { // room for a whole message in flight
		unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_SNDBUF, 1<<20)
		unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_RCVBUF, 1<<20)
	}
	msg, buf := benchBuf(b, size), benchBuf(b, size)
	opcode, ioprio := uint8(liburing.IORingOpSend), uint16(0)
	if zc {
		opcode, ioprio = liburing.IORingOpSendZC, sendZCReportUsage
	}
	var notifs, copied, enters int
	b.ReportAllocs()
	b.SetBytes(int64(size))
	start := cpuClock()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		r.put(opcode, 0, ioprio, int32(c), msg, unix.MSG_DONTWAIT|unix.MSG_NOSIGNAL, 1)
		r.put(liburing.IORingOpRecv, 0, 0, int32(s), buf, unix.MSG_DONTWAIT, 2)
		sent, got, notified, recvQueued := false, 0, !zc, true
		for !sent || got < size || !notified {
			r.enter(b, 1)
			enters++
			for _, cq := range r.cqes {
				switch {
				case cq.ud == 2:
					recvQueued = false
					if cq.res > 0 {
						got += int(cq.res)
					} else if cq.res != -int32(unix.EAGAIN) {
						b.Fatalf("recv: %d", cq.res)
					}
				case cq.flags&cqeFNotif != 0:
					notified = true
					notifs++
					if uint32(cq.res)&notifUsageZCCopied != 0 {
						copied++
					}
				default:
					if zc && cq.res == -int32(unix.EINVAL) {
						b.Skip("SEND_ZC without IORING_SEND_ZC_REPORT_USAGE (6.2)")
					}
					if cq.res != int32(size) {
						b.Fatalf("send: %d, want %d", cq.res, size)
					}
					sent = true
					if cq.flags&cqeFMore == 0 {
						notified = true // no notification follows
					}
				}
			}
			if got < size && !recvQueued {
				r.put(liburing.IORingOpRecv, 0, 0, int32(s), buf[got:], unix.MSG_DONTWAIT, 2)
				recvQueued = true
			}
		}
	}
	b.StopTimer()
	reportCPU(b, start)
	b.ReportMetric(float64(enters)/float64(b.N), "enters/op")
	if zc {
		b.ReportMetric(float64(notifs)/float64(b.N), "notifs/op")
		if notifs > 0 {
			b.ReportMetric(float64(copied)/float64(notifs), "copied/notif")
		}
	}
}

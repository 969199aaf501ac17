// Package liburing is ringloop's only cgo package: a thin shim over liburing
// (Debian's liburing-dev, 2.3 or newer), statically linked so that binaries
// need no liburing at run time.
//
// The shim exists to keep the cost of cgo at one call per loop iteration. The
// Go side writes whole [SQE]s, in the kernel's layout, into a C-allocated
// [Batch] without any cgo call; [Ring.Run] then, in a single cgo call, hands
// returned receive buffers back to the buffer ring, copies the SQEs into the
// ring (submitting early when the SQ is full), submits and waits with a
// timeout (IORING_ENTER_EXT_ARG, or a timeout SQE on rings without it),
// retries EINTR, and copies the completions into the batch's [CQE] array,
// flushing the kernel's overflow list when the CQ runs dry.
//
// The shim has no code per op: which opcode, flags and fields an op's SQE
// carries is decided by package uring, one file per op family, so a new op
// changes nothing here as long as its opcode and flags are named in ring.go
// (RECVMSG and SENDMSG, for datagrams, are named already).
// Completions marked [SilentUserData] (successful cancels, buffer
// provisioning) and those of its own timeout SQEs are consumed in C: they
// are never copied out and never end a wait early.
//
// The shim counts its io_uring_enter calls ([Stats]) so that benchmarks can
// report system calls per op.
//
// # Builds without liburing
//
// Everything here is built only with cgo on Linux, and not with the build
// tag ringloop_nouring (linux && cgo && !ringloop_nouring). Otherwise the
// package is empty, nothing of liburing is compiled or linked, and package
// uring's New fails with driver.ErrUringUnavailable, "built without liburing
// (CGO_ENABLED=0)" or "(build tag ringloop_nouring)", which the engine logs
// once at startup as it falls back to epoll.
//
// A cgo build on a machine without liburing-dev stops on one line from
// shim.h that names the fix: install liburing-dev, or build with -tags
// ringloop_nouring (or CGO_ENABLED=0). It does not fall back to epoll by
// itself because no such fallback can be made reliable: Go cannot ask at
// build time whether a C header or library exists, and a package's cgo
// flags are fixed, so the link against liburing.a cannot be made optional.
// The alternatives — vendoring liburing, or a second io_uring
// implementation on the kernel's own header — would mean carrying code
// that liburing already maintains. A one-line error and an explicit tag
// keep io_uring built in wherever liburing-dev is installed (as make deps
// and CI do) and never leave a service on epoll by accident. The header test
// uses __has_include; a compiler without it gets the compiler's own error.
package liburing

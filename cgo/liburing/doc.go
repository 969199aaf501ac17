// Package liburing is ringloop's only cgo package: a thin shim over liburing
// (Debian's liburing-dev, 2.3 or newer), statically linked so that binaries
// need no liburing at run time.
//
// The shim exists to keep the cost of cgo at one call per loop iteration. The
// Go side writes fixed-size [Op] descriptors into a C-allocated [Batch]
// without any cgo call; [Ring.Run] then, in a single cgo call, hands returned
// receive buffers back to the buffer ring, preps one SQE per descriptor with
// liburing's inline helpers (submitting early when the SQ is full), submits
// and waits with a timeout (IORING_ENTER_EXT_ARG, or a timeout SQE on rings
// without it), retries EINTR, and copies the completions into the batch's
// [CQE] array, flushing the kernel's overflow list when the CQ runs dry.
// Completions marked [SilentUserData] (successful cancels, buffer
// provisioning) and those of its own timeout SQEs are consumed in C: they
// are never copied out and never end a wait early.
//
// The shim counts its io_uring_enter calls ([Stats]) so that benchmarks can
// report system calls per op.
//
// Everything here is built only with cgo on Linux (build tag linux && cgo);
// without cgo the package is empty and package uring reports that io_uring
// is unavailable.
package liburing

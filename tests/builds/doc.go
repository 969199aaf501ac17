// Package builds checks, by running the go tool, what a service that imports
// ringloop gets under each build configuration:
//
//   - by default (cgo on, liburing-dev installed), io_uring built in;
//   - with cgo on but no liburing header, a build that stops on errors that
//     each name the fix (install liburing-dev, or build with -tags
//     ringloop_nouring);
//   - with -tags ringloop_nouring, a build that needs nothing of liburing and
//     serves on epoll, logging "built without liburing" at startup;
//   - for another GOOS, a build that stops on one line naming Linux, while
//     tasks and timers still build.
//
// The absence of liburing is simulated without a chroot: the C compiler's
// include path is replaced (-nostdinc) by the same directories, where the
// one holding liburing.h is a copy made of links to everything but liburing.
// The tests skip with -short and where no go tool is found (the kernel
// images run test binaries only).
package builds

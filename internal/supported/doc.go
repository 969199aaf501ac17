// Package supported stops a build of ringloop for a platform it does not run
// on, on one line that says so.
//
// ringloop drives Linux's io_uring and epoll, and its packages use Linux's
// system calls throughout; on another GOOS they would fail with a page of
// undefined epoll and socket names. On a 32-bit GOARCH they compile but do
// not work: epoll_pwait2's timespec and the engine's packed tags and
// deadlines assume 64-bit words, and on linux/386 the engine's timer tests
// hang (epoll's waits never time out as asked). Instead, the lowest packages
// (internal/driver, internal/park and the test helpers) import this one from a file
// built only on an unsupported platform, and this package does not compile
// there, so the build stops before them with one of:
//
//	cannot use "ringloop runs on Linux only (io_uring, epoll): build with GOOS=linux" ...
//	cannot use "ringloop needs a 64-bit GOARCH (amd64, arm64, riscv64, ...): 32-bit is not supported" ...
//
// Packages tasks and timers use no system calls and build everywhere.
package supported

// Package linuxonly stops a build of ringloop for any GOOS but Linux on one
// line that says so.
//
// ringloop drives Linux's io_uring and epoll, and its packages use Linux's
// system calls throughout; on another GOOS they would fail with a page of
// undefined epoll and socket names. Instead, the lowest packages (driver,
// internal/park and the test helpers) import this one from a file built only
// off Linux, and this package does not compile there, so the build stops
// before them with:
//
//	cannot use "ringloop runs on Linux only (io_uring, epoll): build with GOOS=linux" ...
//
// Packages tasks and timers use no system calls and build everywhere.
package linuxonly

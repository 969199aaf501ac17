//go:build !linux

package supported

// This declaration is the build error on purpose (see the package doc).
var _ int = "ringloop runs on Linux only (io_uring, epoll): build with GOOS=linux"

// Package tests holds ringloop's integration suites: real loopback traffic
// through the engine, each test under every backend (io_uring, epoll) and
// every kernel profile (5.10, 5.15, 5.19, 6.1, native).
package tests

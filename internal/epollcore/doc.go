// Package epollcore is the epoll driver's engine, shared by the two drivers
// that take readiness from epoll: package epoll, which performs each
// ready fd's recv, send and accept itself, and the io_uring driver's
// readiness variant (package uring), which hands the receives and sends of
// one Wait to the ring as a single batch (see Batch). The model, the
// interest, the fairness budgets and the results are documented in package
// epoll.
package epollcore

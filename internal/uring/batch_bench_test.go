//go:build linux && cgo && !ringloop_nouring

package uring

import (
	"testing"

	"github.com/ringloop/ringloop/internal/driver"
	"github.com/ringloop/ringloop/internal/drivertest"
)

// BenchmarkBatchedSendRecv is BenchmarkSendRecv on the epoll+io_uring driver.
func BenchmarkBatchedSendRecv(b *testing.B) {
	for _, batch := range []int{1, 32} {
		b.Run(map[int]string{1: "batch1", 32: "batch32"}[batch], func(b *testing.B) {
			drivertest.BenchSendRecv(b, func(tb testing.TB, cfg driver.Config) driver.Driver {
				cfg.Parked = true
				d, err := NewBatched(cfg)
				if err != nil {
					tb.Fatal(err)
				}
				tb.Cleanup(func() { d.Close() })
				return d
			}, batch)
		})
	}
}

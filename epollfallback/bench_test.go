package epollfallback_test

import (
	"testing"

	"github.com/ringloop/ringloop/driver"
	"github.com/ringloop/ringloop/driver/drivertest"
	"github.com/ringloop/ringloop/epollfallback"
)

func newBenchDriver(tb testing.TB, cfg driver.Config) driver.Driver {
	d, err := epollfallback.New(cfg)
	if err != nil {
		tb.Fatal(err)
	}
	return d
}

// BenchmarkSendRecv measures one 64-byte send/receive pair per op through
// the epoll driver, one connection per iteration or 32.
func BenchmarkSendRecv(b *testing.B) {
	b.Run("batch=1", func(b *testing.B) { drivertest.BenchSendRecv(b, newBenchDriver, 1) })
	b.Run("batch=32", func(b *testing.B) { drivertest.BenchSendRecv(b, newBenchDriver, 32) })
}

package epoll_test

import (
	"testing"

	"github.com/ringloop/ringloop/internal/driver"
	"github.com/ringloop/ringloop/internal/drivertest"
	"github.com/ringloop/ringloop/internal/epoll"
)

func newDriver(t *testing.T, cfg driver.Config) driver.Driver {
	d, err := epoll.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// TestContract runs the shared driver contract suite under every profile.
func TestContract(t *testing.T) {
	drivertest.Run(t, newDriver)
}

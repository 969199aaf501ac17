package epoll_test

import (
	"testing"

	"github.com/ringloop/ringloop/internal/driver"
	"github.com/ringloop/ringloop/internal/drivertest"
	"github.com/ringloop/ringloop/internal/epoll"
)

// TestGoexitInCallbackLosesNothing: a callback's Goexit leaves the rest of
// its batch to the next Wait (drivertest.GoexitLosesNothing).
func TestGoexitInCallbackLosesNothing(t *testing.T) {
	d, err := epoll.New(driver.Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	drivertest.GoexitLosesNothing(t, d)
}

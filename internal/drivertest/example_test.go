package drivertest_test

import (
	"fmt"
	"testing"

	"github.com/ringloop/ringloop/internal/driver"
	"github.com/ringloop/ringloop/internal/drivertest"
	"github.com/ringloop/ringloop/internal/epoll"
)

// The Harness drives a driver and checks every completion against the
// contract; here a Send crosses a loopback pair to a multishot Recv.
func ExampleHarness() {
	t := &testing.T{}
	d, err := epoll.New(driver.Config{})
	if err != nil {
		fmt.Println(err)
		return
	}
	h := drivertest.NewHarness(t, d)
	fd, peer := drivertest.TCPPair(t)
	h.Own(fd)
	var got []byte
	r := h.Recv(fd, func(p []byte) { got = append(got, p...) })
	peer.Write([]byte("hello"))
	h.Until(0, "data", func() bool { return len(got) == 5 })
	h.Cancel(r)
	h.Until(0, "cancel", func() bool { return r.Done })
	fmt.Println(string(got), drivertest.ErrnoRes(r.Res))
	h.CloseOwned()
	d.Close()
	peer.Close()
	// Output: hello -ECANCELED
}

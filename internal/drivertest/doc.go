// Package drivertest is the contract test suite every driver.Driver must
// pass, run under every kernel profile, on real loopback sockets, pipes and
// eventfds: one table of tests, so that the io_uring and epoll drivers (and
// any later one) are held to the same rules.
//
// A driver's test calls Run with a constructor:
//
//	func TestContract(t *testing.T) {
//		drivertest.Run(t, func(t *testing.T, cfg driver.Config) driver.Driver {
//			d, err := mydriver.New(cfg)
//			if err != nil {
//				t.Fatal(err)
//			}
//			return d
//		})
//	}
//
// Run closes every driver it creates. The tests check, for every completion,
// that its tag belongs to an armed op, that no completion follows an op's
// final one, that More is set only by multishot ops and that Data matches
// Res (the Harness does this); and, per test, the behaviour the contract
// promises: accept storms, checksummed receives and partial sends, connect,
// cancel racing completion, close with ops in flight, polls, wakes, timeouts
// and fd cleanup.
//
// The suite assumes what the contract says and no more: sends on one fd are
// issued one at a time (the contract does not order concurrent sends), and
// results are compared by value, not by the order of completions across ops.
package drivertest

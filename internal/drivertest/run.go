package drivertest

import (
	"testing"

	"github.com/ringloop/ringloop/internal/driver"
)

// Env is what one contract test gets: the profile in force, the threading
// mode, and a way to build drivers under them.
type Env struct {
	// Profile is the kernel profile every driver of the test is built with.
	Profile driver.Profile
	// Parked builds drivers for a parked loop (driver.Config.Parked): their
	// Waits sleep in Go's netpoller.
	Parked    bool
	newDriver func(t *testing.T, cfg driver.Config) driver.Driver
}

// NewDriver builds a driver with cfg (its Profile forced to the Env's);
// the test closes it, and a cleanup closes it again harmlessly.
func (e *Env) NewDriver(t *testing.T, cfg driver.Config) driver.Driver {
	t.Helper()
	cfg.Profile = e.Profile
	cfg.Parked = e.Parked
	d := e.newDriver(t, cfg)
	if d == nil {
		t.Fatal("newDriver returned nil")
	}
	return d
}

// New builds a driver with the default config and wraps it in a Harness
// that closes it at cleanup.
func (e *Env) New(t *testing.T) *Harness {
	t.Helper()
	return NewHarness(t, e.NewDriver(t, driver.Config{}))
}

// contractTest is one row of the table.
type contractTest struct {
	name string
	fn   func(t *testing.T, e *Env)
}

// tests is the contract table; Run runs each row under each profile.
var tests = []contractTest{
	{"AcceptStorm", testAcceptStorm},
	{"ConnectOK", testConnectOK},
	{"ConnectRefused", testConnectRefused},
	{"RecvChecksum", testRecvChecksum},
	{"RecvReset", testRecvReset},
	{"RecvRearm", testRecvRearm},
	{"SendPartialLarge", testSendPartialLarge},
	{"SendBlockedWaits", testSendBlockedWaits},
	{"SendEmpty", testSendEmpty},
	{"SendToResetPeer", testSendToResetPeer},
	{"EchoFromCallbacks", testEchoFromCallbacks},
	{"ManyConnsEcho", testManyConnsEcho},
	{"CancelRacesCompletion", testCancelRace},
	{"CancelEndedIsNoop", testCancelEnded},
	{"CloseWithOpsInFlight", testCloseInFlight},
	{"NoStaleCompletions", testNoStale},
	{"PollPipe", testPollPipe},
	{"PollEventfd", testPollEventfd},
	{"Wake16Goroutines", testWakeStorm},
	{"WakeBeforeWait", testWakeBeforeWait},
	{"WaitTimeouts", testWaitTimeouts},
	{"WaitReturnsCompletions", testWaitReturnsCompletions},
	{"FDCleanup", testFDCleanup},
	{"FullFDTable", testFullFDTable},
	{"UseAfterClose", testUseAfterClose},
	{"Features", testFeatures},
}

// Run runs every contract test against drivers built by newDriver, as
// subtests named profile/mode/test, once per kernel profile in
// [Profiles] and per threading mode, locked and parked (cfg.Profile and
// cfg.Parked are set per subtest). newDriver fails t if it cannot build a
// driver; every driver it returns is closed by the suite.
func Run(t *testing.T, newDriver func(t *testing.T, cfg driver.Config) driver.Driver) {
	run(t, newDriver, false, true)
}

// RunLocked is Run for a driver that serves locked loops only (io_uring's
// ring: a parked loop runs epoll+io_uring, uring.NewBatched).
func RunLocked(t *testing.T, newDriver func(t *testing.T, cfg driver.Config) driver.Driver) {
	run(t, newDriver, false)
}

func run(t *testing.T, newDriver func(t *testing.T, cfg driver.Config) driver.Driver, modes ...bool) {
	for _, p := range Profiles() {
		for _, parked := range modes {
			mode := "locked"
			if parked {
				mode = "parked"
			}
			t.Run(string(p)+"/"+mode, func(t *testing.T) {
				e := &Env{Profile: p, Parked: parked, newDriver: newDriver}
				for _, tc := range tests {
					t.Run(tc.name, func(t *testing.T) { tc.fn(t, e) })
				}
			})
		}
	}
}

package epoll

import (
	"github.com/ringloop/ringloop/internal/driver"
	"github.com/ringloop/ringloop/internal/epollcore"
)

// Driver is the epoll driver. Its methods follow driver.Driver: one loop
// goroutine uses it, except Wake.
type Driver = epollcore.Driver

// ReadBudget is how many reads one armed receive may make per Wait before
// the driver moves on to other fds (Netty's maxMessagesPerRead); the fd is
// resumed at the next Wait.
const ReadBudget = epollcore.ReadBudget

// AcceptBudget is how many connections one armed accept may take per Wait
// before the driver moves on; the listener is resumed at the next Wait.
const AcceptBudget = epollcore.AcceptBudget

// DefaultBufferSize is the size of the loop-owned receive buffer (the most
// one read takes) when Config.BufferSize is 0.
const DefaultBufferSize = epollcore.DefaultBufferSize

// New creates an epoll set and a wake eventfd and probes epoll_pwait2.
func New(cfg driver.Config) (*Driver, error) { return epollcore.New(cfg) }

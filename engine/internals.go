package engine

import (
	"github.com/ringloop/ringloop/internal/driver"
	"github.com/ringloop/ringloop/internal/loopapi"
)

// internals is the loop as loopapi.Internals: what package packet's
// datagram sockets need of the loop they run on. It reaches them through
// Control (a loopctl.Ask request, which loopapi.Open sends), so engine's
// exported surface gains no name for it; internal/loopapi's package doc
// says why. Being one pointer, it goes into an interface unboxed.
type internals struct{ l *Loop }

var _ loopapi.Internals = internals{}

func (in internals) Driver() driver.Driver { return in.l.drv }

func (in internals) Register(r driver.Registration) (idx, gen uint32) {
	return in.l.reg.add(foreign{r})
}

func (in internals) Unregister(idx, gen uint32)         { in.l.reg.remove(idx, gen) }
func (in internals) OnLoop(fn func() error) error       { return in.l.onLoop(fn) }
func (in internals) Control(t interface{ Run() }) error { return in.l.control(t) }
func (in internals) ReportPanic(what string, p any)     { in.l.reportPanic(what, p) }
func (in internals) Fault() error                       { return in.l.fault }
func (in internals) Packets() *loopapi.PacketCounts     { return &in.l.packets }
func (in internals) PacketShared() *any                 { return &in.l.pktShared }

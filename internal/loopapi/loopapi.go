// Package loopapi is a loop's inside as ringloop's own packages that run
// sockets on it (package packet) see it: the Internals interface, which
// package engine implements and hands out through its typed door,
// Loop.Control (see internal/loopctl).
//
// # Why this shape
//
// A datagram socket lives inside its loop as engine's connections do: in
// the loop's slot table, with ops tagged for it on the loop's driver,
// counted in the loop's Metrics, closed by the loop's shutdown. Package
// packet cannot reach engine's unexported fields, and engine cannot import
// packet. Exporting a method per need would grow engine's public surface
// with names no user may call; registering functions at init would hide
// who calls whom behind a global every loop shares; a table of loops on
// the side would outlive them. Instead Open sends a loopctl request
// through Control, which a program outside the module cannot make
// (loopctl is internal), and the loop answers with its Internals. The tag
// layout and the registration contract are internal/driver's (regtag.go),
// the async queue engine.Conn shares with packet's sockets is
// internal/asyncq's. loopctl itself stays free of the driver contract
// (package tasks imports it), hence this package.
package loopapi

import (
	"fmt"

	"github.com/ringloop/ringloop/internal/driver"
	"github.com/ringloop/ringloop/internal/loopctl"
)

// Internals is a loop's inside, for ringloop's packages that run sockets
// of their own on it (package packet's datagram sockets): what package
// engine's own connections use, behind an interface because those packages
// cannot reach engine's unexported fields. Open hands it out through
// engine.Loop.Control (loopctl.Ask), so it reaches no program outside the module. Unless said
// otherwise, a method is for the loop's goroutine only.
type Internals interface {
	// Driver is the loop's driver: arm ops with tags from driver.MakeTag
	// and the slot Register gave.
	Driver() driver.Driver
	// Register adds r to the loop's slot table, so that completions of its
	// tags reach it and the loop's shutdown closes it.
	Register(r driver.Registration) (idx, gen uint32)
	// Unregister frees r's slot once its last op ended.
	Unregister(idx, gen uint32)
	// OnLoop runs fn on the loop and returns its result: at once on the
	// loop, else through the control ring, waiting. Any goroutine.
	OnLoop(fn func() error) error
	// Control queues t on the loop's control ring (Run's door, without the
	// Task). Any goroutine.
	Control(t interface{ Run() }) error
	// ReportPanic logs a panic recovered from a user's callback, as the
	// loop logs its own connections' (counted in Metrics.Panics).
	ReportPanic(what string, p any)
	// Fault is the error that stopped the loop, nil if none.
	Fault() error
	// Packets is the loop's datagram counts, which Metrics publishes
	// (PacketsReceived, PacketsSent, PacketsDropped).
	Packets() *PacketCounts
	// PacketShared is a slot the datagram sockets of the loop share their
	// state in (their receive buffers): the loop only keeps it.
	PacketShared() *any
}

// PacketCounts are the datagram counts of a loop's sockets, kept on the
// loop and published with its metrics.
type PacketCounts struct{ In, Out, Dropped uint64 }

// Open returns loop l's Internals (l is an *engine.Loop).
func Open(l loopctl.Loop) (Internals, error) {
	v, err := loopctl.Ask(l)
	if err != nil {
		return nil, err
	}
	in, ok := v.(Internals)
	if !ok {
		return nil, fmt.Errorf("loopapi: the loop answered %T", v)
	}
	return in, nil
}

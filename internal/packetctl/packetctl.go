// Package packetctl lets package netconn reach two things package packet
// keeps off its public surface: sending a datagram with its own control
// messages (a UDP_SEGMENT run, an ECN mark), and running a function with the
// socket's fd for getsockopt/setsockopt. Package packet sets the functions
// at init; their first argument is a *packet.Conn.
package packetctl

import "net"

var (
	// WriteMsg queues b to to (nil: a connected socket's peer) with the
	// control messages oob, as packet.Conn.WriteToAddr does without them.
	WriteMsg func(pc any, b, oob []byte, to net.Addr) error
	// Control runs f with the socket's fd on its loop, where the fd cannot
	// be closed under f, and waits for it; it fails once the socket closes.
	Control func(pc any, f func(fd uintptr)) error
)

// # Datagrams
//
// ListenPacket and DialPacket open a UDP ("udp", "udp4", "udp6") or Unix
// datagram ("unixgram", paths and "@abstract" names) socket on a loop,
// served by a PacketHandler: OnPacket gets each datagram's payload (valid
// during the call, like OnData) and its source as a netip.AddrPort; a
// netip.AddrPort cannot hold a path, so on a unixgram socket the source is
// the zero AddrPort, SourceAddr returns it as a *net.UnixAddr and Reply
// answers it. WriteTo on the loop queues a copy and allocates nothing;
// called from another goroutine it copies into a bounded queue the loop
// drains, and both refuse with ErrWriteBufferFull (wrapping tasks.ErrRejected) once
// the datagrams held unsent would pass the async write limit
// (BufferLimits.AsyncWrite). PacketOptions sets the datagram options (the
// longest datagram received whole, the batch size, TOS and ECN, hop
// limits, multicast, and IP_PKTINFO for the local address, which Info
// reports and Reply answers from); SocketOptions' ReusePort opens one
// socket per loop of a group on one port.
//
// Batching: a socket waits on readiness (the drivers' Poll op, on io_uring
// and epoll alike), then receives with recvmmsg, Batch datagrams per system
// call, up to 4 calls per readiness report before the loop turns to its
// other work (and back next iteration: readiness is an edge). What the
// handlers write during an iteration is sent at its end with sendmmsg,
// Batch per call, and between the receive batches of a busy socket, so an
// echo holds one batch at most. When the kernel's send buffer is full the
// queue waits for writability. A datagram is never cut: one over MaxSize is
// reported to OnPacketError (ErrTruncated) with its size. ICMP errors on a
// connected socket reach OnPacketError (syscall.ECONNREFUSED for a closed
// port), as does any datagram the kernel refuses, so every datagram the
// socket accepted is sent or reported. The loop's sockets share one receive
// arena (Batch slots of the largest MaxSize), so a dialled socket per peer
// costs no receive buffer of its own.
//
// The system calls sit behind one internal seam (datagramIO: a receive
// pass and a send pass), so io_uring's multishot RECVMSG into a provided
// buffer ring and batched SENDMSG can replace recvmmsg and sendmmsg where
// the kernel has them, with the same handler, queue and errors.
package engine

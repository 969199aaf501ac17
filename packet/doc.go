// Package packet serves datagram sockets (UDP and unixgram) on an
// engine.Loop: the loop receives in batches and calls a Handler for each
// datagram, and sends what the handlers queued once per iteration, in
// batches.
//
// Listen and Dial open a UDP ("udp", "udp4", "udp6") or Unix datagram
// ("unixgram", paths and "@abstract" names) socket on a loop, served by a
// Handler: OnPacket gets each datagram's payload (valid during the call,
// like engine's OnData) and its source as a netip.AddrPort; a
// netip.AddrPort cannot hold a path, so on a unixgram socket the source is
// the zero AddrPort, SourceAddr returns it as a *net.UnixAddr and Reply
// answers it. WriteTo on the loop queues a copy and allocates nothing;
// called from another goroutine it sends at once on the caller's goroutine
// when the socket holds nothing unsent (after its first such write; as
// net.UDPConn does, no copy, no
// hand-off to the loop), else copies into a bounded queue the loop
// drains, and both refuse with engine.ErrWriteBufferFull (wrapping
// tasks.ErrRejected) once the datagrams held unsent would pass
// Options.AsyncWriteLimit. Options sets the rest (the longest datagram
// received whole, the batch size, TOS and ECN, hop limits, multicast,
// IP_PKTINFO for the local address, which Info reports and Reply answers
// from, the socket buffers, and ReusePort: one socket per loop of a group
// on one port).
//
// Receiving: on io_uring where the kernel has multishot RECVMSG (6.0, so
// the native and 6.1 profiles), a socket arms one RECVMSG that stays in
// the kernel while it reads: each datagram lands, with its source and
// control messages, in a buffer of the driver's own datagram buffer ring
// (up to 128 of 68 KiB, fewer when engine.DriverConfig.BufferCount is
// lower; the ring is mapped with the loop's first datagram socket) and reaches
// OnPacket when the loop reaps its completion, with no system call of the
// loop's own per datagram or per batch. A burst beyond the buffers waits
// in the socket's receive buffer until they come back at the next wait,
// so nothing the kernel accepted is dropped by the loop. A socket whose
// MaxSize the buffers cannot hold whole (over 68 KiB less the header)
// receives as on the other kernels. Elsewhere (epoll, the parked loop's
// epoll+io_uring, and io_uring on 5.10 to 5.19) a socket waits on
// readiness (the drivers' Poll op), then receives with recvmmsg, Batch
// datagrams per system call, up to 4 calls per readiness report before
// the loop turns to its other work (and back next iteration: readiness is
// an edge). Single-shot RECVMSG is not used before 6.0: re-armed after
// each completion it takes one datagram per socket and loop iteration,
// where recvmmsg takes Batch per system call. engine.BackendInfo's
// Features.Reasons says which runs ("recvmsg: ...").
//
// Sending: what the handlers write during an iteration is sent at its end
// with sendmmsg, Batch per call, and between the receive batches of a busy
// socket, so an echo holds one batch at most. When the kernel's send
// buffer is full the queue waits for writability. On io_uring, sending each
// datagram as a SENDMSG op submitted with the iteration's other ops was
// measured against sendmmsg on the same loop and cost it more CPU per
// datagram in batches of 32 and 64 (a request and a completion per
// datagram against one system call per batch): sendmmsg stays. A datagram
// written off the loop to a socket with nothing queued (no datagram of the
// loop's or of another goroutine's waiting, no wait for room) skips the
// loop, from the socket's second such write on (the first is queued, so
// a socket only its loop writes never takes the mutex below): the writer sends it with one non-blocking sendmsg, under the
// socket's async-queue mutex, which the loop's queueing and the close take
// too, so it never overtakes a queued datagram nor touches a closed fd.
// One the kernel does not take at once (EAGAIN, ENOBUFS, an ICMP error, a
// refused UDP_SEGMENT) is queued, and the loop sends, retries or reports
// it as any queued datagram: errors reach OnPacketError as before.
// quic-go on netconn writes a batch at a time from its own goroutines:
// each cost a wake-up and a loop pass before.
//
// Runs to one peer (an echo's replies, a burst of QUIC packets) leave
// coalesced, and runs from one peer that arrive coalesced are cut back into
// their datagrams: UDP GSO and GRO (offload.go). The peer and the
// handler see the datagrams as without them.
//
// A datagram is never cut: one over MaxSize is reported to OnPacketError
// (ErrTruncated) with its size. ICMP errors on a connected socket reach
// OnPacketError (syscall.ECONNREFUSED for a closed port), as does any
// datagram the kernel refuses, so every datagram the socket accepted is
// sent or reported; what is still queued when a socket closes is dropped.
// engine.Loop.Metrics counts each kind (PacketsReceived, PacketsSent,
// PacketsDropped; a direct send counts once the loop next serves the
// socket: a receive, a queued send, its close). On readiness the loop's sockets share one receive
// arena (Batch slots of the largest MaxSize), so a dialled socket per peer
// costs no receive buffer of its own; on the ring they share the driver's
// datagram buffers.
//
// # How the package reaches its loop
//
// A socket lives inside its loop as engine's connections do: in the loop's
// slot table, its ops tagged for it on the loop's driver, its counts in
// the loop's Metrics, closed by the loop's shutdown. Those are engine's
// unexported parts. Package packet gets them through the typed door
// engine already has for ringloop's own packages, Loop.Control with a
// loopctl.Task: internal/loopapi's Open sends a request through it, which
// the loop answers with a loopapi.Internals (the driver, the slot table,
// the control ring, panic reports, the datagram counts and the slot its
// sockets share their receive buffers in). The request can be made only
// inside the module, and engine's exported surface stays as it was: no
// method per need, no hook registered at init, no table of loops kept on
// the side (internal/loopapi says why).
package packet

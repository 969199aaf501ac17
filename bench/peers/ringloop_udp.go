package peers

import (
	"fmt"
	"net/netip"
	"os"

	"github.com/ringloop/ringloop/engine"
	"github.com/ringloop/ringloop/packet"
)

func init() {
	registerFamily("ringloop-udp", UDPEcho, FamilyUDP, "ringloop UDP echo (examples/udpecho's handler) on one loop, default packet.Options", startRingloopUDP)
}

// udpEcho sends each datagram back to its source, as examples/udpecho does.
type udpEcho struct{}

func (udpEcho) OnPacket(pc *packet.Conn, b []byte, from netip.AddrPort) {
	_ = pc.WriteTo(b, from)
}

// OnPacketError hears of a datagram lost on the server (truncated, or
// refused by the kernel): on stderr, where a failed round shows it.
func (udpEcho) OnPacketError(_ *packet.Conn, err error) {
	fmt.Fprintln(os.Stderr, "ringloop-udp:", err)
}

func (udpEcho) OnPacketClose(*packet.Conn, error) {}

// ringloopUDPServer is one loop serving one UDP socket.
type ringloopUDPServer struct {
	loop *engine.Loop
	pc   *packet.Conn
	info Info
}

func startRingloopUDP(b engine.Backend, c Config) (Server, error) {
	loop, err := benchLoop(c, engine.WithBackend(b))
	if err != nil {
		return nil, err
	}
	pc, err := packet.Listen(loop, "udp", c.Addr, udpEcho{},
		&packet.Options{RecvBuffer: UDPBuffer, SendBuffer: UDPBuffer})
	if err != nil {
		_ = loop.Close()
		return nil, err
	}
	bi := loop.Backend()
	detail := fmt.Sprintf("%s; SO_RCVBUF, SO_SNDBUF asked %d", bi.Features, UDPBuffer)
	return &ringloopUDPServer{loop, pc, Info{Backend: bi.Name.String(), Threading: bi.Threading.String(), Detail: detail}}, nil
}

func (s *ringloopUDPServer) Addr() string { return s.pc.LocalAddr().String() }
func (s *ringloopUDPServer) Info() Info   { return s.info }

func (s *ringloopUDPServer) Close() error {
	_ = s.pc.Close()
	return s.loop.Close()
}

package dnsserver

import (
	"encoding/binary"
	"errors"
	"log"
	"net"
	"net/netip"
	"strconv"
	"syscall"

	"github.com/ringloop/ringloop/engine"
	"github.com/ringloop/ringloop/frame"
	"github.com/ringloop/ringloop/packet"
)

// Listen serves z on loop: a UDP socket and a TCP listener on one port.
// With port 0 the kernel picks the UDP port, which TCP may have in use:
// then it tries another.
func Listen(loop *engine.Loop, addr string, z *Zone) (*packet.Conn, *engine.Listener, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, nil, err
	}
	for try := 0; ; try++ {
		// ReceiveInfo: each reply leaves from the address its query was
		// sent to, as clients expect of a server bound to a wildcard
		// address.
		pc, err := packet.Listen(loop, "udp", addr, &udpServer{zone: z},
			&packet.Options{ReceiveInfo: true})
		if err != nil {
			return nil, nil, err
		}
		// TCP: a two-byte length, then the message.
		tcp := net.JoinHostPort(host, strconv.Itoa(pc.LocalAddr().(*net.UDPAddr).Port))
		ln, err := engine.Listen(loop, "tcp", tcp, frame.Split(frame.LengthPrefixed(2, binary.BigEndian, 65535), &tcpServer{zone: z}))
		if err == nil {
			return pc, ln, nil
		}
		pc.Close()
		if port != "0" || try == 10 || !errors.Is(err, syscall.EADDRINUSE) {
			return nil, nil, err
		}
	}
}

// udpServer answers queries over UDP. Its callbacks run on the loop one at
// a time, so one reply buffer serves them all.
type udpServer struct {
	zone *Zone
	buf  []byte
}

func (s *udpServer) OnPacket(pc *packet.Conn, b []byte, _ netip.AddrPort) {
	if out := s.zone.Answer(b, s.buf, true); out != nil {
		pc.Reply(out) // a full send queue drops it, as a full socket would
		s.buf = out[:0]
	}
}

// OnPacketError logs what the socket reports: a datagram lost, or one
// over 64 KiB (not a DNS message).
func (s *udpServer) OnPacketError(_ *packet.Conn, err error) { log.Print(err) }

func (s *udpServer) OnPacketClose(*packet.Conn, error) {}

// tcpServer answers queries over TCP, each framed by its length.
type tcpServer struct {
	zone *Zone
	buf  []byte
}

func (s *tcpServer) OnOpen(*engine.Conn) {}

func (s *tcpServer) OnFrame(c *engine.Conn, q []byte) {
	out := s.zone.Answer(q, s.buf, false)
	if out == nil {
		c.Close()
		return
	}
	var n [2]byte
	binary.BigEndian.PutUint16(n[:], uint16(len(out)))
	c.Write(n[:])
	c.Write(out)
	s.buf = out[:0]
}

func (s *tcpServer) OnClose(*engine.Conn, error) {}

// Command dns is an authoritative DNS server on one ringloop loop for the
// zone in an RFC 1035 master file: A, AAAA, TXT and the zone's other
// records, NODATA and NXDOMAIN with the SOA, REFUSED outside the zone,
// FORMERR for a query that does not parse. Over UDP a reply larger than
// 512 bytes, or than the query's EDNS buffer size, is cut with TC set; the
// client then asks over TCP, served on the same port. Messages are parsed
// and packed by github.com/miekg/dns; the sockets are the loop's.
//
//	go run . -addr 127.0.0.1:5353 -zone testdata/example.zone
//	dig @127.0.0.1 -p 5353 www.example.test A
//
// It is a module of its own, so that ringloop's module does not depend on
// miekg/dns.
package main

import (
	"context"
	"encoding/binary"
	"errors"
	"flag"
	"log"
	"net"
	"net/netip"
	"os"
	"os/signal"
	"strconv"
	"syscall"
	"time"

	"github.com/ringloop/ringloop/engine"
	"github.com/ringloop/ringloop/frame"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:5353", "address to serve, over UDP and TCP")
	file := flag.String("zone", "", "the zone's master file (RFC 1035)")
	flag.Parse()
	if err := run(*addr, *file); err != nil {
		log.Fatal(err)
	}
}

func run(addr, file string) error {
	f, err := os.Open(file)
	if err != nil {
		return err
	}
	z, err := readZone(f, file)
	f.Close()
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	loop, err := engine.New()
	if err != nil {
		return err
	}
	defer func() {
		shutdown, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		loop.Shutdown(shutdown)
	}()
	pc, ln, err := listen(loop, addr, z)
	if err != nil {
		return err
	}
	defer ln.Close()
	log.Printf("serving %v", z)
	log.Printf("listening on %s (%s)", pc.LocalAddr(), loop.Backend().Name)
	<-ctx.Done()
	return nil
}

// listen opens the UDP socket and the TCP listener on one port. With port
// 0 the kernel picks the UDP port, which TCP may have in use: then it tries
// another.
func listen(loop *engine.Loop, addr string, z *zone) (*engine.PacketConn, *engine.Listener, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, nil, err
	}
	for try := 0; ; try++ {
		// ReceiveInfo: each reply leaves from the address its query was
		// sent to, as clients expect of a server bound to a wildcard
		// address.
		pc, err := engine.ListenPacket(loop, "udp", addr, &udpServer{zone: z},
			engine.WithPacketOptions(engine.PacketOptions{ReceiveInfo: true}))
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
	zone *zone
	buf  []byte
}

func (s *udpServer) OnPacket(pc *engine.PacketConn, b []byte, _ netip.AddrPort) {
	if out := s.zone.answer(b, s.buf, true); out != nil {
		pc.Reply(out) // a full send queue drops it, as a full socket would
		s.buf = out[:0]
	}
}

// OnPacketError logs what the socket reports: a datagram lost, or one
// over 64 KiB (not a DNS message).
func (s *udpServer) OnPacketError(_ *engine.PacketConn, err error) { log.Print(err) }

func (s *udpServer) OnPacketClose(*engine.PacketConn, error) {}

// tcpServer answers queries over TCP, each framed by its length.
type tcpServer struct {
	zone *zone
	buf  []byte
}

func (s *tcpServer) OnOpen(*engine.Conn) {}

func (s *tcpServer) OnFrame(c *engine.Conn, q []byte) {
	out := s.zone.answer(q, s.buf, false)
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

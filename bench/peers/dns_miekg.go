package peers

import (
	"fmt"
	"net"

	"github.com/miekg/dns"
)

func init() {
	Register(Peer{Name: "miekg-dns", Kind: DNS, Start: startMiekgDNS,
		Doc: "miekg/dns's own dns.Server on net over UDP (a goroutine per query), answering from the same zone with examples/dns's Reply"})
}

// miekgDNSServer is miekg/dns's server on one UDP socket. Its handler is
// examples/dns's answer logic before packing (dnsserver's Reply), so the two
// servers differ only in how queries reach it and replies leave.
type miekgDNSServer struct {
	srv  *dns.Server
	pc   net.PacketConn
	done chan error
	info Info
}

func startMiekgDNS(c Config) (Server, error) {
	z, err := readDNSZone(c)
	if err != nil {
		return nil, err
	}
	pc, err := net.ListenPacket("udp", c.Addr)
	if err != nil {
		return nil, err
	}
	started := make(chan struct{})
	s := &miekgDNSServer{pc: pc, done: make(chan error, 1),
		info: Info{Backend: "netpoll", Threading: "goroutines", Detail: fmt.Sprintf("zone %v; default socket buffers", z)}}
	s.srv = &dns.Server{PacketConn: pc, NotifyStartedFunc: func() { close(started) },
		Handler: dns.HandlerFunc(func(w dns.ResponseWriter, r *dns.Msg) { _ = w.WriteMsg(z.Reply(r, true)) })}
	go func() { s.done <- s.srv.ActivateAndServe() }()
	select {
	case <-started:
		return s, nil
	case err := <-s.done:
		_ = pc.Close()
		return nil, fmt.Errorf("miekg/dns server: %w", err)
	}
}

func (s *miekgDNSServer) Addr() string { return s.pc.LocalAddr().String() }
func (s *miekgDNSServer) Info() Info   { return s.info }

func (s *miekgDNSServer) Close() error {
	err := s.srv.Shutdown()
	if serr := <-s.done; err == nil {
		err = serr
	}
	return err
}

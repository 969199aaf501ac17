package peers

import (
	"errors"
	"net"
)

func init() {
	Register(Peer{Name: "net-udp", Kind: UDPEcho, Start: startNetUDP,
		Doc: "net.UDPConn: one goroutine reading the socket and writing each datagram back, as Go programs do (one system call per datagram each way)"})
}

// netUDPServer is one net.UDPConn and the goroutine serving it.
type netUDPServer struct {
	conn *net.UDPConn
	info Info
	done chan struct{}
}

func (s *netUDPServer) Addr() string { return s.conn.LocalAddr().String() }
func (s *netUDPServer) Info() Info   { return s.info }

func (s *netUDPServer) Close() error {
	err := s.conn.Close()
	<-s.done
	return err
}

// startNetUDP serves one socket from one goroutine: the way a Go UDP
// server is written (net has no batch calls, and goroutines sharing one
// socket would only contend for it).
func startNetUDP(c Config) (Server, error) {
	addr, err := net.ResolveUDPAddr("udp", c.Addr)
	if err != nil {
		return nil, err
	}
	conn, err := net.ListenUDP("udp", addr)
	if err != nil {
		return nil, err
	}
	if err := conn.SetReadBuffer(UDPBuffer); err != nil {
		conn.Close()
		return nil, err
	}
	if err := conn.SetWriteBuffer(UDPBuffer); err != nil {
		conn.Close()
		return nil, err
	}
	detail := "one goroutine, ReadFromUDPAddrPort and WriteToUDPAddrPort"
	if rc, err := conn.SyscallConn(); err == nil {
		detail += "; " + udpBuffers(rc)
	}
	s := &netUDPServer{conn: conn, info: Info{Backend: "netpoll", Threading: "goroutines", Detail: detail}, done: make(chan struct{})}
	go s.serve()
	return s, nil
}

func (s *netUDPServer) serve() {
	defer close(s.done)
	buf := make([]byte, 64<<10)
	for {
		n, from, err := s.conn.ReadFromUDPAddrPort(buf)
		if errors.Is(err, net.ErrClosed) {
			return
		}
		if err != nil {
			continue // a datagram's trouble (none is expected on loopback): the socket serves on
		}
		_, _ = s.conn.WriteToUDPAddrPort(buf[:n], from)
	}
}

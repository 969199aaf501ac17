package peers

import "net"

func init() {
	Register(Peer{Name: "net", Kind: Echo, Doc: "net: a goroutine per connection, a plain read/write loop", Start: startNetEcho})
}

// netServer is a net.Listener with an accept loop.
type netServer struct {
	ln   net.Listener
	info Info
}

func (s *netServer) Addr() string { return s.ln.Addr().String() }
func (s *netServer) Info() Info   { return s.info }
func (s *netServer) Close() error { return s.ln.Close() }

func startNetEcho(c Config) (Server, error) {
	ln, err := net.Listen("tcp", c.Addr)
	if err != nil {
		return nil, err
	}
	go func() {
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			go netEcho(conn)
		}
	}()
	return &netServer{ln, Info{Backend: "netpoll", Threading: "goroutines"}}, nil
}

// netEcho is a read/write loop, not io.Copy: between two TCP connections
// io.Copy splices through a pipe, which no real server does.
func netEcho(c net.Conn) {
	defer c.Close()
	buf := make([]byte, 16<<10)
	for {
		n, err := c.Read(buf)
		if n > 0 {
			if _, werr := c.Write(buf[:n]); werr != nil {
				return
			}
		}
		if err != nil {
			return
		}
	}
}

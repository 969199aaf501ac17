package peers

import "github.com/panjf2000/gnet/v2"

func init() {
	Register(Peer{Name: "gnet-udp", Kind: UDPEcho, Start: startGnetUDP,
		Doc: "gnet v2 UDP echo on one event loop (epoll; recvfrom and sendto per datagram)"})
}

type gnetUDPEcho struct{ gnet.BuiltinEventEngine }

// OnTraffic holds one datagram; Write sends it back to its source.
func (gnetUDPEcho) OnTraffic(c gnet.Conn) gnet.Action {
	b, _ := c.Next(-1)
	_, _ = c.Write(b)
	return gnet.None
}

func startGnetUDP(c Config) (Server, error) {
	return startGnetOn("udp", c, &gnetUDPEcho{}, gnet.WithSocketRecvBuffer(UDPBuffer), gnet.WithSocketSendBuffer(UDPBuffer))
}

package peers

import "github.com/panjf2000/gnet/v2"

func init() {
	Register(Peer{Name: "gnet", Kind: Echo, Doc: "gnet v2 echo on one event loop (epoll)", Start: startGnetEcho})
}

type gnetEcho struct{ gnet.BuiltinEventEngine }

func (gnetEcho) OnTraffic(c gnet.Conn) gnet.Action {
	b, _ := c.Next(-1)
	_, _ = c.Write(b)
	return gnet.None
}

func startGnetEcho(c Config) (Server, error) { return startGnet(c, &gnetEcho{}) }

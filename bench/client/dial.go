package client

import (
	"context"
	"fmt"
	"net"
)

// dialAll opens n connections to addr, passing each through wrap (a TLS
// handshake, say) when it is set, so that every connection is up before a
// measurement starts. On error it closes what it opened.
func dialAll(ctx context.Context, what, addr string, n int, wrap func(net.Conn) (net.Conn, error)) ([]net.Conn, error) {
	conns := make([]net.Conn, 0, n)
	var d net.Dialer
	for range n {
		cn, err := d.DialContext(ctx, "tcp", addr)
		if err == nil && wrap != nil {
			cn, err = wrap(cn)
		}
		if err != nil {
			closeAll(conns)
			return nil, fmt.Errorf("%s: dial %d of %d: %w", what, len(conns)+1, n, err)
		}
		conns = append(conns, cn)
	}
	return conns, nil
}

func closeAll(conns []net.Conn) {
	for _, cn := range conns {
		cn.Close()
	}
}

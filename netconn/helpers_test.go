package netconn_test

import (
	"context"
	"net"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ringloop/ringloop/engine"
	"github.com/ringloop/ringloop/internal/driver"
	"github.com/ringloop/ringloop/internal/testenv"
	"github.com/ringloop/ringloop/loopgroup"
	"github.com/ringloop/ringloop/netconn"
)

// topology builds the loops a test serves on: one loop, or a group of two.
type topology struct {
	name string
	make func(t *testing.T, c testenv.Combo) engine.Loops
}

var topologies = []topology{
	{"loop", newLoop},
	{"group", func(t *testing.T, c testenv.Combo) engine.Loops {
		g, err := loopgroup.New(loopgroup.WithLoops(2), loopgroup.WithEngineOptions(c.Options()...))
		require.NoError(t, err)
		t.Cleanup(func() { require.NoError(t, g.Close()) })
		return g
	}},
}

func newLoop(t *testing.T, c testenv.Combo) engine.Loops {
	l, err := engine.New(c.Options()...)
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, l.Close()) })
	return l
}

// forEach runs fn on one loop under every backend, kernel profile and
// threading mode, and on a group under the native profile (what a group
// adds, hand-off between loops, does not depend on the profile).
func forEach(t *testing.T, fn func(t *testing.T, loops engine.Loops)) {
	testenv.ForEach(t, func(t *testing.T, c testenv.Combo) {
		for _, tp := range topologies {
			if tp.name == "group" && c.Profile != driver.Native {
				continue
			}
			t.Run(tp.name, func(t *testing.T) {
				testenv.CheckLeaks(t)
				fn(t, tp.make(t, c))
			})
		}
	})
}

// listen opens a ringloop listener on loopback, closed at cleanup.
func listen(t *testing.T, loops engine.Loops, opts ...netconn.Option) *netconn.Listener {
	t.Helper()
	ln, err := netconn.Listen(loops, "tcp", "127.0.0.1:0", opts...)
	require.NoError(t, err)
	t.Cleanup(func() { _ = ln.Close() })
	return ln
}

// pipe dials ln through loops and accepts: two ringloop connections.
func pipe(t *testing.T, loops engine.Loops, ln *netconn.Listener, opts ...netconn.Option) (net.Conn, net.Conn, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c1, err := netconn.Dial(ctx, loops, "tcp", ln.Addr().String(), opts...)
	if err != nil {
		return nil, nil, err
	}
	c2, err := ln.Accept()
	if err != nil {
		c1.Close()
		return nil, nil, err
	}
	return c1, c2, nil
}

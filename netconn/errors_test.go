package netconn_test

import (
	"context"
	"errors"
	"net"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ringloop/ringloop/engine"
	"github.com/ringloop/ringloop/internal/testenv"
	"github.com/ringloop/ringloop/netconn"
)

// TestNetErrors: Listen and Dial fail as net.Listen and net.Dial do: one
// *net.OpError reading as net's, the errno inside.
func TestNetErrors(t *testing.T) {
	testenv.ForEach(t, func(t *testing.T, c testenv.Combo) {
		l, err := engine.New(c.Options()...)
		require.NoError(t, err)
		defer l.Close()
		held, err := net.Listen("tcp", "127.0.0.1:0")
		require.NoError(t, err)
		addr := held.Addr().String()

		_, err = netconn.Listen(l, "tcp", addr)
		_, netErr := net.Listen("tcp", addr)
		var oe *net.OpError
		require.ErrorAs(t, err, &oe)
		require.Equal(t, "listen", oe.Op)
		require.False(t, errors.As(oe.Err, new(*net.OpError)), "one OpError, not two")
		require.ErrorIs(t, err, syscall.EADDRINUSE)
		require.Equal(t, netErr.Error(), err.Error())

		require.NoError(t, held.Close())
		_, err = netconn.Dial(context.Background(), l, "tcp", addr)
		_, netErr = net.Dial("tcp", addr)
		require.ErrorAs(t, err, &oe)
		require.Equal(t, "dial", oe.Op)
		require.False(t, errors.As(oe.Err, new(*net.OpError)), "one OpError, not two")
		require.ErrorIs(t, err, syscall.ECONNREFUSED)
		require.Equal(t, netErr.Error(), err.Error())
	})
}

package httpserver_test

import (
	"net"
	"net/http"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ringloop/ringloop/engine"
	"github.com/ringloop/ringloop/httpserver"
	"github.com/ringloop/ringloop/internal/testenv"
)

// TestListenError: an address in use fails Listen as net/http's
// ListenAndServe would: "listen tcp 127.0.0.1:P: bind: address already in
// use", an *net.OpError with the errno inside.
func TestListenError(t *testing.T) {
	testenv.ForEachBackend(t, func(t *testing.T, c testenv.Combo) {
		loop, err := engine.New(c.Options()...)
		require.NoError(t, err)
		defer loop.Close()
		held, err := net.Listen("tcp", "127.0.0.1:0")
		require.NoError(t, err)
		defer held.Close()
		addr := held.Addr().String()
		s, err := httpserver.New(http.NotFoundHandler())
		require.NoError(t, err)
		_, err = s.Listen(loop, "tcp", addr)
		var oe *net.OpError
		require.ErrorAs(t, err, &oe)
		require.Equal(t, "listen", oe.Op)
		require.Equal(t, addr, oe.Addr.String())
		require.ErrorIs(t, err, syscall.EADDRINUSE)
		require.Equal(t, "listen tcp "+addr+": bind: address already in use", err.Error())
	})
}

package netconn_test

import (
	"context"
	"errors"
	"net"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ringloop/ringloop/engine"
	"github.com/ringloop/ringloop/internal/testenv"
	"github.com/ringloop/ringloop/netconn"
)

// TestLoopShutdown: when the loop serving a connection shuts down, a Read
// waiting on it returns the loop's ErrShutdown, Write and Dial fail with
// it, and a waiting Accept returns it too; nothing leaks.
func TestLoopShutdown(t *testing.T) {
	testenv.ForEach(t, func(t *testing.T, c testenv.Combo) {
		testenv.CheckLeaks(t)
		l, err := engine.New(c.Options()...)
		require.NoError(t, err)
		ln, err := netconn.Listen(l, "tcp", "127.0.0.1:0")
		require.NoError(t, err)
		peer, err := net.Dial("tcp", ln.Addr().String())
		require.NoError(t, err)
		defer peer.Close()
		nc, err := ln.Accept()
		require.NoError(t, err)

		rerr := make(chan error, 1)
		go func() { _, err := nc.Read(make([]byte, 8)); rerr <- err }()
		aerr := make(chan error, 1)
		go func() { _, err := ln.Accept(); aerr <- err }()
		require.NoError(t, l.Close())
		err = <-rerr
		require.ErrorIs(t, err, engine.ErrShutdown, "a waiting Read learns why")
		var oe *net.OpError
		require.ErrorAs(t, err, &oe)
		require.Equal(t, "read", oe.Op)
		require.Equal(t, "read tcp "+nc.LocalAddr().String()+"->"+nc.RemoteAddr().String()+": engine: loop shut down", err.Error())
		require.ErrorIs(t, <-aerr, engine.ErrShutdown, "a waiting Accept learns why")
		_, err = nc.Write([]byte("x"))
		require.Error(t, err)
		require.True(t, errors.Is(err, engine.ErrShutdown), "Write after shutdown: %v", err)
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_, err = netconn.Dial(ctx, l, "tcp", ln.Addr().String())
		require.ErrorIs(t, err, engine.ErrShutdown)
		require.ErrorAs(t, err, &oe)
		require.Equal(t, "dial", oe.Op)
		require.Equal(t, "dial tcp "+ln.Addr().String()+": engine: loop shut down", err.Error(), "one OpError, not two")
		require.NoError(t, nc.Close())
		require.NoError(t, ln.Close())
	})
}

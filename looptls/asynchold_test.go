package looptls_test

import (
	"context"
	"io"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ringloop/ringloop/engine"
	"github.com/ringloop/ringloop/internal/testenv"
)

// holder hands its connection to the test and ignores what it reads.
type holder chan *engine.Conn

func (h holder) OnOpen(c *engine.Conn)                { h <- c }
func (h holder) OnData(*engine.Conn, []byte)          {}
func (h holder) OnClose(*engine.Conn, error)          {}
func (h holder) OnHandshakeError(*engine.Conn, error) {}

// onLoop runs fn on c's loop and waits for it.
func onLoop(t *testing.T, c *engine.Conn, fn func()) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	_, err := engine.Submit(c.Loop(), func() (struct{}, error) { fn(); return struct{}{}, nil }).Await(ctx)
	require.NoError(t, err)
}

// TestHoldAsync: plaintext AsyncWrite accepts while held stays behind what
// the loop writes until released; DiscardAsync drops it; a close sends
// what is held.
func TestHoldAsync(t *testing.T) {
	p := testenv.NewPKI(t)
	testenv.ForEach(t, func(t *testing.T, c testenv.Combo) {
		testenv.CheckLeaks(t)
		h := make(holder, 1)
		addr := serve(t, c, h, serverConfig(t, p))
		tc := dial(t, addr, clientConfig(p))
		require.NoError(t, tc.SetDeadline(time.Now().Add(60*time.Second)))
		sc := <-h
		write := func(s string) { _, _ = sc.Write([]byte(s)) }
		var release func()
		onLoop(t, sc, func() { release, _ = sc.HoldAsync(); write("first-") })
		require.NotNil(t, release)
		require.NoError(t, sc.AsyncWrite([]byte("async-")))
		onLoop(t, sc, func() {}) // the held task has run
		onLoop(t, sc, func() { write("second-"); release(); write("third-") })
		var n int
		onLoop(t, sc, func() { _, _ = sc.HoldAsync() })
		require.NoError(t, sc.AsyncWrite([]byte("dropped")))
		onLoop(t, sc, func() {}) // the held task has run
		onLoop(t, sc, func() { n = sc.DiscardAsync() })
		require.NoError(t, sc.AsyncWrite([]byte("held")))
		onLoop(t, sc, func() { _ = sc.Close() })
		got, err := io.ReadAll(tc)
		require.NoError(t, err)
		require.Equal(t, "first-second-async-third-held", string(got))
		require.Equal(t, len("dropped"), n)
	})
}

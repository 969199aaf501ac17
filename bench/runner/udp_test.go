package runner

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ringloop/ringloop/bench/client"
	"github.com/ringloop/ringloop/bench/peers"
	"github.com/ringloop/ringloop/internal/uringcheck"
)

// TestUDPServersLoseNothing checks every UDP echo server, the C one
// included, sends every datagram back whole to the socket it came from:
// 16 sockets with 8 datagrams out each, every echo compared byte for byte,
// none lost, at sizes from the smallest the client sends to 8 KiB.
func TestUDPServersLoseNothing(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs every peer (seconds); not in -short")
	}
	r := New(Config{Root: "..", Bin: t.TempDir()})
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	require.NoError(t, r.Build(ctx))
	vs := r.variants(peers.UDPEcho)
	require.NotEmpty(t, vs, "UDP echo peers are registered")
	for _, v := range vs {
		t.Run(strings.ReplaceAll(v.label, " ", "_"), func(t *testing.T) {
			if v.peer.NeedsURing && noURing() {
				t.Skip(uringcheck.Unavailable())
			}
			require.NoError(t, r.buildErr[v.peer.Name])
			srv, err := r.startServer(ctx, v, Pinned1)
			require.NoError(t, err)
			defer func() { require.NoError(t, srv.stop()) }()
			require.Equal(t, string(peers.UDPEcho), srv.kv["kind"])
			for _, size := range []int{16, 1024, 8 << 10} {
				res, err := client.RunUDPEcho(ctx, client.UDPEchoConfig{Addr: srv.addr, Sockets: 16, InFlight: 8, Size: size, Duration: 100 * time.Millisecond, Verify: true})
				require.NoError(t, err, "size %d", size)
				require.True(t, res.Verified)
				require.Zero(t, res.Lost, "size %d: %+v", size, res)
				require.Equal(t, res.Sent, res.Total, "size %d: every datagram came back", size)
				require.GreaterOrEqual(t, res.Total, int64(16*8), "size %d", size)
			}
		})
	}
}

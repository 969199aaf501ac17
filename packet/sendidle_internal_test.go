package packet

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ringloop/ringloop/internal/asyncq"
)

// TestSendQueueKeepsBurstBuffers: a burst past asyncq.MaxIdleBuffer leaves
// its send buffer for the next one when the socket's maxIdle holds it (so
// steady 1 MiB bursts allocate nothing), and drops it otherwise.
func TestSendQueueKeepsBurstBuffers(t *testing.T) {
	payload := make([]byte, 1400)
	burst := func(q *packetQueue) {
		for range (1 << 20) / len(payload) {
			q.add(nil, nil, payload)
		}
		q.advance(len(q.msgs) - q.head)
	}
	kept := packetQueue{maxIdle: 6 << 20}
	burst(&kept)
	require.Greater(t, cap(kept.buf), asyncq.MaxIdleBuffer)
	require.Zero(t, testing.AllocsPerRun(5, func() { burst(&kept) }))

	dropped := packetQueue{}
	burst(&dropped)
	require.Zero(t, cap(dropped.buf))

	var a asyncq.Queue
	a.MaxIdle = 6 << 20
	a.Recycle(make([]byte, 2<<20))
	require.Equal(t, 2<<20, cap(a.Spare))
	var b asyncq.Queue
	b.Recycle(make([]byte, 2<<20))
	require.Nil(t, b.Spare)
}

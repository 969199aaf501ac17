package packet

import (
	"testing"
	"unsafe"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// TestSendQueueAdoptsAsyncBuffer: an empty send queue takes an async
// queue's entries in place (its buffer becomes the queue's, not a copy),
// each datagram's sockaddr, control message and payload read back as
// written, and steady batches swap the two buffers, allocating nothing.
func TestSendQueueAdoptsAsyncBuffer(t *testing.T) {
	name, ctrl := []byte("sockaddr-16bytes"), []byte("control")
	payloads := [][]byte{[]byte("first"), nil, make([]byte, 1400)}
	batch := func(buf []byte) []byte {
		for i, p := range payloads {
			if i == 1 {
				buf = appendAsyncEntry(buf, nil, ctrl, p)
				continue
			}
			buf = appendAsyncEntry(buf, name, nil, p)
		}
		return buf
	}
	var q packetQueue
	b := batch(nil)
	spare := q.adopt(b)
	require.Nil(t, spare)
	require.Same(t, &b[0], &q.buf[0], "the entries are not copied")
	require.Len(t, q.msgs, len(payloads))
	var h unix.Msghdr
	var iov unix.Iovec
	for i, p := range payloads {
		q.header(i, &h, &iov)
		gotName, gotCtrl := name, []byte(nil)
		if i == 1 {
			gotName, gotCtrl = nil, ctrl
		}
		require.Equal(t, len(gotName), int(h.Namelen), "datagram %d", i)
		if h.Namelen > 0 {
			require.Equal(t, gotName, unsafe.Slice(h.Name, h.Namelen))
		}
		require.Equal(t, len(gotCtrl), int(h.Controllen), "datagram %d", i)
		if h.Controllen > 0 {
			require.Equal(t, gotCtrl, unsafe.Slice(h.Control, h.Controllen))
		}
		require.Equal(t, len(p), int(iov.Len), "datagram %d", i)
		if len(p) > 0 {
			require.Equal(t, p, unsafe.Slice(iov.Base, iov.Len))
		}
	}
	require.Equal(t, 1405+3*packetOverhead, q.bytes)
	q.advance(len(payloads))
	require.True(t, q.empty())

	round := func() {
		spare = q.adopt(batch(spare[:0]))
		q.advance(len(q.msgs) - q.head)
	}
	round()
	round()
	require.Zero(t, testing.AllocsPerRun(100, round))
}

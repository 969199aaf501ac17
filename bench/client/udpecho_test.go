package client

import (
	"context"
	"net"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// udpServer echoes datagrams: all of them, or with drop set every drop-th
// it receives goes unanswered; corrupt flips the last byte of each echo.
func udpServer(t *testing.T, drop int, corrupt bool) string {
	t.Helper()
	pc, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	require.NoError(t, err)
	t.Cleanup(func() { pc.Close() })
	go func() {
		buf := make([]byte, 2048)
		for n := 1; ; n++ {
			k, from, err := pc.ReadFromUDPAddrPort(buf)
			if err != nil {
				return
			}
			if drop > 0 && n%drop == 0 {
				continue
			}
			if corrupt {
				buf[k-1] ^= 0xff
			}
			_, _ = pc.WriteToUDPAddrPort(buf[:k], from)
		}
	}()
	return pc.LocalAddr().String()
}

func TestUDPEchoCountsEveryDatagram(t *testing.T) {
	addr := udpServer(t, 0, false)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	res, err := RunUDPEcho(ctx, UDPEchoConfig{Addr: addr, Sockets: 4, InFlight: 8, Size: 1024, Warmup: 20 * time.Millisecond, Duration: 100 * time.Millisecond, Verify: true})
	require.NoError(t, err)
	require.True(t, res.Verified)
	require.Positive(t, res.Msgs)
	require.Zero(t, res.Lost)
	require.Equal(t, res.Sent, res.Total, "every datagram sent came back")
	require.GreaterOrEqual(t, res.Total, res.Msgs)
	require.Positive(t, res.Latency.P50)
	require.GreaterOrEqual(t, res.RcvbufErrors, int64(0), "the kernel's counter is read")
}

// A server that drops datagrams: each is counted lost once, after
// LossAfter, and replaced, so every socket keeps going.
func TestUDPEchoCountsLoss(t *testing.T) {
	addr := udpServer(t, 10, false)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	res, err := RunUDPEcho(ctx, UDPEchoConfig{Addr: addr, Sockets: 2, InFlight: 4, Size: 64, Duration: 200 * time.Millisecond, LossAfter: 20 * time.Millisecond})
	require.NoError(t, err)
	require.Positive(t, res.Lost)
	require.Equal(t, res.Sent, res.Total+res.Lost, "every datagram came back or was lost: %+v", res)
	require.InDelta(t, 0.1, float64(res.Lost)/float64(res.Sent), 0.02, "one in ten dropped: %+v", res)
}

func TestUDPEchoRejectsCorruption(t *testing.T) {
	addr := udpServer(t, 0, true)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	_, err := RunUDPEcho(ctx, UDPEchoConfig{Addr: addr, Sockets: 1, InFlight: 1, Size: 64, Duration: 50 * time.Millisecond, Verify: true})
	require.ErrorContains(t, err, "differ")
}

func TestParseRcvbufErrors(t *testing.T) {
	snmp := "Ip: Forwarding DefaultTTL\nIp: 1 64\n" +
		"Udp: InDatagrams NoPorts InErrors OutDatagrams RcvbufErrors SndbufErrors InCsumErrors IgnoredMulti MemErrors\n" +
		"Udp: 47365163 27346 12966969 59493765 12966968 0 0 0 0\n" +
		"UdpLite: InDatagrams NoPorts InErrors OutDatagrams RcvbufErrors SndbufErrors InCsumErrors IgnoredMulti MemErrors\n" +
		"UdpLite: 0 0 0 0 5 0 0 0 0\n"
	n, err := ParseRcvbufErrors(snmp)
	require.NoError(t, err)
	require.Equal(t, int64(12966968), n)
	_, err = ParseRcvbufErrors("Ip: Forwarding\nIp: 1\n")
	require.Error(t, err)
}

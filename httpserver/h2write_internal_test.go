package httpserver

import "testing"

// TestH2HeaderLinesAllocFree: encoding a response's header lines over
// HTTP/2 allocates nothing once their names and values have been seen on
// the loop (grpc-go's content type, trailer declarations and status, a
// name h2Name does not know), on a connection that has answered before.
func TestH2HeaderLinesAllocFree(t *testing.T) {
	hc := &h2Conn{lp: &h2Loop{}, encMax: h2TableSize}
	lines := []byte("Content-Type: application/grpc\r\nTrailer: Grpc-Status\r\nTrailer: Grpc-Message\r\n" +
		"X-Custom-Name: some value\r\nGrpc-Status: 0\r\n")
	encode := func() {
		hc.lp.hbuf.Reset()
		hc.encodeLines(lines)
	}
	encode()
	if n := testing.AllocsPerRun(1000, encode); n != 0 {
		t.Errorf("%v allocations per block", n)
	}
}

package peers

import (
	"bufio"
	"bytes"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ringloop/ringloop/bench/client"
)

func TestParseRequest(t *testing.T) {
	get := "GET /plaintext HTTP/1.1\r\nHost: x\r\n\r\n"
	for _, tc := range []struct {
		name    string
		in      string
		n       int
		closing bool
		err     error
	}{
		{"complete", get, len(get), false, nil},
		{"pipelined: only the first", get + get, len(get), false, nil},
		{"incomplete head", get[:10], 0, false, nil},
		{"body counted", "POST / HTTP/1.1\r\nContent-Length: 3\r\n\r\nabc", 41, false, nil},
		{"body still coming", "POST / HTTP/1.1\r\nContent-Length: 3\r\n\r\nab", 0, false, nil},
		{"connection close", "GET / HTTP/1.1\r\nConnection: close\r\n\r\n", 37, true, nil},
		{"HTTP/1.0 closes", "GET / HTTP/1.0\r\n\r\n", 18, true, nil},
		{"HTTP/1.0 keep-alive", "GET / HTTP/1.0\r\nConnection: keep-alive\r\n\r\n", 42, false, nil},
		{"chunked refused", "POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n", 0, true, errNotImplemented},
		{"bad request line", "GET\r\n\r\n", 0, true, errBadRequest},
		{"bad protocol", "GET / HTTP/2.0\r\n\r\n", 0, true, errBadRequest},
		{"bad header", "GET / HTTP/1.1\r\nno colon\r\n\r\n", 0, true, errBadRequest},
		{"bad length", "GET / HTTP/1.1\r\nContent-Length: -1\r\n\r\n", 0, true, errBadRequest},
		{"head too large", "GET / HTTP/1.1\r\nX: " + strings.Repeat("a", maxHeader) + "\r\n\r\n", 0, true, errHeaderTooBig},
		{"endless head", "GET / HTTP/1.1\r\nX: " + strings.Repeat("a", maxHeader), 0, true, errHeaderTooBig},
	} {
		t.Run(tc.name, func(t *testing.T) {
			n, closing, err := parseRequest([]byte(tc.in))
			require.Equal(t, tc.err, err)
			require.Equal(t, tc.n, n)
			require.Equal(t, tc.closing, closing)
		})
	}
}

// The responses the peers build parse as valid plaintext answers.
func TestPlaintextResponsesParse(t *testing.T) {
	b := appendPlaintext(nil, "gnet", false)
	b = appendPlaintext(b, "gnet", true)
	b = appendError(b, 431, "gnet")
	r := bufio.NewReader(bytes.NewReader(b))
	resp, err := client.ReadResponse(r)
	require.NoError(t, err)
	require.NoError(t, client.CheckPlaintext(resp))
	require.False(t, resp.Close)
	resp, err = client.ReadResponse(r)
	require.NoError(t, err)
	require.True(t, resp.Close)
	resp, err = client.ReadResponse(r)
	require.NoError(t, err)
	require.Equal(t, 431, resp.Status)
	require.True(t, resp.Close)
	require.Error(t, client.CheckPlaintext(resp))
}

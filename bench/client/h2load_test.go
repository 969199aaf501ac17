package client

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// h2load 1.52's report of a timing-based run over TLS (its per-client
// table cut).
const h2loadOut = `starting benchmark...
spawning thread #0: 4 total client(s). Timing-based test with 0s of warm-up time and 1s of main duration for measurements.
Warm-up started for thread #0.
progress: 25% of clients started
Warm-up phase is over for thread #0.
Main benchmark duration is started for thread #0.
TLS Protocol: TLSv1.3
Cipher: TLS_AES_128_GCM_SHA256
Server Temp Key: X25519 253 bits
Application protocol: h2
Main benchmark duration is over for thread #0. Stopping all clients.
Stopped all clients for thread #0

finished in 1.00s, 42184.00 req/s, 1.45MB/s
requests: 42184 total, 42224 started, 42184 done, 42184 succeeded, 0 failed, 0 errored, 0 timeout
status codes: 42185 2xx, 0 3xx, 0 4xx, 0 5xx
traffic: 1.45MB (1519138) total, 206.23KB (211181) headers (space savings 94.73%), 535.54KB (548392) data
                     min         max         mean         sd        +/- sd
time for request:       37us      9.14ms       863us       590us    90.71%
`

func TestParseH2Load(t *testing.T) {
	r, err := ParseH2Load(h2loadOut)
	require.NoError(t, err)
	require.Equal(t, H2LoadResult{Requests: 42184, Seconds: 1, Rate: 42184, Data: 548392, Protocol: "h2"}, r)

	bad := `Application protocol: h2c
finished in 512.50ms, 900.00 req/s, 10KB/s
requests: 1000 total, 1000 started, 1000 done, 461 succeeded, 539 failed, 12 errored, 3 timeout
status codes: 461 2xx, 0 3xx, 500 4xx, 39 5xx
traffic: 10KB (10240) total, 2KB (2048) headers (space savings 90.00%), 5KB (5120) data
`
	r, err = ParseH2Load(bad)
	require.NoError(t, err)
	require.Equal(t, H2LoadResult{Requests: 461, Failed: 539, Errored: 12, TimedOut: 3, Non2xx: 539, Seconds: 0.5125, Rate: 900, Data: 5120, Protocol: "h2c"}, r)

	_, err = ParseH2Load("starting benchmark...\nconnect to 127.0.0.1 failed\n")
	require.ErrorContains(t, err, "no totals")
}

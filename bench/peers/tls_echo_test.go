package peers

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/tls"
	"io"
	"net"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ringloop/ringloop/internal/uringcheck"
)

// Every TLS echo peer, in each of its modes, speaks TLS 1.3 with an ECDSA
// P-256 certificate, echoes what it decrypts, and refuses plain bytes
// (which it would echo if it were not speaking TLS).
func TestTLSEchoPeers(t *testing.T) {
	names := Names(TLSEcho)
	require.Equal(t, []string{"net+tls", "netconn+tls-uring", "netconn+tls-epoll", "looptls-uring", "looptls-epoll"}, names)
	for _, n := range names {
		p, err := Lookup(n)
		require.NoError(t, err)
		modes := []string{""}
		if p.Modes != nil {
			modes = p.Modes()
		}
		for _, m := range modes {
			t.Run(n+"/"+m, func(t *testing.T) {
				if p.NeedsURing && uringcheck.Unavailable() != "" && !uringcheck.Required() {
					t.Skip(uringcheck.Unavailable())
				}
				srv, err := p.Start(Config{Addr: "127.0.0.1:0", Threading: m})
				require.NoError(t, err)
				defer func() { require.NoError(t, srv.Close()) }()
				if m != "" {
					require.Equal(t, m, srv.Info().Threading)
				}
				if p.Backend != "" {
					require.Equal(t, p.Backend, srv.Info().Backend, "the backend the peer forces")
				}
				deadline := time.Now().Add(30 * time.Second)

				c, err := tls.DialWithDialer(&net.Dialer{Deadline: deadline}, "tcp", srv.Addr(), &tls.Config{InsecureSkipVerify: true})
				require.NoError(t, err)
				defer c.Close()
				require.NoError(t, c.SetDeadline(deadline))
				st := c.ConnectionState()
				require.Equal(t, uint16(tls.VersionTLS13), st.Version)
				require.Len(t, st.PeerCertificates, 1)
				key, ok := st.PeerCertificates[0].PublicKey.(*ecdsa.PublicKey)
				require.True(t, ok, "an ECDSA key")
				require.Equal(t, elliptic.P256(), key.Curve)
				require.NoError(t, st.PeerCertificates[0].VerifyHostname("127.0.0.1"))
				msg := bytes.Repeat([]byte("ringloop"), 5000) // several records
				go func() { _, _ = c.Write(msg) }()
				got := make([]byte, len(msg))
				_, err = io.ReadFull(c, got)
				require.NoError(t, err)
				require.Equal(t, msg, got)

				plain, err := net.DialTimeout("tcp", srv.Addr(), 30*time.Second)
				require.NoError(t, err)
				defer plain.Close()
				require.NoError(t, plain.SetDeadline(deadline))
				hello := []byte("GET / HTTP/1.0\r\n\r\n")
				_, err = plain.Write(hello)
				require.NoError(t, err)
				back, _ := io.ReadAll(plain) // an alert or nothing, then EOF
				require.False(t, bytes.Contains(back, hello), "plain bytes came back: %q", back)
			})
		}
	}
}

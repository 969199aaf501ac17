package peers

import (
	"bytes"
	"crypto/tls"
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ringloop/ringloop/internal/uringcheck"
)

// Every HTTP/2 peer answers GET /plaintext over HTTP/2 (TLS by ALPN, or h2c
// with prior knowledge) with the plaintext body, and every gRPC peer
// answers GRPCRequest, the bytes h2load posts, with the same message and
// grpc-status 0: h2load reads neither.
func TestH2Peers(t *testing.T) {
	for _, k := range []Kind{H2, H2C, GRPC} {
		for _, p := range All(k) {
			modes := []string{""}
			if p.Modes != nil {
				modes = p.Modes()
			}
			for _, m := range modes {
				t.Run(p.Name+"/"+m, func(t *testing.T) {
					if p.NeedsURing && uringcheck.Unavailable() != "" && !uringcheck.Required() {
						t.Skip(uringcheck.Unavailable())
					}
					srv, err := p.Start(Config{Addr: "127.0.0.1:0", Threading: m})
					require.NoError(t, err)
					defer func() { require.NoError(t, srv.Close()) }()
					if m != "" {
						require.Equal(t, m, srv.Info().Threading)
					}
					var protos http.Protocols
					scheme := "http://"
					if k == H2 {
						protos.SetHTTP2(true)
						scheme = "https://"
					} else {
						protos.SetUnencryptedHTTP2(true)
					}
					tr := &http.Transport{Protocols: &protos, TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}
					defer tr.CloseIdleConnections()
					cl := &http.Client{Transport: tr, Timeout: 30 * time.Second}
					var resp *http.Response
					if k == GRPC {
						req, err := http.NewRequest("POST", scheme+srv.Addr()+GRPCMethod, bytes.NewReader(GRPCRequest()))
						require.NoError(t, err)
						req.Header.Set("Content-Type", "application/grpc")
						req.Header.Set("Te", "trailers")
						resp, err = cl.Do(req)
						require.NoError(t, err)
					} else {
						resp, err = cl.Get(scheme + srv.Addr() + "/plaintext")
						require.NoError(t, err)
					}
					defer resp.Body.Close()
					body, err := io.ReadAll(resp.Body)
					require.NoError(t, err)
					require.Equal(t, 2, resp.ProtoMajor, "HTTP/2")
					require.Equal(t, http.StatusOK, resp.StatusCode)
					if k == GRPC {
						require.Equal(t, GRPCRequest(), body, "the message back")
						require.Equal(t, "0", resp.Trailer.Get("Grpc-Status"), "grpc-message %q", resp.Trailer.Get("Grpc-Message"))
					} else {
						require.Equal(t, PlaintextBody, string(body))
					}
				})
			}
		}
	}
}

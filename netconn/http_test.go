package netconn_test

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"errors"
	"io"
	"math/big"
	"net"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ringloop/ringloop/engine"
	"github.com/ringloop/ringloop/netconn"
)

// echoHandler answers GET with a greeting and POST with its body.
var echoHandler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
	if r.Method == http.MethodPost {
		// HTTP/1 is not full duplex: read the whole body before answering.
		body, err := io.ReadAll(r.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		_, _ = w.Write(body)
		return
	}
	_, _ = io.WriteString(w, "hello "+r.URL.Path)
})

// serve runs srv on ln until cleanup, which shuts it down and checks Serve
// ended because of it.
func serve(t *testing.T, srv *http.Server, ln net.Listener, tlsOn bool) {
	errc := make(chan error, 1)
	go func() {
		if tlsOn {
			errc <- srv.ServeTLS(ln, "", "")
		} else {
			errc <- srv.Serve(ln)
		}
	}()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		require.NoError(t, srv.Shutdown(ctx))
		require.ErrorIs(t, <-errc, http.ErrServerClosed)
	})
}

// exercise sends GETs and a 256 KiB POST through client and checks the answers.
func exercise(t *testing.T, client *http.Client, base string, wantMajor int) {
	for i := range 20 {
		resp, err := client.Get(base + "/x")
		require.NoError(t, err, "GET %d", i)
		body, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		require.NoError(t, err)
		require.Equal(t, "hello /x", string(body))
		require.Equal(t, wantMajor, resp.ProtoMajor)
	}
	big := make([]byte, 256<<10)
	_, _ = rand.Read(big)
	resp, err := client.Post(base+"/echo", "application/octet-stream", bytes.NewReader(big))
	require.NoError(t, err)
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	require.NoError(t, err)
	require.True(t, bytes.Equal(big, body), "POST echo differs (%d bytes back)", len(body))
}

// TestHTTP serves net/http (HTTP/1.1) on a ringloop listener to a client
// that dials through ringloop too.
func TestHTTP(t *testing.T) {
	forEach(t, func(t *testing.T, loops engine.Loops) {
		ln := listen(t, loops)
		serve(t, &http.Server{Handler: echoHandler}, ln, false)
		tr := &http.Transport{DialContext: (&netconn.Dialer{Loops: loops}).DialContext}
		defer tr.CloseIdleConnections()
		exercise(t, &http.Client{Transport: tr, Timeout: 30 * time.Second}, "http://"+ln.Addr().String(), 1)
	})
}

// TestHTTP2TLS serves HTTP/2 over TLS (http.Server.ServeTLS) on a ringloop
// listener, with a self-signed certificate, to a ringloop-dialing client.
func TestHTTP2TLS(t *testing.T) {
	cert, pool := selfSigned(t)
	forEach(t, func(t *testing.T, loops engine.Loops) {
		ln := listen(t, loops)
		srv := &http.Server{Handler: echoHandler, TLSConfig: &tls.Config{Certificates: []tls.Certificate{cert}}}
		serve(t, srv, ln, true)
		tr := &http.Transport{
			DialContext:       (&netconn.Dialer{Loops: loops}).DialContext,
			TLSClientConfig:   &tls.Config{RootCAs: pool},
			ForceAttemptHTTP2: true,
		}
		defer tr.CloseIdleConnections()
		exercise(t, &http.Client{Transport: tr, Timeout: 30 * time.Second}, "https://"+ln.Addr().String(), 2)
	})
}

// TestTLS runs crypto/tls handshakes over ringloop connections on both ends
// and echoes through them, closing with close_notify.
func TestTLS(t *testing.T) {
	cert, pool := selfSigned(t)
	forEach(t, func(t *testing.T, loops engine.Loops) {
		ln := listen(t, loops)
		for range 3 {
			c1, c2, err := pipe(t, loops, ln)
			require.NoError(t, err)
			srv := tls.Server(c2, &tls.Config{Certificates: []tls.Certificate{cert}})
			cli := tls.Client(c1, &tls.Config{RootCAs: pool, ServerName: "127.0.0.1"})
			done := make(chan error, 1)
			go func() {
				defer srv.Close()
				_, err := io.Copy(srv, srv) // echo until close_notify
				done <- err
			}()
			msg := make([]byte, 300<<10)
			_, _ = rand.Read(msg)
			go func() { _, _ = cli.Write(msg) }()
			got := make([]byte, len(msg))
			_, err = io.ReadFull(cli, got)
			require.NoError(t, err)
			require.True(t, bytes.Equal(msg, got))
			require.True(t, cli.ConnectionState().HandshakeComplete)
			require.NoError(t, cli.CloseWrite()) // close_notify only: crypto/tls leaves the TCP side open
			require.NoError(t, <-done)
			_, err = cli.Read(got)
			require.True(t, errors.Is(err, io.EOF), "after the server closed: %v", err)
			require.NoError(t, cli.Close())
		}
	})
}

// selfSigned makes a certificate for 127.0.0.1 and a pool trusting it.
func selfSigned(t *testing.T) (tls.Certificate, *x509.CertPool) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "ringloop test"},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(time.Hour),
		IPAddresses:           []net.IP{net.IPv4(127, 0, 0, 1)},
		KeyUsage:              x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	require.NoError(t, err)
	leaf, err := x509.ParseCertificate(der)
	require.NoError(t, err)
	pool := x509.NewCertPool()
	pool.AddCert(leaf)
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key, Leaf: leaf}, pool
}

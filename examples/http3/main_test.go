package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"testing"
	"time"

	"github.com/quic-go/quic-go/http3"
	"golang.org/x/sync/errgroup"

	"github.com/ringloop/ringloop/internal/testenv"
)

func TestMain(m *testing.M) {
	testenv.RunMain(main)
	os.Exit(m.Run())
}

// client is an HTTP/3 client over its own QUIC connection (quic-go keeps
// one per host in a transport), trusting pool's certificates.
func client(t *testing.T, tlsConf *tls.Config) *http.Client {
	tr := &http3.Transport{TLSClientConfig: tlsConf}
	t.Cleanup(func() { tr.Close() })
	return &http.Client{Transport: tr, Timeout: 60 * time.Second}
}

func do(c *http.Client, method, url string, body []byte) ([]byte, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, method, url, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	resp, err := c.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK || resp.ProtoMajor != 3 {
		return nil, fmt.Errorf("%s %s: %s %s", method, url, resp.Proto, resp.Status)
	}
	return b, nil
}

// TestHTTP3 runs the command on ringloop's PacketConn and drives it with
// quic-go's HTTP/3 client: a GET, a 6 MiB POST echoed back byte for byte,
// 200 GETs at once over 8 connections; SIGINT then shuts it down with
// exit status 0, and the client's connections close leaving no goroutine
// or file descriptor behind.
func TestHTTP3(t *testing.T) {
	pki := testenv.NewPKI(t)
	certFile, keyFile := pki.LeafFiles(t, "localhost", "localhost", "127.0.0.1")
	tlsConf := &tls.Config{RootCAs: pki.Pool}
	testenv.ForEach(t, func(t *testing.T, c testenv.Combo) {
		testenv.CheckLeaks(t)
		p := testenv.StartMain(t, c, "-addr", "127.0.0.1:0", "-cert", certFile, "-key", keyFile)
		base := "https://" + p.Addr
		hc := client(t, tlsConf)
		got, err := do(hc, http.MethodGet, base+"/", nil)
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != "hello over HTTP/3.0\n" {
			t.Fatalf("GET /: %q", got)
		}

		body := make([]byte, 6<<20)
		rand.Read(body)
		got, err = do(hc, http.MethodPost, base+"/echo", body)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, body) {
			t.Fatalf("POST /echo: %d bytes back of %d, or different", len(got), len(body))
		}

		var g errgroup.Group
		for range 8 {
			hc := client(t, tlsConf)
			for range 25 {
				g.Go(func() error {
					got, err := do(hc, http.MethodGet, base+"/", nil)
					if err == nil && string(got) != "hello over HTTP/3.0\n" {
						err = fmt.Errorf("GET /: %q", got)
					}
					return err
				})
			}
		}
		if err := g.Wait(); err != nil {
			t.Fatal(err)
		}
		p.Interrupt(t)
	})
}

// TestSelfSigned runs the command without -cert and -key: it serves with a
// certificate of its own for 127.0.0.1, signed by its own key.
func TestSelfSigned(t *testing.T) {
	c := testenv.Combos()[0]
	c.Need(t)
	p := testenv.StartMain(t, c, "-addr", "127.0.0.1:0")
	var verified error = errors.New("not verified")
	hc := client(t, &tls.Config{
		InsecureSkipVerify: true, // verified below, against the certificate itself
		VerifyConnection: func(cs tls.ConnectionState) error {
			pool := x509.NewCertPool()
			pool.AddCert(cs.PeerCertificates[0])
			_, verified = cs.PeerCertificates[0].Verify(x509.VerifyOptions{Roots: pool, DNSName: "127.0.0.1"})
			return verified
		},
	})
	if _, err := do(hc, http.MethodGet, "https://"+p.Addr+"/", nil); err != nil {
		t.Fatal(err)
	}
	if verified != nil {
		t.Fatal(verified)
	}
	p.Interrupt(t)
}

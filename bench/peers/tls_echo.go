package peers

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"math/big"
	"net"
	"sync"
	"time"

	"github.com/ringloop/ringloop/engine"
)

// The TLS echo peers serve the same read/write loop as the net peer
// (netEcho) behind crypto/tls; only the net.Listener under it differs, so
// their ratio is what ringloop's net.Conn costs or saves under TLS.
func init() {
	Register(Peer{Name: "net+tls", Kind: TLSEcho, Doc: "crypto/tls echo over net's listener: a goroutine per connection, the net peer's read/write loop", Start: startNetTLSEcho})
	registerFamily("netconn+tls", TLSEcho, FamilyTLS,
		"crypto/tls echo over ringloop's net.Listener (package netconn), one loop; the net peer's read/write loop", startNetconnTLSEcho)
}

// TLSServerConfig is the TLS 1.3 configuration every TLS peer serves with:
// a self-signed ECDSA P-256 certificate made once per process, so no key
// or certificate file lives in the repository.
func TLSServerConfig() (*tls.Config, error) {
	tlsOnce.Do(func() {
		var cert tls.Certificate
		cert, tlsErr = selfSigned()
		tlsConfig = &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS13}
	})
	return tlsConfig, tlsErr
}

var (
	tlsOnce   sync.Once
	tlsConfig *tls.Config
	tlsErr    error
)

// selfSigned makes a certificate for localhost and 127.0.0.1 signed by its
// own key; clients skip verification (a loopback benchmark).
func selfSigned() (tls.Certificate, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return tls.Certificate{}, err
	}
	now := time.Now()
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1),
		Subject:      pkix.Name{CommonName: "ringloop bench"},
		NotBefore:    now.Add(-time.Hour),
		NotAfter:     now.Add(24 * time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		DNSNames:     []string{"localhost"},
		IPAddresses:  []net.IP{net.IPv4(127, 0, 0, 1), net.IPv6loopback},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return tls.Certificate{}, err
	}
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}, nil
}

// serveTLSEcho accepts on ln (already wrapping TLS) until it closes, a
// goroutine per connection.
func serveTLSEcho(ln net.Listener) {
	for {
		conn, err := ln.Accept()
		if err != nil {
			return
		}
		go netEcho(conn)
	}
}

func startNetTLSEcho(c Config) (Server, error) {
	cfg, err := TLSServerConfig()
	if err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", c.Addr)
	if err != nil {
		return nil, err
	}
	go serveTLSEcho(tls.NewListener(ln, cfg))
	return &netServer{ln, Info{Backend: "netpoll", Threading: "goroutines", Detail: "crypto/tls 1.3, ECDSA P-256"}}, nil
}

func startNetconnTLSEcho(b engine.Backend, c Config) (Server, error) {
	cfg, err := TLSServerConfig()
	if err != nil {
		return nil, err
	}
	return startOnNetconn(b, c, "crypto/tls 1.3, ECDSA P-256,", func(ln net.Listener) func() error {
		go serveTLSEcho(tls.NewListener(ln, cfg))
		return ln.Close
	})
}

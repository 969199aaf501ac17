package testenv

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// PKI is a test certificate authority with what it signs, written as PEM
// files too, for curl, openssl and programs that take -cert and -key.
type PKI struct {
	Pool   *x509.CertPool // trusts the CA
	CAFile string         // the CA certificate, PEM
	ca     *x509.Certificate
	caKey  *ecdsa.PrivateKey
	dir    string
}

// NewPKI makes a CA valid for a day, in a directory removed after t.
func NewPKI(t testing.TB) *PKI {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	check(t, err)
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "ringloop test CA"},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(24 * time.Hour),
		IsCA:                  true,
		BasicConstraintsValid: true,
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	check(t, err)
	ca, err := x509.ParseCertificate(der)
	check(t, err)
	p := &PKI{Pool: x509.NewCertPool(), ca: ca, caKey: key, dir: t.TempDir()}
	p.Pool.AddCert(ca)
	p.CAFile = filepath.Join(p.dir, "ca.pem")
	check(t, os.WriteFile(p.CAFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600))
	return p
}

// Leaf issues a certificate for cn, valid for names (DNS names or IPs),
// for servers and clients.
func (p *PKI) Leaf(t testing.TB, cn string, names ...string) tls.Certificate {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	check(t, err)
	sn, err := rand.Int(rand.Reader, big.NewInt(1<<62))
	check(t, err)
	tmpl := &x509.Certificate{
		SerialNumber: sn,
		Subject:      pkix.Name{CommonName: cn},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(24 * time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth},
	}
	for _, n := range names {
		if ip := net.ParseIP(n); ip != nil {
			tmpl.IPAddresses = append(tmpl.IPAddresses, ip)
		} else {
			tmpl.DNSNames = append(tmpl.DNSNames, n)
		}
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, p.ca, &key.PublicKey, p.caKey)
	check(t, err)
	leaf, err := x509.ParseCertificate(der)
	check(t, err)
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key, Leaf: leaf}
}

// LeafFiles issues a certificate as Leaf does and writes it and its key as
// PEM files, returning their paths.
func (p *PKI) LeafFiles(t testing.TB, cn string, names ...string) (certFile, keyFile string) {
	t.Helper()
	c := p.Leaf(t, cn, names...)
	keyDER, err := x509.MarshalPKCS8PrivateKey(c.PrivateKey)
	check(t, err)
	sn := c.Leaf.SerialNumber.String()
	certFile = filepath.Join(p.dir, cn+"-"+sn+".pem")
	keyFile = filepath.Join(p.dir, cn+"-"+sn+"-key.pem")
	check(t, os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: c.Certificate[0]}), 0o600))
	check(t, os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: keyDER}), 0o600))
	return certFile, keyFile
}

func check(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

package httpserver

import (
	"crypto/tls"
	"slices"
	"strings"

	"github.com/ringloop/ringloop/engine"
	"github.com/ringloop/ringloop/looptls"
)

// alpnProtos is the ALPN list ListenTLS offers, in its order of
// preference: "h2" then "http/1.1", as net/http offers them, before the
// configuration's other protocols. A configuration whose NextProtos names
// "h2" keeps its order (with "http/1.1" added when missing); one that
// names "http/1.1" and not "h2" asks for HTTP/1.1 only and gets it. The
// list is a new slice: the configuration's may be shared.
func alpnProtos(given []string) []string {
	hasH2, hasH1 := slices.Contains(given, "h2"), slices.Contains(given, "http/1.1")
	switch {
	case hasH2 && hasH1, !hasH2 && hasH1:
		return slices.Clone(given)
	case hasH2:
		return append(slices.Clone(given), "http/1.1")
	}
	return append([]string{"h2", "http/1.1"}, given...)
}

// alpn returns the protocol c's TLS handshake negotiated ("" for none)
// and whether c is a TLS connection.
func alpn(c *engine.Conn) (string, bool) {
	st, ok := looptls.State(c)
	return st.NegotiatedProtocol, ok
}

// inadequateTLS says why c's TLS is too weak for HTTP/2 ("" when it is
// not, or c is plain): RFC 9113 section 9.2 asks for TLS 1.2 or later and,
// on TLS 1.2, an ephemeral key exchange with an AEAD cipher (its appendix A
// lists the rest as prohibited). A configuration allowing older suites
// for HTTP/1.1 clients would otherwise serve them to HTTP/2 ones, which
// must refuse them: the connection gets GOAWAY INADEQUATE_SECURITY, as
// from net/http.
func inadequateTLS(c *engine.Conn) string {
	st, ok := looptls.State(c)
	switch {
	case !ok || st.Version >= tls.VersionTLS13:
		return ""
	case st.Version < tls.VersionTLS12:
		return "HTTP/2 needs TLS 1.2 or later"
	}
	name := tls.CipherSuiteName(st.CipherSuite)
	if strings.Contains(name, "_ECDHE_") && (strings.Contains(name, "_GCM_") || strings.Contains(name, "CHACHA20_POLY1305")) {
		return ""
	}
	return "HTTP/2 prohibits the cipher suite " + name
}

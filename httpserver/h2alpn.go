package httpserver

import (
	"slices"

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

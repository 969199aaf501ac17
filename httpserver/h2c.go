package httpserver

import "golang.org/x/net/http2"

// HTTP/2 starts on a connection with its client preface: over TLS where
// ALPN chose "h2" (ListenTLS offers it), and on Listen's plain port with
// prior knowledge when WithH2C asks for it.

// sniffH2 looks for the client preface at the start of a connection that
// WithH2C serves. It returns true when it took b: a prefix of the preface
// (kept in cs.buf until the rest comes) or the whole of it, which turns
// the connection to HTTP/2. On anything else it returns false, and the
// connection is HTTP/1.1 from there on, with what was kept in cs.buf
// before b.
func (cs *conn) sniffH2(b []byte) bool {
	const preface = http2.ClientPreface
	kept := len(cs.buf)
	need := len(preface) - kept
	m := min(len(b), need)
	if string(b[:m]) != preface[kept:kept+m] {
		cs.clear(flagSniff)
		if cs.has(flagH2) { // ALPN said h2: an invalid preface ends the connection (RFC 9113 section 3.4)
			cs.set(flagLingering)
			_ = cs.c.Close()
			return true
		}
		return false
	}
	if m < need {
		cs.buf = append(cs.buf, b...)
		return true
	}
	cs.clear(flagSniff)
	cs.buf = nil
	startH2(cs, b[need:])
	return true
}

package httpserver

import (
	"errors"

	"golang.org/x/net/http/httpguts"
	"golang.org/x/net/http2/hpack"
)

// An HTTP/2 request's head arrives as HPACK-decoded fields. The server
// checks them as RFC 9113 section 8 asks and lays the request out as the
// HTTP/1.1 parser leaves one (a method, a target, header lines as spans
// into one buffer): the fast API's Request and the adapter's
// newHTTPRequest then serve both protocols with one code path. The
// :authority becomes the Host field, as RFC 9113 section 8.3.1 asks of a
// translation to HTTP/1.1, and cookie fields are joined into one.

// errMalformedH2 is the cause a handler sees of a stream reset for a
// malformed request (RFC 9113 section 8.1.1).
var errMalformedH2 = errors.New("httpserver: malformed HTTP/2 request")

// pseudo-fields, one bit each in h2Block.seen
const (
	pseudoMethod uint8 = 1 << iota
	pseudoScheme
	pseudoPath
	pseudoAuthority
)

// emit takes one decoded field of the header block being read.
func (hc *h2Conn) emit(f hpack.HeaderField) {
	b := &hc.blk
	cfg := hc.cs.s.cfg
	b.list += int(f.Size())
	if !f.IsPseudo() {
		b.count++
	}
	if b.list > cfg.maxHeaderBytes || b.count > cfg.maxHeaders {
		b.tooBig = true
		hc.dec.SetEmitEnabled(false) // decoded on, stored no more
		return
	}
	if b.malformed {
		return
	}
	if f.IsPseudo() {
		if b.regular || b.action == h2Trailers {
			b.malformed = true
			return
		}
		var bit uint8
		var dst *string
		switch f.Name {
		case ":method":
			bit, dst = pseudoMethod, &b.method
		case ":scheme":
			bit, dst = pseudoScheme, &b.scheme
		case ":path":
			bit, dst = pseudoPath, &b.path
		case ":authority":
			bit, dst = pseudoAuthority, &b.authority
		default: // :status, and :protocol, which needs SETTINGS_ENABLE_CONNECT_PROTOCOL
			b.malformed = true
			return
		}
		if b.seen&bit != 0 {
			b.malformed = true
			return
		}
		b.seen |= bit
		*dst = f.Value
		return
	}
	b.regular = true
	if !validH2Name(f.Name) || !httpguts.ValidHeaderFieldValue(f.Value) {
		b.malformed = true
		return
	}
	switch f.Name {
	case "connection", "keep-alive", "proxy-connection", "transfer-encoding", "upgrade":
		b.malformed = true // connection-specific: RFC 9113 section 8.2.2
		return
	case "te":
		if f.Value != "trailers" {
			b.malformed = true
			return
		}
	}
	hc.fields = append(hc.fields, f)
}

// validH2Name reports whether s is a field name HTTP/2 allows: a token in
// lower case.
func validH2Name(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if 'A' <= c && c <= 'Z' || !httpguts.IsTokenRune(rune(c)) {
			return false
		}
	}
	return true
}

// build checks the request's pseudo-fields and lays its head out in st.b
// and st.p. It returns 0, or the status to refuse the request with
// (400: malformed, answered with RST_STREAM PROTOCOL_ERROR).
func (st *h2Stream) build(b *h2Block, fields []hpack.HeaderField) int {
	if b.seen&pseudoMethod == 0 || !validH2Method(b.method) {
		return 400
	}
	target := b.path
	if b.method == "CONNECT" {
		if b.seen&(pseudoScheme|pseudoPath) != 0 || b.authority == "" {
			return 400
		}
		target = b.authority
	} else {
		if b.scheme == "" || b.path == "" {
			return 400
		}
		if b.path[0] != '/' && (b.path != "*" || b.method != "OPTIONS") {
			return 400
		}
	}
	size := len(b.method) + len(target) + len(b.authority) + 16
	for _, f := range fields {
		size += len(f.Name) + len(f.Value) + 2
	}
	buf := make([]byte, 0, size)
	add := func(s string) span {
		lo := len(buf)
		buf = append(buf, s...)
		return span{int32(lo), int32(len(buf))}
	}
	p := &st.p
	*p = parser{lim: &st.hc.cs.s.cfg.limits, h2: true, minor: 1}
	p.method = add(b.method)
	p.target = add(target)
	p.proto = add("HTTP/2.0")
	p.fields = make([]field, 0, len(fields)+1)
	if b.authority != "" {
		name := add("host")
		p.host, p.hostN = add(b.authority), 1
		p.fields = append(p.fields, field{name, p.host})
	}
	cookies := 0
	for _, f := range fields {
		switch f.Name {
		case "host":
			if b.authority != "" {
				continue // :authority stands for it
			}
		case "cookie":
			cookies++
			continue
		case "content-length":
			n := parseLength([]byte(f.Value))
			if n < 0 || st.declared >= 0 && n != st.declared {
				return 400
			}
			st.declared = n
		case "expect":
			st.expect = equalFold([]byte(f.Value), "100-continue")
		}
		fl := field{add(f.Name), add(f.Value)}
		if f.Name == "host" && p.hostN == 0 {
			p.host, p.hostN = fl.value, 1
		}
		p.fields = append(p.fields, fl)
	}
	if cookies > 0 {
		name := add("cookie")
		lo := len(buf)
		for _, f := range fields {
			if f.Name == "cookie" {
				if len(buf) > lo {
					add("; ")
				}
				add(f.Value)
			}
		}
		p.fields = append(p.fields, field{name, span{int32(lo), int32(len(buf))}})
	}
	p.headEnd = len(buf)
	if st.recvDone {
		if st.declared > 0 {
			return 400
		}
		p.kind = bodyNone
	} else {
		p.kind, p.cl = bodyLength, st.declared
	}
	st.b = buf
	return 0
}

// validH2Method reports whether m is a method: a token.
func validH2Method(m string) bool {
	if m == "" {
		return false
	}
	for i := 0; i < len(m); i++ {
		if !httpguts.IsTokenRune(rune(m[i])) {
			return false
		}
	}
	return true
}

// addTrailers lays a whole body's trailers out after it, for the fast
// API's Request.Trailer.
func (st *h2Stream) addTrailers(fields []hpack.HeaderField) {
	p := &st.p
	p.body = span{int32(p.headEnd), int32(len(st.b))}
	for _, f := range fields {
		lo := len(st.b)
		st.b = append(st.b, f.Name...)
		mid := len(st.b)
		st.b = append(st.b, f.Value...)
		p.trailers = append(p.trailers, field{span{int32(lo), int32(mid)}, span{int32(mid), int32(len(st.b))}})
	}
}

package httpserver

import (
	"bytes"
	"net/netip"
)

// span is a byte range relative to the start of the request being parsed, so
// it survives the connection buffer growing or being compacted.
type span struct{ lo, hi int32 }

func (s span) of(b []byte) []byte { return b[s.lo:s.hi] }

// field is one header or trailer line.
type field struct{ name, value span }

// bodyKind says how the request body is delimited.
type bodyKind uint8

const (
	bodyNone bodyKind = iota
	bodyLength
	bodyChunked
)

// chunk decoder phases.
const (
	chunkSize uint8 = iota
	chunkData
	chunkDataEnd
	chunkTrailer
	chunkDone
)

// parseError is a request the server refuses: the status it answers with and
// the text net/http would put after the status (empty for a bare status).
type parseError struct {
	code int
	text string
}

var (
	errMalformed     = &parseError{code: 400}
	errNoHost        = &parseError{400, "missing required Host header"}
	errBadName       = &parseError{400, "invalid header name"}
	errBadHost       = &parseError{400, "malformed Host header"}
	errHeaderTooBig  = &parseError{code: 431}
	errLineTooLong   = &parseError{code: 414}
	errBodyTooBig    = &parseError{code: 413}
	errVersion       = &parseError{505, "unsupported protocol version"}
	errUnsupportedTE = &parseError{code: 501}
	errExpectation   = &parseError{code: 417}
)

// maxBlankLines is how many empty lines (CRLF or LF) may precede a request
// line: net/http skips up to four CR or LF bytes after a POST.
const maxBlankLines = 2

// maxChunkLine bounds a chunk-size line (size and extensions), as net/http.
const maxChunkLine = 4096

// parser reads one request at a time from a byte slice that starts at the
// request's first byte and grows as data arrives; every call resumes where
// the previous one stopped, so a request split into any number of pieces
// costs one pass over its bytes.
type parser struct {
	lim *limits

	scan    int  // head: start of the next unparsed line
	line    bool // head: the request line is parsed
	blank   int  // head: empty lines skipped before the request line
	headEnd int  // length of the head (request line to blank line); 0 until complete

	method, target, proto span
	minor                 uint8 // HTTP/1.minor
	fields                []field
	hostN                 int
	host                  span // Host header value
	absHost               span // host of an absolute-form target
	clN, teN              int
	cl                    int64
	teChunked             bool
	connClose, connKeep   bool
	expect                span
	hasExpect             bool

	kind    bodyKind
	h2      bool  // the request came as an HTTP/2 stream, laid out as if parsed (h2request.go)
	maxBody int64 // the body limit this request is held to (limitBody)
	got     int64 // chunked: data bytes decoded so far
	// chunked body, decoded in place: data from body.lo to wpos, raw input
	// read up to rpos.
	body      span
	cphase    uint8
	chunkLeft int64
	rpos      int
	excess    int64 // chunk framing beyond its allowance, as net/http counts it
	trailers  []field
	trailerN  int // trailer bytes read
}

func (p *parser) reset() {
	f, t := p.fields[:0], p.trailers[:0]
	*p = parser{lim: p.lim, fields: f, trailers: t}
}

// head parses the request line and header fields in b. It returns true once
// the blank line ending them has been read.
func (p *parser) head(b []byte) (bool, *parseError) {
	for {
		i := bytes.IndexByte(b[p.scan:], '\n')
		if i < 0 {
			if len(b) > p.lim.maxHeaderBytes {
				return false, errHeaderTooBig
			}
			if !p.line && len(b) > p.lim.maxLine {
				return false, errLineTooLong
			}
			return false, nil
		}
		lo, next := p.scan, p.scan+i+1
		hi := next - 1
		if hi > lo && b[hi-1] == '\r' {
			hi--
		}
		if !p.line {
			if next > p.lim.maxHeaderBytes {
				return false, errHeaderTooBig
			}
			if hi-lo > p.lim.maxLine {
				return false, errLineTooLong
			}
			p.scan = next
			if hi == lo && p.blank < maxBlankLines {
				// RFC 9112 section 2.2: an empty line before the request
				// line (a client's stray CRLF after a body) is ignored.
				p.blank++
				continue
			}
			if err := p.requestLine(b, lo, hi); err != nil {
				return false, err
			}
			p.line = true
			continue
		}
		if next > p.lim.maxHeaderBytes {
			return false, errHeaderTooBig
		}
		p.scan = next
		if hi == lo {
			p.headEnd = next
			return true, p.finishHead(b)
		}
		fields, err := p.addField(p.fields, b, lo, hi)
		if err != nil {
			return false, err
		}
		p.fields = fields
		p.noteField(b, fields[len(fields)-1])
	}
}

// requestLine parses "METHOD SP target SP HTTP/1.x" as net/http does: split
// at the first two spaces.
func (p *parser) requestLine(b []byte, lo, hi int) *parseError {
	l := b[lo:hi]
	sp1 := bytes.IndexByte(l, ' ')
	if sp1 <= 0 {
		return errMalformed
	}
	rest := l[sp1+1:]
	sp2 := bytes.IndexByte(rest, ' ')
	if sp2 < 0 {
		return errMalformed
	}
	for _, c := range l[:sp1] {
		if !isToken(c) {
			return errMalformed
		}
	}
	p.method = span{int32(lo), int32(lo + sp1)}
	tlo := lo + sp1 + 1
	p.target = span{int32(tlo), int32(tlo + sp2)}
	p.proto = span{int32(tlo + sp2 + 1), int32(hi)}
	v := p.proto.of(b)
	if len(v) != 8 || string(v[:5]) != "HTTP/" || v[6] != '.' || !isDigit(v[5]) || !isDigit(v[7]) {
		return errMalformed
	}
	if err := p.checkTarget(b); err != nil {
		return err
	}
	if v[5] != '1' {
		return errVersion
	}
	p.minor = v[7] - '0'
	return nil
}

// checkTarget accepts origin-form ("/path?query"), "*", absolute-form
// ("scheme://authority/path") and, for CONNECT, authority-form; anything
// else, control bytes or a bad %-escape in the path is malformed.
func (p *parser) checkTarget(b []byte) *parseError {
	t := p.target.of(b)
	if len(t) == 0 {
		return errMalformed
	}
	for _, c := range t {
		if c < 0x20 || c == 0x7f {
			return errMalformed
		}
	}
	switch {
	case t[0] == '/':
		return checkEscapes(t)
	case len(t) == 1 && t[0] == '*':
		return nil
	case string(p.method.of(b)) == "CONNECT":
		if bytes.IndexByte(t, '/') >= 0 || !validHost(t) || !validAuthority(t, true) {
			return errMalformed
		}
		p.absHost = p.target
		return nil
	}
	// absolute-form: scheme "://" authority [path]
	i := 0
	for i < len(t) && (isAlpha(t[i]) || i > 0 && (isDigit(t[i]) || t[i] == '+' || t[i] == '-' || t[i] == '.')) {
		i++
	}
	if i == 0 || len(t) < i+3 || string(t[i:i+3]) != "://" {
		return errMalformed
	}
	a := i + 3
	end := a
	for end < len(t) && t[end] != '/' && t[end] != '?' {
		end++
	}
	auth := t[a:end]
	scheme := t[:i]
	strict := equalFold(scheme, "http") || equalFold(scheme, "https")
	if bytes.IndexByte(auth, '@') >= 0 || bytes.IndexByte(auth, '%') >= 0 || !validHost(auth) || !validAuthority(auth, strict) {
		return errMalformed
	}
	if end < len(t) && t[end] == '/' {
		if err := checkEscapes(t[end:]); err != nil {
			return err
		}
	}
	p.absHost = span{p.target.lo + int32(a), p.target.lo + int32(end)}
	return nil
}

// validAuthority checks the shape of a target's host and port as net/url
// does, so that the fast API accepts no target the adapter (and net/http)
// refuses: a bracketed IPv6 literal, or a host with at most a ":port" of
// digits after its first colon (strictColon: http and https) or its last.
func validAuthority(a []byte, strictColon bool) bool {
	if i := bytes.LastIndexByte(a, '['); i > 0 {
		return false
	} else if i == 0 {
		j := bytes.LastIndexByte(a, ']')
		if j < 0 || !validPort(a[j+1:]) {
			return false
		}
		ip, err := netip.ParseAddr(string(a[1:j]))
		return err == nil && !ip.Is4()
	}
	i := bytes.IndexByte(a, ':')
	if i < 0 {
		return true
	}
	if !strictColon {
		i = bytes.LastIndexByte(a, ':')
	}
	return validPort(a[i:])
}

// validPort accepts "" or ":" and digits.
func validPort(p []byte) bool {
	if len(p) == 0 {
		return true
	}
	if p[0] != ':' {
		return false
	}
	for _, c := range p[1:] {
		if !isDigit(c) {
			return false
		}
	}
	return true
}

// checkEscapes checks the %-escapes of a target's path (the query is not
// decoded by the server, so it is not checked).
func checkEscapes(t []byte) *parseError {
	if q := bytes.IndexByte(t, '?'); q >= 0 {
		t = t[:q]
	}
	for i := 0; i < len(t); i++ {
		if t[i] == '%' {
			if i+2 >= len(t) || !isHex(t[i+1]) || !isHex(t[i+2]) {
				return errMalformed
			}
			i += 2
		}
	}
	return nil
}

// addField parses the header or trailer line b[lo:hi] onto fields, which
// may hold at most maxHeaders lines.
func (p *parser) addField(fields []field, b []byte, lo, hi int) ([]field, *parseError) {
	if len(fields) >= p.lim.maxHeaders {
		return fields, errHeaderTooBig
	}
	f, err := parseField(b, lo, hi)
	if err != nil {
		return fields, err
	}
	return append(fields, f), nil
}

// parseField splits "Name: value", rejecting obs-fold (a line starting with
// white space), white space before the colon, non-token names and control
// bytes in values.
func parseField(b []byte, lo, hi int) (field, *parseError) {
	l := b[lo:hi]
	c := bytes.IndexByte(l, ':')
	if c <= 0 {
		return field{}, errMalformed
	}
	for i, ch := range l[:c] {
		if !isToken(ch) {
			if ch == ' ' || ch == '\t' {
				for _, t := range l[i:c] {
					if t != ' ' && t != '\t' {
						return field{}, errMalformed
					}
				}
				return field{}, errBadName // net/http reads "Name :" then refuses the name
			}
			return field{}, errMalformed
		}
	}
	v0, v1 := c+1, len(l)
	for v0 < v1 && (l[v0] == ' ' || l[v0] == '\t') {
		v0++
	}
	for v1 > v0 && (l[v1-1] == ' ' || l[v1-1] == '\t') {
		v1--
	}
	for _, ch := range l[v0:v1] {
		if ch < 0x20 && ch != '\t' || ch == 0x7f {
			return field{}, errMalformed
		}
	}
	return field{
		name:  span{int32(lo), int32(lo + c)},
		value: span{int32(lo + v0), int32(lo + v1)},
	}, nil
}

// noteField records what the server itself needs from a header.
func (p *parser) noteField(b []byte, f field) {
	n, v := f.name.of(b), f.value.of(b)
	switch len(n) {
	case 4:
		if equalFold(n, "host") {
			p.hostN++
			p.host = f.value
		}
	case 6:
		if equalFold(n, "expect") {
			p.hasExpect = true
			p.expect = f.value
		}
	case 10:
		if equalFold(n, "connection") {
			forEachToken(v, func(t []byte) {
				if equalFold(t, "close") {
					p.connClose = true
				} else if equalFold(t, "keep-alive") {
					p.connKeep = true
				}
			})
		}
	case 14:
		if equalFold(n, "content-length") {
			p.clN++
			p.cl = parseLength(v)
		}
	case 17:
		if equalFold(n, "transfer-encoding") {
			p.teN++
			p.teChunked = equalFold(v, "chunked")
		}
	}
}

// finishHead applies the rules that need every header: Host, framing,
// expectations. Request smuggling defences live here: a request framed two
// ways, or ambiguously, is refused and the connection closed.
func (p *parser) finishHead(b []byte) *parseError {
	switch {
	case p.hostN > 1:
		return errMalformed
	case p.hostN == 0 && p.minor >= 1 && string(p.method.of(b)) != "CONNECT":
		return errNoHost
	case p.hostN == 1 && !validHost(p.host.of(b)):
		return errBadHost
	}
	if p.teN > 0 {
		switch {
		case p.minor == 0 || p.clN > 0:
			return errMalformed
		case p.teN > 1 || !p.teChunked:
			return errUnsupportedTE
		}
		p.kind = bodyChunked
		p.body = span{int32(p.headEnd), int32(p.headEnd)}
		p.rpos = p.headEnd
	} else if p.clN > 0 {
		if p.clN > 1 || p.cl < 0 {
			return errMalformed
		}
		if p.cl > 0 {
			p.kind = bodyLength
		}
		p.body = span{int32(p.headEnd), int32(p.headEnd + int(p.cl))}
	} else {
		p.body = span{int32(p.headEnd), int32(p.headEnd)}
	}
	if p.hasExpect && p.minor >= 1 && !equalFold(p.expect.of(b), "100-continue") {
		return errExpectation
	}
	return nil
}

// limitBody holds the request's body to max bytes (whole bodies and
// streamed ones have different limits, decided once the head is read): a
// declared length over it is refused now, a chunked body once it grows
// past it.
func (p *parser) limitBody(max int64) *parseError {
	p.maxBody = max
	if p.kind == bodyLength && p.cl > max {
		return errBodyTooBig
	}
	return nil
}

// wantsContinue reports whether the client waits for "100 Continue" before
// sending its body.
func (p *parser) wantsContinue() bool { return p.hasExpect && p.minor >= 1 && p.kind != bodyNone }

// keepAlive reports whether the connection may serve another request after
// this one (HTTP/1.1 unless "close"; HTTP/1.0 only with "keep-alive").
func (p *parser) keepAlive() bool {
	if p.minor == 0 {
		return p.connKeep && !p.connClose
	}
	return !p.connClose
}

// chunks decodes a chunked body in place: data moves down over the framing
// as it arrives. It returns true once the last chunk and the trailers are
// read; p.body then spans the decoded data and p.rpos the end of the request.
func (p *parser) chunks(b []byte) (bool, *parseError) {
	for {
		switch p.cphase {
		case chunkSize:
			i := bytes.IndexByte(b[p.rpos:], '\n')
			if i < 0 {
				if len(b)-p.rpos > maxChunkLine {
					return false, errMalformed
				}
				return false, nil
			}
			line := b[p.rpos : p.rpos+i]
			p.rpos += i + 1
			// As net/http: the line ends in CRLF and holds no other CR (a
			// bare CR in an extension is where parsers disagree on where
			// the line ends), white space may end it, and the size runs
			// up to the ';' of an extension with nothing between.
			if len(line) == 0 || line[len(line)-1] != '\r' || bytes.IndexByte(line[:len(line)-1], '\r') >= 0 {
				return false, errMalformed
			}
			line = line[:len(line)-1]
			if len(line) >= maxChunkLine {
				return false, errMalformed
			}
			for len(line) > 0 && (line[len(line)-1] == ' ' || line[len(line)-1] == '\t') {
				line = line[:len(line)-1]
			}
			if k := bytes.IndexByte(line, ';'); k >= 0 {
				line = line[:k]
			}
			n, ok := parseHex(line)
			if !ok {
				return false, errMalformed
			}
			// Framing (a size line with its extensions and the CRLF after
			// the data) may cost 16 bytes per chunk plus twice its data,
			// and 16 KiB more: past that the body is refused, as net/http
			// counts and refuses it. Raw input is buffered until the
			// request completes, so this also bounds what a body of
			// extensions can pile up.
			p.excess = max(0, p.excess+int64(i+1)-16-2*min(n, 1<<40))
			if p.excess > 16<<10 {
				return false, errMalformed
			}
			if n == 0 {
				p.cphase = chunkTrailer
				continue
			}
			if n > p.maxBody || p.got+n > p.maxBody {
				return false, errBodyTooBig
			}
			p.got += n
			p.chunkLeft, p.cphase = n, chunkData
		case chunkData:
			avail := int64(len(b) - p.rpos)
			if avail == 0 {
				return false, nil
			}
			n := min(avail, p.chunkLeft)
			copy(b[p.body.hi:], b[p.rpos:p.rpos+int(n)])
			p.body.hi += int32(n)
			p.rpos += int(n)
			p.chunkLeft -= n
			if p.chunkLeft == 0 {
				p.cphase = chunkDataEnd
			}
		case chunkDataEnd:
			if len(b)-p.rpos < 2 {
				return false, nil
			}
			if b[p.rpos] != '\r' || b[p.rpos+1] != '\n' {
				return false, errMalformed
			}
			p.rpos += 2
			p.cphase = chunkSize
		case chunkTrailer:
			i := bytes.IndexByte(b[p.rpos:], '\n')
			if i < 0 {
				if p.trailerN+len(b)-p.rpos > p.lim.maxHeaderBytes {
					return false, errHeaderTooBig
				}
				return false, nil
			}
			lo, hi := p.rpos, p.rpos+i
			p.rpos += i + 1
			p.trailerN += i + 1
			if p.trailerN > p.lim.maxHeaderBytes {
				return false, errHeaderTooBig
			}
			// Trailer lines end in CRLF, as every line of a chunked body
			// (net/http accepts a bare LF here only when a CRLF CRLF
			// follows somewhere in its buffer).
			if hi == lo || b[hi-1] != '\r' {
				return false, errMalformed
			}
			hi--
			if hi == lo {
				p.cphase = chunkDone
				return true, nil
			}
			// Counted as header lines are: the blank line ending the
			// trailers is not one.
			trailers, err := p.addField(p.trailers, b, lo, hi)
			if err != nil {
				return false, err
			}
			p.trailers = trailers
		default:
			return true, nil
		}
	}
}

// end is the length of the whole request once it is complete.
func (p *parser) end() int {
	if p.kind == bodyChunked {
		return p.rpos
	}
	return int(p.body.hi)
}

// parseLength parses a Content-Length value: decimal digits only, no sign,
// at most 18 digits; -1 when invalid.
func parseLength(v []byte) int64 {
	if len(v) == 0 || len(v) > 18 {
		return -1
	}
	var n int64
	for _, c := range v {
		if !isDigit(c) {
			return -1
		}
		n = n*10 + int64(c-'0')
	}
	return n
}

// parseHex parses a chunk size: at most 16 hex digits, as net/http; a
// size past the int64 range reads as the largest int64 (over any limit).
func parseHex(v []byte) (int64, bool) {
	if len(v) == 0 || len(v) > 16 {
		return 0, false
	}
	var n uint64
	for _, c := range v {
		var d byte
		switch {
		case isDigit(c):
			d = c - '0'
		case c >= 'a' && c <= 'f':
			d = c - 'a' + 10
		case c >= 'A' && c <= 'F':
			d = c - 'A' + 10
		default:
			return 0, false
		}
		n = n<<4 | uint64(d)
	}
	return int64(min(n, 1<<63-1)), true
}

// forEachToken calls fn with each comma-separated, trimmed token of v.
func forEachToken(v []byte, fn func([]byte)) {
	for len(v) > 0 {
		var t []byte
		if i := bytes.IndexByte(v, ','); i >= 0 {
			t, v = v[:i], v[i+1:]
		} else {
			t, v = v, nil
		}
		t = bytes.Trim(t, " \t")
		if len(t) > 0 {
			fn(t)
		}
	}
}

// equalFold compares ASCII case-insensitively without allocating.
func equalFold(b []byte, s string) bool {
	if len(b) != len(s) {
		return false
	}
	for i := 0; i < len(b); i++ {
		if lower(b[i]) != lower(s[i]) {
			return false
		}
	}
	return true
}

func lower(c byte) byte {
	if c >= 'A' && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}

// validHost accepts what net/http's Host check accepts: the bytes of a
// host[:port] (names, IPv4, bracketed IPv6, %-escapes).
func validHost(h []byte) bool {
	for _, c := range h {
		if !hostByte[c] {
			return false
		}
	}
	return true
}

var hostByte = alnumAnd("!$%&'()*+,-.:;=[]_~")

// alnumAnd returns a byte table true for ASCII letters, digits and the bytes
// of extra.
func alnumAnd(extra string) (t [256]bool) {
	for c := 0; c < 256; c++ {
		t[c] = isAlpha(byte(c)) || isDigit(byte(c))
	}
	for _, c := range []byte(extra) {
		t[c] = true
	}
	return t
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }
func isAlpha(c byte) bool { return c|0x20 >= 'a' && c|0x20 <= 'z' }
func isHex(c byte) bool   { return isDigit(c) || c|0x20 >= 'a' && c|0x20 <= 'f' }

// isToken reports a tchar of RFC 9110.
func isToken(c byte) bool { return tokenByte[c] }

var tokenByte = alnumAnd("!#$%&'*+-.^_`|~")

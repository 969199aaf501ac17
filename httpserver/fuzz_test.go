package httpserver_test

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"net/http"
	"net/textproto"
	"strings"
	"testing"

	"github.com/ringloop/ringloop/httpserver"
)

// FuzzParser feeds arbitrary bytes to the parser, in two pieces split
// anywhere, and checks: no panic; the split does not change the reading;
// the parser and net/http's server (ReadRequest, the whole body with its
// trailers, and the server's own checks) accept and refuse the same first
// request, but for the differences the package doc lists (framingExcuse);
// and where both accept it, they read the same method, target, version,
// headers, body and trailers. Limits keep memory bounded whatever the
// input. Inputs longer than maxFuzzRequest are skipped: they add no parser
// states the short ones lack and make minimisation crawl.
const maxFuzzRequest = 4096

// framingSeeds are CR and LF placements and chunk syntax that parsers have
// disagreed on.
var framingSeeds = []string{
	"POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n1;a\rb\r\nX\r\n0\r\n\r\n",
	"POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n0;a\rb\r\n\r\n",
	"POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n3;a=\"b\\\"c\";d\r\nabc\r\n0;e\r\nX-T: 1\r\n\r\n",
	"POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n3 ;a\r\nabc\r\n0\r\n\r\n",
	"POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n3\t\r\nabc\r\n0\r\n\r\n",
	"POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n3\nabc\n0\n\n",
	"POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n0\r\nX-T: a\n\r\n",
	"POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n0\r\nX-T: a\rb\r\n\r\n",
	"POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\n",
	"POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\r\n",
	"POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n10000000000000000\r\n",
	"GET / HTTP/1.1\rHost: h\r\n\r\n",
	"GET / HTTP/1.1\r\r\nHost: h\r\n\r\n",
	"GET / HTTP/1.1\r\nHost: h\rX: 1\r\n\r\n",
	"GET / HTTP/1.1\r\nHost: h\r\n\r\r\n",
	"GET / HTTP/1.1\r\nHost: h\r\nX\r: 1\r\n\r\n",
	"GET / HTTP/1.1\nHost: h\r\n\n",
	"\r\nGET / HTTP/1.1\r\nHost: h\r\n\r\n",
	"\n\r\nGET / HTTP/1.1\r\nHost: h\r\n\r\n",
	"\rGET / HTTP/1.1\r\nHost: h\r\n\r\n",
}

func FuzzParser(f *testing.F) {
	for _, tc := range conformanceTable {
		f.Add([]byte(tc.raw), uint16(len(tc.raw)/2))
	}
	for _, s := range framingSeeds {
		f.Add([]byte(s), uint16(len(s)/2))
	}
	f.Fuzz(func(t *testing.T, data []byte, split uint16) {
		if len(data) > maxFuzzRequest {
			t.Skip("longer than maxFuzzRequest")
		}
		whole, wst, wdone := httpserver.ParseFirst(data, len(data))
		part, pst, pdone := httpserver.ParseFirst(data, int(split))
		if wst != pst || wdone != pdone || (whole == nil) != (part == nil) {
			t.Fatalf("split at %d changed the outcome: status %d/%d complete %v/%v", split, wst, pst, wdone, pdone)
		}
		if whole != nil && !samePrint(whole, part) {
			t.Fatalf("split at %d changed the reading:\n%+v\n%+v", split, whole, part)
		}
		switch wst {
		case 413, 414, 431: // limits net/http lacks or sets elsewhere
			return
		case 417: // refused on its Expect before the body is framed
			return
		}
		if !wdone {
			return // the parser waits for more
		}
		// Empty lines before the request line are skipped (as net/http
		// does after a POST); net/http's ReadRequest reads after them.
		std := data[leadingBlank(data):]
		req, body, stdErr := stdRead(std)
		if stdErr != nil && errors.Is(stdErr, io.ErrUnexpectedEOF) {
			return // net/http waits for more where the parser has decided
		}
		if (stdErr == nil) != (whole != nil) {
			if why := framingExcuse(std, req, whole == nil); why != "" {
				return
			}
			t.Fatalf("parser status %d (0: accepted), net/http error %v, on %q", wst, stdErr, data)
		}
		if whole == nil {
			return
		}
		if req.Method != whole.Method || req.RequestURI != whole.Target || req.Proto != whole.Proto {
			t.Fatalf("request line: net/http %q %q %q, parser %q %q %q", req.Method, req.RequestURI, req.Proto, whole.Method, whole.Target, whole.Proto)
		}
		if !bytes.Equal(body, whole.Body) {
			t.Fatalf("body: net/http %q, parser %q", body, whole.Body)
		}
		got := canonical(whole.Header)
		for _, k := range []string{"Host", "Transfer-Encoding", "Trailer", "Cache-Control"} {
			delete(got, k)
			delete(req.Header, k)
		}
		if !sameHeader(req.Header, got) {
			t.Fatalf("headers: net/http %q, parser %q", req.Header, got)
		}
		if whole.Chunked {
			tr := canonical(whole.Trailer)
			for k, v := range req.Trailer {
				if v != nil && !equalStrings(tr[k], v) {
					t.Fatalf("trailer %s: net/http %q, parser %q", k, v, tr[k])
				}
			}
		}
	})
}

// leadingBlank is the length of the empty lines (at most two) the parser
// skips before a request line.
func leadingBlank(b []byte) int {
	n := 0
	for range 2 {
		switch {
		case bytes.HasPrefix(b[n:], []byte("\r\n")):
			n += 2
		case bytes.HasPrefix(b[n:], []byte("\n")):
			n++
		default:
			return n
		}
	}
	return n
}

// stdRead reads the first request of b as net/http's server does: the
// request, its whole body and trailers, then the server's checks of the
// version, Host and header names and values.
func stdRead(b []byte) (*http.Request, []byte, error) {
	req, err := http.ReadRequest(bufio.NewReader(bytes.NewReader(b)))
	if err != nil {
		return nil, nil, err
	}
	body, err := io.ReadAll(req.Body)
	if err != nil {
		return req, nil, err
	}
	if req.ProtoMajor != 1 && !(req.ProtoMajor == 2 && req.ProtoMinor == 0 && req.Method == "PRI" && req.RequestURI == "*") {
		return req, nil, errors.New("unsupported protocol version")
	}
	// ReadRequest drops the Host lines the server counts: read them again.
	tp := textproto.NewReader(bufio.NewReader(bytes.NewReader(b)))
	_, _ = tp.ReadLine()
	h, _ := tp.ReadMIMEHeader()
	hosts, ok := h["Host"]
	if req.ProtoAtLeast(1, 1) && (!ok || len(hosts) == 0) && req.Method != "CONNECT" {
		return req, nil, errors.New("missing required Host header")
	}
	if len(hosts) == 1 && strings.Trim(hosts[0], hostChars) != "" {
		return req, nil, errors.New("malformed Host header")
	}
	for k := range req.Header { // ReadMIMEHeader checked the values
		if k == "" || strings.Trim(k, tokenChars) != "" {
			return req, nil, errors.New("invalid header name")
		}
	}
	return req, body, nil
}

// The bytes of a token (RFC 9110) and of a Host value (RFC 3986's host and
// port, %-escapes, brackets), as net/http's server checks them.
const (
	alnum      = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
	tokenChars = alnum + "!#$%&'*+-.^_`|~"
	hostChars  = alnum + "!$%&'()*+,-.:;=[]_~"
)

// framingExcuse names the documented difference (package doc, "Differences
// from net/http") that explains the parser refusing (refused) or accepting
// what net/http does not; "" when none does. req is net/http's reading when
// it has one.
func framingExcuse(b []byte, req *http.Request, refused bool) string {
	lower := bytes.ToLower(b)
	head, rest := lower, []byte(nil)
	for i := 0; i < len(lower); {
		n := bytes.IndexByte(lower[i:], '\n')
		if n < 0 {
			break
		}
		if line := lower[i : i+n]; i > 0 && (len(line) == 0 || string(line) == "\r") {
			head, rest = lower[:i], lower[i+n+1:] // the blank line ending the head
			break
		}
		i += n + 1
	}
	if !refused {
		return ""
	}
	switch {
	case bytes.Contains(head, []byte("\n ")) || bytes.Contains(head, []byte("\n\t")):
		return "obs-fold"
	case bytes.Count(head, []byte("content-length")) > 1:
		return "repeated Content-Length"
	case bytes.Contains(head, []byte("content-length")) && bytes.Contains(head, []byte("transfer-encoding")):
		return "Content-Length with Transfer-Encoding"
	case req != nil && req.ProtoMinor == 0 && bytes.Contains(head, []byte("transfer-encoding")):
		return "Transfer-Encoding on HTTP/1.0"
	case req != nil && req.Method != "CONNECT" && !strings.HasPrefix(req.RequestURI, "/") &&
		req.RequestURI != "*" && !hasAuthority(req.RequestURI):
		return "a target that is a URI without an authority (scheme:opaque)"
	case req != nil && hasAuthority(req.RequestURI) &&
		strings.Trim(authority(req.RequestURI), strings.ReplaceAll(hostChars, "%", "")) != "":
		return "an absolute-form target whose authority is no valid Host"
	case req != nil && len(req.TransferEncoding) > 0:
		// Trailers: a bare LF or obs-fold there is refused.
		if bytes.Contains(rest, []byte("\n ")) || bytes.Contains(rest, []byte("\n\t")) {
			return "obs-fold in trailers"
		}
		if bytes.IndexByte(bareLF(rest), '\n') >= 0 {
			return "bare LF in a chunked body's trailers"
		}
	}
	return ""
}

// hasAuthority reports whether uri opens with a scheme and "://", the
// absolute-form the parser reads; "a:://" is scheme "a" with an opaque part.
func hasAuthority(uri string) bool {
	scheme, _, ok := strings.Cut(uri, "://")
	if !ok || scheme == "" {
		return false
	}
	for i, c := range scheme {
		alpha := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
		if !alpha && (i == 0 || !(c >= '0' && c <= '9' || c == '+' || c == '-' || c == '.')) {
			return false
		}
	}
	return true
}

// authority is the authority of an absolute-form target.
func authority(uri string) string {
	_, a, _ := strings.Cut(uri, "://")
	if i := strings.IndexAny(a, "/?"); i >= 0 {
		a = a[:i]
	}
	return a
}

// bareLF returns b with every CRLF removed, so what LFs remain are bare.
func bareLF(b []byte) []byte { return bytes.ReplaceAll(b, []byte("\r\n"), nil) }

func canonical(fields [][2]string) http.Header {
	out := http.Header{}
	for _, f := range fields {
		ck := textproto.CanonicalMIMEHeaderKey(f[0])
		out[ck] = append(out[ck], f[1])
	}
	return out
}

func sameHeader(a, b http.Header) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if !equalStrings(v, b[k]) {
			return false
		}
	}
	return true
}

func equalStrings(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func samePrint(a, b *httpserver.Parsed) bool {
	return a.Method == b.Method && a.Target == b.Target && a.Proto == b.Proto && a.End == b.End &&
		bytes.Equal(a.Body, b.Body) && sameHeader(canonical(a.Header), canonical(b.Header)) &&
		sameHeader(canonical(a.Trailer), canonical(b.Trailer))
}

package httpserver_test

import (
	"bufio"
	"bytes"
	"io"
	"net/http"
	"net/textproto"
	"testing"

	"github.com/ringloop/ringloop/httpserver"
)

// FuzzParser feeds arbitrary bytes to the parser, in two pieces split
// anywhere, and checks: no panic; the split does not change the reading; and
// where both the parser and net/http's ReadRequest accept the first request,
// they read the same method, target, version, headers, body and trailers.
// Limits keep memory bounded whatever the input. Inputs longer than
// maxFuzzRequest are skipped: they add no parser states the short ones lack
// and make minimisation crawl.
const maxFuzzRequest = 4096

func FuzzParser(f *testing.F) {
	for _, tc := range conformanceTable {
		f.Add([]byte(tc.raw), uint16(len(tc.raw)/2))
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
		if whole == nil {
			return
		}
		req, err := http.ReadRequest(bufio.NewReader(bytes.NewReader(data)))
		if err != nil {
			return // net/http refuses what the parser accepts: allowed (documented where it matters)
		}
		body, err := io.ReadAll(req.Body)
		if err != nil {
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

package httpserver_test

import (
	"fmt"
	"io"
	"net/http"
	"net/textproto"
	"sort"
	"strconv"
	"strings"

	"github.com/ringloop/ringloop/httpserver"
)

// The same service written twice: once as an http.Handler (served by
// net/http and by the adapter) and once on the fast API. Both echo what they
// parsed in one text format, so the conformance table can compare every
// server's reading of the same bytes.
//
//	/stream?n=N   N flushed pieces of 1000 bytes (chunked on HTTP/1.1)
//	/status/N     status N with a short body
//	anything else echoes the request

// echoText formats a request's reading.
func echoText(method, uri, host, proto string, cl int64, hdr, trl http.Header, body []byte) string {
	var b strings.Builder
	fmt.Fprintf(&b, "method=%s\nuri=%s\nhost=%s\nproto=%s\ncl=%d\n", method, uri, host, proto, cl)
	for _, h := range []struct {
		tag string
		h   http.Header
	}{{"h", hdr}, {"t", trl}} {
		keys := make([]string, 0, len(h.h))
		for k := range h.h {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			switch k {
			case "Host", "Transfer-Encoding", "Trailer", "Cache-Control", "Pragma":
				continue
			}
			for _, v := range h.h[k] {
				fmt.Fprintf(&b, "%s %s: %s\n", h.tag, k, v)
			}
		}
	}
	fmt.Fprintf(&b, "body=%q\n", body)
	return b.String()
}

var stdEcho = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
	switch {
	case strings.HasPrefix(r.URL.Path, "/stream"):
		n, _ := strconv.Atoi(r.URL.Query().Get("n"))
		w.Header().Set("Content-Type", "text/plain")
		for i := range n {
			_, _ = w.Write([]byte(strings.Repeat(string(rune('a'+i%26)), 1000)))
			w.(http.Flusher).Flush()
		}
		return
	case strings.HasPrefix(r.URL.Path, "/status/"):
		code, _ := strconv.Atoi(strings.TrimPrefix(r.URL.Path, "/status/"))
		w.Header().Set("Content-Type", "text/plain")
		w.WriteHeader(code)
		_, _ = w.Write([]byte("status body"))
		return
	}
	body, err := io.ReadAll(r.Body)
	if err != nil {
		http.Error(w, "body: "+err.Error(), http.StatusBadRequest)
		return
	}
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Add("X-Multi", "1")
	w.Header().Add("X-Multi", "2")
	_, _ = io.WriteString(w, echoText(r.Method, r.RequestURI, r.Host, r.Proto, r.ContentLength, r.Header, r.Trailer, body))
})

var fastEcho = httpserver.HandlerFunc(func(w *httpserver.Response, r *httpserver.Request) {
	path := string(r.Path())
	switch {
	case strings.HasPrefix(path, "/stream"):
		n, _ := strconv.Atoi(strings.TrimPrefix(string(r.Query()), "n="))
		w.AddHeader("Content-Type", "text/plain")
		for i := range n {
			_, _ = w.Write([]byte(strings.Repeat(string(rune('a'+i%26)), 1000)))
			_ = w.Flush()
		}
		return
	case strings.HasPrefix(path, "/status/"):
		code, _ := strconv.Atoi(strings.TrimPrefix(path, "/status/"))
		if code != http.StatusNotModified {
			w.AddHeader("Content-Type", "text/plain") // net/http drops it from a 304
		}
		w.SetStatus(code)
		_, _ = w.WriteString("status body")
		return
	}
	hdr, trl := http.Header{}, http.Header{}
	for i := range r.NumHeaders() {
		n, v := r.HeaderAt(i)
		k := textproto.CanonicalMIMEHeaderKey(string(n))
		hdr[k] = append(hdr[k], string(v))
	}
	for i := range r.NumTrailers() {
		n, v := r.TrailerAt(i)
		k := textproto.CanonicalMIMEHeaderKey(string(n))
		trl[k] = append(trl[k], string(v))
	}
	w.AddHeader("Content-Type", "text/plain; charset=utf-8")
	w.AddHeader("X-Multi", "1")
	w.AddHeader("X-Multi", "2")
	_, _ = w.WriteString(echoText(r.Method(), string(r.Target()), string(r.Host()), r.Proto(), r.ContentLength(), hdr, trl, r.Body()))
})

// hello is the smallest handler, for the benchmarks and the real clients.
var fastHello = httpserver.HandlerFunc(func(w *httpserver.Response, r *httpserver.Request) {
	w.AddHeader("Content-Type", "text/plain")
	_, _ = w.WriteString("Hello, World!")
})

var stdHello = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "text/plain")
	_, _ = io.WriteString(w, "Hello, World!")
})

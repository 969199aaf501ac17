package httpserver

import (
	"bytes"

	"github.com/ringloop/ringloop/engine"
)

// Request is a view of one parsed request, valid only during the handler
// call: its byte slices point into the connection's receive buffer. Copy what
// you keep.
type Request struct {
	b      []byte // the request's bytes, from its first byte (a streamed body's: its head)
	p      *parser
	conn   *engine.Conn
	stream *Body
}

// Method returns the request method. Common methods come back as constants
// (no allocation); others are copied.
func (r *Request) Method() string {
	m := r.p.method.of(r.b)
	switch string(m) {
	case "GET":
		return "GET"
	case "POST":
		return "POST"
	case "HEAD":
		return "HEAD"
	case "PUT":
		return "PUT"
	case "DELETE":
		return "DELETE"
	case "OPTIONS":
		return "OPTIONS"
	case "PATCH":
		return "PATCH"
	}
	return string(m)
}

// MethodBytes returns the request method as sent.
func (r *Request) MethodBytes() []byte { return r.p.method.of(r.b) }

// Target returns the request-target as sent: "/path?query", "*", an
// absolute URI or (CONNECT) an authority.
func (r *Request) Target() []byte { return r.p.target.of(r.b) }

// Path returns the target's path without the query (for an absolute-form
// target, the path after the authority; "/" when it has none), not decoded.
func (r *Request) Path() []byte {
	t := r.Target()
	if r.p.absHost.hi > 0 && r.p.absHost.hi > r.p.target.lo {
		t = r.b[r.p.absHost.hi:r.p.target.hi]
		if len(t) == 0 || t[0] == '?' {
			return slash
		}
	}
	if q := bytes.IndexByte(t, '?'); q >= 0 {
		return t[:q]
	}
	return t
}

var slash = []byte("/")

// Query returns the raw query after '?', if any.
func (r *Request) Query() []byte {
	t := r.Target()
	if q := bytes.IndexByte(t, '?'); q >= 0 {
		return t[q+1:]
	}
	return nil
}

// Proto returns "HTTP/1.0", "HTTP/1.1" (a later HTTP/1.x is served as
// HTTP/1.1 and reported as sent) or "HTTP/2.0".
func (r *Request) Proto() string {
	if r.p.h2 {
		return "HTTP/2.0"
	}
	switch r.p.minor {
	case 0:
		return "HTTP/1.0"
	case 1:
		return "HTTP/1.1"
	}
	return string(r.p.proto.of(r.b))
}

// ProtoMinor returns the x of HTTP/1.x, and 0 for HTTP/2.0.
func (r *Request) ProtoMinor() int {
	if r.p.h2 {
		return 0
	}
	return int(r.p.minor)
}

// Host returns the host of an absolute-form target if there is one, else
// the Host header (as net/http's Request.Host).
func (r *Request) Host() []byte {
	if r.p.absHost.hi > 0 {
		return r.p.absHost.of(r.b)
	}
	if r.p.hostN > 0 {
		return r.p.host.of(r.b)
	}
	return nil
}

// Header returns the first value of the named header (ASCII
// case-insensitive), or nil.
func (r *Request) Header(name string) []byte { return r.firstValue(r.p.fields, name) }

// firstValue returns the value of the first of fields (headers or
// trailers) named name, ASCII case-insensitive, or nil.
func (r *Request) firstValue(fields []field, name string) []byte {
	for _, f := range fields {
		if equalFold(f.name.of(r.b), name) {
			return f.value.of(r.b)
		}
	}
	return nil
}

// NumHeaders returns the number of header lines, repeated names included.
func (r *Request) NumHeaders() int { return len(r.p.fields) }

// HeaderAt returns header line i (0 ≤ i < NumHeaders) in the order sent.
func (r *Request) HeaderAt(i int) (name, value []byte) { return r.line(r.p.fields[i]) }

// line returns a header or trailer line's name and value.
func (r *Request) line(f field) (name, value []byte) { return f.name.of(r.b), f.value.of(r.b) }

// Body returns the whole request body (decoded if it was chunked), or nil
// when the body streams (see BodyStream).
func (r *Request) Body() []byte {
	if r.stream != nil || int(r.p.body.hi) > len(r.b) { // streamed, or asked before it came (StreamBody)
		return nil
	}
	return r.p.body.of(r.b)
}

// BodyStream returns the body of a request a BodyStreamer streams, or nil
// when the body came whole (see Body) or there is none. Unlike the rest of
// the request it stays valid after the handler returns: read it from
// another goroutine while the response is deferred (Response.Defer). The
// response's end closes it.
func (r *Request) BodyStream() *Body { return r.stream }

// ContentLength returns the declared Content-Length, or -1 when the body was
// chunked.
func (r *Request) ContentLength() int64 {
	if r.p.kind == bodyChunked {
		return -1
	}
	if r.stream != nil {
		return r.p.cl
	}
	return int64(r.p.body.hi - r.p.body.lo)
}

// Chunked reports whether the body came with Transfer-Encoding: chunked.
func (r *Request) Chunked() bool { return r.p.kind == bodyChunked }

// Trailer returns the first value of the named trailer of a chunked body.
func (r *Request) Trailer(name string) []byte { return r.firstValue(r.p.trailers, name) }

// NumTrailers returns the number of trailer lines.
func (r *Request) NumTrailers() int { return len(r.p.trailers) }

// TrailerAt returns trailer line i.
func (r *Request) TrailerAt(i int) (name, value []byte) { return r.line(r.p.trailers[i]) }

// KeepAlive reports whether the client allows another request on the
// connection after this one.
func (r *Request) KeepAlive() bool { return r.p.keepAlive() }

// Conn returns the connection the request came on: its RemoteAddr is the
// client's address.
func (r *Request) Conn() *engine.Conn { return r.conn }

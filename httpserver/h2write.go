package httpserver

import (
	"bytes"
	"strconv"

	"golang.org/x/net/http2"
	"golang.org/x/net/http2/hpack"
)

// Writing an HTTP/2 response's header blocks. Both APIs hand their
// response head over as HTTP/1.1 header lines ("Name: value\r\n"; the fast
// API's Response holds them so, the adapter's writer serialises its map
// so for HTTP/1.1): each line becomes a field, its name in lower case,
// and the fields HTTP/2 forbids (Connection and its kin) are dropped. A
// block larger than a frame goes on in CONTINUATION frames.

// h2Status holds the :status values.
var h2Status = func() (t [1000]string) {
	for c := 100; c < 1000; c++ {
		t[c] = strconv.Itoa(c)
	}
	return t
}()

// writeHead writes a response's HEADERS: status, the Date header
// (date), the header lines, and the content-length cl (-1: none).
func (hc *h2Conn) writeHead(id uint32, status int, lines []byte, cl int64, date, end bool) {
	if status < 100 || status > 999 {
		status = 500
	}
	hc.lp.hbuf.Reset()
	e := hc.encoder()
	_ = e.WriteField(hpack.HeaderField{Name: ":status", Value: h2Status[status]})
	if date {
		_ = e.WriteField(hpack.HeaderField{Name: "date", Value: hc.dateValue()})
	}
	hc.encodeLines(lines)
	if cl >= 0 {
		var n [20]byte
		_ = e.WriteField(hpack.HeaderField{Name: "content-length", Value: string(strconv.AppendInt(n[:0], cl, 10))})
	}
	hc.writeBlock(id, end)
}

// writeTrailers writes trailer lines as the HEADERS that end the stream.
func (hc *h2Conn) writeTrailers(id uint32, lines []byte) {
	hc.lp.hbuf.Reset()
	hc.encodeLines(lines)
	hc.writeBlock(id, true)
}

// dateValue is the loop's Date header's value, as a string made once a
// second.
func (hc *h2Conn) dateValue() string {
	ls, lp := hc.cs.ls, hc.lp
	if lp.date == "" || lp.dateSec != ls.dateSec {
		d := bytes.TrimSuffix(bytes.TrimPrefix(ls.date, []byte("Date: ")), []byte("\r\n"))
		lp.date, lp.dateSec = string(d), ls.dateSec
	}
	return lp.date
}

// encoder returns the connection's HPACK encoder, made at its first
// response and again after a rest let it go. A new encoder's first block
// tells the client the table size it allows less than the default, and
// after a rest first empties the client's table (a size update to 0, then
// back, RFC 7541 section 4.2), so both tables start over in step.
func (hc *h2Conn) encoder() *hpack.Encoder {
	if hc.enc == nil {
		e := hpack.NewEncoder(&hc.lp.hbuf)
		if hc.encUsed {
			e.SetMaxDynamicTableSize(0)
		}
		if hc.encUsed || hc.encMax != h2TableSize {
			e.SetMaxDynamicTableSize(hc.encMax)
		}
		hc.enc, hc.encUsed = e, true
	}
	return hc.enc
}

// encodeLines encodes header lines ("Name: value\r\n") as fields.
func (hc *h2Conn) encodeLines(lines []byte) {
	for len(lines) > 0 {
		line := lines
		if i := bytes.Index(lines, crlf); i >= 0 {
			line, lines = lines[:i], lines[i+2:]
		} else {
			lines = nil
		}
		c := bytes.IndexByte(line, ':')
		if c <= 0 {
			continue
		}
		name := h2Name(line[:c], hc.lp)
		if name == "" {
			continue
		}
		_ = hc.encoder().WriteField(hpack.HeaderField{Name: name, Value: hc.lp.intern(bytes.TrimSpace(line[c+1:]))})
	}
}

var crlf = []byte("\r\n")

// h2Name returns a header name in lower case (the common ones and those
// lp holds without an allocation), or "" for a field HTTP/2 forbids (RFC
// 9113 section 8.2.2).
func h2Name(name []byte, lp *h2Loop) string {
	var room [32]byte
	low := room[:0]
	if len(name) > len(room) {
		low = make([]byte, 0, len(name))
	}
	for _, c := range name {
		low = append(low, lower(c))
	}
	switch string(low) {
	case "connection", "keep-alive", "proxy-connection", "transfer-encoding", "upgrade":
		return ""
	case "content-type":
		return "content-type"
	case "content-encoding":
		return "content-encoding"
	case "cache-control":
		return "cache-control"
	case "date":
		return "date"
	case "etag":
		return "etag"
	case "last-modified":
		return "last-modified"
	case "location":
		return "location"
	case "server":
		return "server"
	case "set-cookie":
		return "set-cookie"
	case "vary":
		return "vary"
	case "x-content-type-options":
		return "x-content-type-options"
	case "trailer":
		return "trailer"
	case "grpc-status":
		return "grpc-status"
	case "grpc-message":
		return "grpc-message"
	}
	return lp.intern(low)
}

// h2Interned bounds the strings an h2Loop holds, and h2InternedLen their
// length: past the count they are all let go, and longer ones are not
// kept.
const (
	h2Interned    = 256
	h2InternedLen = 64
)

// intern returns b as a string, the loop's copy when it has one: a
// response's header values (a content type, grpc-status) repeat from one
// response to the next, and a field handed to the HPACK encoder must be a
// string of its own (its table keeps it).
func (lp *h2Loop) intern(b []byte) string {
	if s, ok := lp.strs[string(b)]; ok {
		return s
	}
	s := string(b)
	if len(b) <= h2InternedLen {
		if len(lp.strs) >= h2Interned || lp.strs == nil {
			lp.strs = make(map[string]string, h2Interned)
		}
		lp.strs[s] = s
	}
	return s
}

// writeBlock writes the block in hbuf as HEADERS and, when it is larger
// than a frame, CONTINUATION frames.
func (hc *h2Conn) writeBlock(id uint32, end bool) {
	blk := hc.lp.hbuf.Bytes()
	n := min(len(blk), h2MaxFrame)
	_ = hc.fr().WriteHeaders(http2.HeadersFrameParam{StreamID: id, BlockFragment: blk[:n], EndStream: end, EndHeaders: n == len(blk)})
	for blk = blk[n:]; len(blk) > 0; blk = blk[n:] {
		n = min(len(blk), h2MaxFrame)
		_ = hc.fr().WriteContinuation(id, n == len(blk), blk[:n])
	}
}

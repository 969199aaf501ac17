package peers

import (
	"bytes"
	"errors"
	"strconv"
)

// maxHeader bounds a request head; a longer one is refused (431).
const maxHeader = 8 << 10

// Request parsing errors, each answered with its status before closing.
var (
	errBadRequest     = errors.New("bad request")                     // 400
	errHeaderTooBig   = errors.New("request header too large")        // 431
	errNotImplemented = errors.New("transfer coding not implemented") // 501
)

// parseRequest reads the first HTTP/1.x request in b: how many bytes it
// spans (head and Content-Length body), whether the connection must close
// after the answer, and an error for a request that cannot be served. n is 0
// while the request is incomplete.
func parseRequest(b []byte) (n int, closing bool, err error) {
	end := bytes.Index(b, []byte("\r\n\r\n"))
	if end < 0 {
		if len(b) > maxHeader {
			return 0, true, errHeaderTooBig
		}
		return 0, false, nil
	}
	if end > maxHeader {
		return 0, true, errHeaderTooBig
	}
	head := b[:end]
	line, rest, _ := bytes.Cut(head, []byte("\r\n"))
	method, line, ok1 := bytes.Cut(line, []byte(" "))
	target, proto, ok2 := bytes.Cut(line, []byte(" "))
	if !ok1 || !ok2 || len(method) == 0 || len(target) == 0 {
		return 0, true, errBadRequest
	}
	switch string(proto) {
	case "HTTP/1.1":
	case "HTTP/1.0":
		closing = true // unless it asks for keep-alive
	default:
		return 0, true, errBadRequest
	}
	body := 0
	for len(rest) > 0 {
		var h []byte
		h, rest, _ = bytes.Cut(rest, []byte("\r\n"))
		name, value, ok := bytes.Cut(h, []byte(":"))
		if !ok || len(name) == 0 || bytes.ContainsAny(name, " \t") {
			return 0, true, errBadRequest
		}
		value = bytes.TrimSpace(value)
		switch {
		case bytes.EqualFold(name, []byte("Content-Length")):
			v, err := strconv.Atoi(string(value))
			if err != nil || v < 0 {
				return 0, true, errBadRequest
			}
			body = v
		case bytes.EqualFold(name, []byte("Transfer-Encoding")):
			return 0, true, errNotImplemented
		case bytes.EqualFold(name, []byte("Connection")):
			if bytes.EqualFold(value, []byte("close")) {
				closing = true
			} else if bytes.EqualFold(value, []byte("keep-alive")) {
				closing = false
			}
		}
	}
	total := end + 4 + body
	if len(b) < total {
		return 0, false, nil // the body is still coming
	}
	return total, closing, nil
}

// statusOf maps a parse error to its status code.
func statusOf(err error) int {
	switch err {
	case errHeaderTooBig:
		return 431
	case errNotImplemented:
		return 501
	}
	return 400
}

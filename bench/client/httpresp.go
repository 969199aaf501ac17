package client

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"strconv"
)

// PlaintextRequest is the request every HTTP client here sends: TechEmpower's
// plaintext test, keep-alive.
const PlaintextRequest = "GET /plaintext HTTP/1.1\r\nHost: bench\r\nAccept: text/plain\r\n\r\n"

// PlaintextBody is what a plaintext server answers.
const PlaintextBody = "Hello, World!"

// Response is the part of an HTTP/1.1 response the clients check.
type Response struct {
	Status int
	Body   []byte
	Date   bool // a Date header was present
	Server bool // a Server header was present
	Close  bool // Connection: close
}

func newReader(r io.Reader) *bufio.Reader { return bufio.NewReaderSize(r, 4096) }

// ReadResponse reads one response: status line, headers, and a body of
// Content-Length bytes (the servers measured here all send one; a response
// without it is an error, not a guess).
func ReadResponse(r *bufio.Reader) (Response, error) {
	line, err := readLine(r)
	if err != nil {
		return Response{}, err
	}
	proto, rest, ok := bytes.Cut(line, []byte(" "))
	if !ok || !bytes.HasPrefix(proto, []byte("HTTP/1.")) || len(rest) < 3 {
		return Response{}, fmt.Errorf("http: bad status line %q", line)
	}
	var resp Response
	if resp.Status, err = strconv.Atoi(string(rest[:3])); err != nil {
		return Response{}, fmt.Errorf("http: bad status line %q", line)
	}
	length := -1
	for {
		h, err := readLine(r)
		if err != nil {
			return Response{}, err
		}
		if len(h) == 0 {
			break
		}
		name, value, ok := bytes.Cut(h, []byte(":"))
		if !ok {
			return Response{}, fmt.Errorf("http: bad header line %q", h)
		}
		value = bytes.TrimSpace(value)
		switch {
		case bytes.EqualFold(name, []byte("Content-Length")):
			if length, err = strconv.Atoi(string(value)); err != nil || length < 0 {
				return Response{}, fmt.Errorf("http: bad Content-Length %q", value)
			}
		case bytes.EqualFold(name, []byte("Transfer-Encoding")):
			return Response{}, fmt.Errorf("http: Transfer-Encoding %q not expected from a plaintext server", value)
		case bytes.EqualFold(name, []byte("Date")):
			resp.Date = true
		case bytes.EqualFold(name, []byte("Server")):
			resp.Server = true
		case bytes.EqualFold(name, []byte("Connection")):
			resp.Close = bytes.EqualFold(value, []byte("close"))
		}
	}
	if length < 0 {
		return Response{}, errors.New("http: response without Content-Length")
	}
	resp.Body = make([]byte, length)
	if _, err := io.ReadFull(r, resp.Body); err != nil {
		return Response{}, fmt.Errorf("http: body: %w", err)
	}
	return resp, nil
}

// readLine reads one CRLF-terminated line without its terminator.
func readLine(r *bufio.Reader) ([]byte, error) {
	line, err := r.ReadSlice('\n')
	if err != nil {
		if err == io.EOF && len(line) > 0 {
			err = io.ErrUnexpectedEOF
		}
		return nil, err
	}
	if len(line) < 2 || line[len(line)-2] != '\r' {
		return nil, fmt.Errorf("http: line not ended by CRLF: %q", line)
	}
	return line[:len(line)-2], nil
}

// CheckPlaintext reports what is wrong with a plaintext response, if anything.
func CheckPlaintext(r Response) error {
	switch {
	case r.Status != 200:
		return fmt.Errorf("http: status %d", r.Status)
	case string(r.Body) != PlaintextBody:
		return fmt.Errorf("http: body %q", r.Body)
	case !r.Date || !r.Server:
		return errors.New("http: Date and Server headers are required")
	}
	return nil
}

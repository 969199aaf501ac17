package websocket

import (
	"encoding/binary"
	"errors"
	"fmt"
)

// opcode is a frame's kind (RFC 6455 §5.2).
type opcode uint8

const (
	opContinuation opcode = 0x0
	opText         opcode = 0x1
	opBinary       opcode = 0x2
	opClose        opcode = 0x8
	opPing         opcode = 0x9
	opPong         opcode = 0xA
)

func (op opcode) control() bool { return op&0x8 != 0 }

// known reports whether op is defined by RFC 6455; the others are reserved
// for extensions this package does not negotiate.
func (op opcode) known() bool {
	switch op {
	case opContinuation, opText, opBinary, opClose, opPing, opPong:
		return true
	}
	return false
}

// maxControlPayload is the largest payload of a control frame (§5.5).
const maxControlPayload = 125

// maxHeader is the largest frame header: 2 bytes, a 64-bit length, a mask.
const maxHeader = 14

// header is a parsed frame header.
type header struct {
	fin    bool
	rsv1   bool // permessage-deflate: the message is compressed
	op     opcode
	masked bool
	mask   [4]byte
	length int64
}

// protocolError is a peer's violation of the protocol, with the close code
// that answers it.
type protocolError struct {
	code int
	msg  string
}

func (e *protocolError) Error() string { return fmt.Sprintf("websocket: %s (close %d)", e.msg, e.code) }

// Is lets errors.Is(err, ErrProtocol) match every protocol error.
func (e *protocolError) Is(target error) bool { return target == ErrProtocol }

// ErrProtocol matches (errors.Is) every error the peer's bytes caused: a
// refused frame, a message over the limit, text that is not UTF-8.
var ErrProtocol = errors.New("websocket: protocol error")

func protoErr(code int, format string, args ...any) error {
	return &protocolError{code: code, msg: fmt.Sprintf(format, args...)}
}

// parseHeader parses the frame header at the start of b. It returns n == 0
// and no error when b holds only part of a header. requireMask is a
// server's rule that every client frame is masked (a client passes false
// and refuses masked frames instead). deflate says permessage-deflate was
// negotiated, which gives RSV1 a meaning on a message's first frame; the
// other RSV bits are always refused.
func parseHeader(b []byte, requireMask, deflate bool) (h header, n int, err error) {
	if len(b) < 2 {
		return h, 0, nil
	}
	b0, b1 := b[0], b[1]
	h.fin = b0&0x80 != 0
	h.rsv1 = b0&0x40 != 0
	h.op = opcode(b0 & 0x0F)
	h.masked = b1&0x80 != 0
	rsv := b0 & 0x70
	if deflate {
		rsv &^= 0x40
	}
	switch {
	case rsv != 0:
		return h, 0, protoErr(CloseProtocolError, "reserved bits 0x%x set with no extension", rsv)
	case h.rsv1 && (h.op.control() || h.op == opContinuation):
		return h, 0, protoErr(CloseProtocolError, "RSV1 on a control or continuation frame")
	case !h.op.known():
		return h, 0, protoErr(CloseProtocolError, "reserved opcode 0x%x", uint8(h.op))
	case h.masked != requireMask:
		if requireMask {
			return h, 0, protoErr(CloseProtocolError, "unmasked client frame")
		}
		return h, 0, protoErr(CloseProtocolError, "masked server frame")
	}
	n = 2
	switch l := b1 & 0x7F; l {
	case 126:
		if len(b) < 4 {
			return h, 0, nil
		}
		h.length, n = int64(binary.BigEndian.Uint16(b[2:])), 4
	case 127:
		if len(b) < 10 {
			return h, 0, nil
		}
		u := binary.BigEndian.Uint64(b[2:])
		if u>>63 != 0 {
			return h, 0, protoErr(CloseProtocolError, "64-bit length with its top bit set")
		}
		h.length, n = int64(u), 10
	default:
		h.length = int64(l)
	}
	if h.op.control() {
		switch {
		case !h.fin:
			return h, 0, protoErr(CloseProtocolError, "fragmented control frame")
		case h.length > maxControlPayload:
			return h, 0, protoErr(CloseProtocolError, "control frame of %d bytes (at most %d)", h.length, maxControlPayload)
		}
	}
	if h.masked {
		if len(b) < n+4 {
			return h, 0, nil
		}
		copy(h.mask[:], b[n:])
		n += 4
	}
	return h, n, nil
}

// appendHeader appends a frame header for a payload of length bytes; a
// client passes masked with its key (and masks the payload with maskBytes),
// a server sends its frames unmasked.
func appendHeader(dst []byte, fin bool, op opcode, length int, masked bool, key [4]byte) []byte {
	b0 := byte(op)
	if fin {
		b0 |= 0x80
	}
	var m byte
	if masked {
		m = 0x80
	}
	switch {
	case length <= 125:
		dst = append(dst, b0, m|byte(length))
	case length <= 0xFFFF:
		dst = append(dst, b0, m|126)
		dst = binary.BigEndian.AppendUint16(dst, uint16(length))
	default:
		dst = append(dst, b0, m|127)
		dst = binary.BigEndian.AppendUint64(dst, uint64(length))
	}
	if masked {
		dst = append(dst, key[:]...)
	}
	return dst
}

// maskBytes XORs b with key, starting pos bytes into the payload, in place
// (masking and unmasking are the same), and returns the position after b.
func maskBytes(key [4]byte, pos int, b []byte) int {
	pos &= 3
	i := 0
	// Byte at a time up to a key boundary, then eight bytes at a time.
	for ; i < len(b) && pos != 0; i++ {
		b[i] ^= key[pos]
		pos = (pos + 1) & 3
	}
	if len(b)-i >= 8 {
		k := uint64(binary.LittleEndian.Uint32(key[:]))
		k |= k << 32
		for ; len(b)-i >= 8; i += 8 {
			binary.LittleEndian.PutUint64(b[i:], binary.LittleEndian.Uint64(b[i:])^k)
		}
	}
	for ; i < len(b); i++ {
		b[i] ^= key[pos]
		pos = (pos + 1) & 3
	}
	return pos
}

package frame

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
)

// ErrTooLong is the split error for a frame longer than its limit.
var ErrTooLong = errors.New("frame: too long")

// LengthPrefixed splits frames that start with their payload's length as
// an unsigned integer of size bytes (1, 2, 4 or 8) in order; the token is
// the payload, without the header. A length over max is refused with
// ErrTooLong as soon as the header arrives, before the payload is read.
func LengthPrefixed(size int, order binary.ByteOrder, max int) bufio.SplitFunc {
	switch size {
	case 1, 2, 4, 8:
	default:
		panic(fmt.Sprintf("frame: LengthPrefixed header size %d (expected 1, 2, 4 or 8)", size))
	}
	if max < 0 {
		panic(fmt.Sprintf("frame: LengthPrefixed max %d (expected >= 0)", max))
	}
	return func(b []byte, atEOF bool) (int, []byte, error) {
		if atEOF && isProbe(b) {
			return size + max, nil, errProbe
		}
		if len(b) < size {
			return 0, nil, nil
		}
		var n uint64
		switch size {
		case 1:
			n = uint64(b[0])
		case 2:
			n = uint64(order.Uint16(b))
		case 4:
			n = uint64(order.Uint32(b))
		case 8:
			n = order.Uint64(b)
		}
		if n > uint64(max) {
			return 0, nil, fmt.Errorf("%w: length %d over %d", ErrTooLong, n, max)
		}
		end := size + int(n)
		if len(b) < end {
			return 0, nil, nil
		}
		return end, b[size:end:end], nil
	}
}

// Delimited splits frames that end with delim (not empty); the token is
// the frame without it. A frame that reaches max bytes without its
// delimiter is refused with ErrTooLong. Text lines are bufio.ScanLines
// (which also drops a carriage return) or Delimited([]byte("\n"), max).
func Delimited(delim []byte, max int) bufio.SplitFunc {
	if len(delim) == 0 {
		panic("frame: Delimited with an empty delimiter")
	}
	if max < 0 {
		panic(fmt.Sprintf("frame: Delimited max %d (expected >= 0)", max))
	}
	d := bytes.Clone(delim)
	return func(b []byte, atEOF bool) (int, []byte, error) {
		if atEOF && isProbe(b) {
			return max + len(d), nil, errProbe
		}
		if i := bytes.Index(b, d); i >= 0 {
			if i > max {
				return 0, nil, fmt.Errorf("%w: %d bytes before the delimiter, over %d", ErrTooLong, i, max)
			}
			return i + len(d), b[:i:i], nil
		}
		// A frame of max bytes has its delimiter start at b[max]: past
		// max, only the start of one may follow.
		if len(b) > max && !bytes.HasPrefix(d, b[max:]) {
			return 0, nil, fmt.Errorf("%w: %d bytes and no delimiter, over %d", ErrTooLong, len(b), max)
		}
		return 0, nil, nil
	}
}

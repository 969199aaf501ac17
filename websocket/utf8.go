package websocket

import "unicode/utf8"

// utf8Checker validates text that arrives in pieces (fragments, reads): a
// code point may be split anywhere, and an invalid one is refused as soon as
// its first wrong byte arrives (§8.1 lets an endpoint fail fast).
type utf8Checker struct {
	need   uint8 // continuation bytes still due
	lo, hi byte  // the range of the next continuation byte
}

// write reports whether p continues valid UTF-8.
func (u *utf8Checker) write(p []byte) bool {
	i := 0
	for ; u.need > 0 && i < len(p); i++ {
		if !u.step(p[i]) {
			return false
		}
	}
	p = p[i:]
	// The bulk goes to utf8.Valid; the last (possibly unfinished) sequence
	// to the byte-wise checker.
	j := len(p)
	for k := len(p) - 1; k >= 0 && k >= len(p)-4; k-- {
		if p[k]&0xC0 != 0x80 {
			j = k
			break
		}
	}
	if !utf8.Valid(p[:j]) {
		return false
	}
	for _, c := range p[j:] {
		if !u.step(c) {
			return false
		}
	}
	return true
}

// done reports whether the text ended on a whole code point, and resets.
func (u *utf8Checker) done() bool {
	ok := u.need == 0
	*u = utf8Checker{}
	return ok
}

// step takes one byte (RFC 3629's table: no overlong forms, no surrogates,
// nothing past U+10FFFF).
func (u *utf8Checker) step(c byte) bool {
	if u.need > 0 {
		if c < u.lo || c > u.hi {
			return false
		}
		u.need--
		u.lo, u.hi = 0x80, 0xBF
		return true
	}
	u.lo, u.hi = 0x80, 0xBF
	switch {
	case c < 0x80:
	case c >= 0xC2 && c <= 0xDF:
		u.need = 1
	case c == 0xE0:
		u.need, u.lo = 2, 0xA0
	case c == 0xED:
		u.need, u.hi = 2, 0x9F
	case c >= 0xE1 && c <= 0xEF:
		u.need = 2
	case c == 0xF0:
		u.need, u.lo = 3, 0x90
	case c >= 0xF1 && c <= 0xF3:
		u.need = 3
	case c == 0xF4:
		u.need, u.hi = 3, 0x8F
	default:
		return false
	}
	return true
}

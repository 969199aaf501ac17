package websocket

import (
	"bytes"
	"testing"
)

// FuzzFrames feeds arbitrary bytes, split at an arbitrary point, to the
// header parser and the payload path a server runs: it must never panic,
// must agree with itself however the bytes are split, and every header it
// accepts must follow RFC 6455's rules and round-trip through appendHeader.
func FuzzFrames(f *testing.F) {
	seeds := [][]byte{
		{0x81, 0x85, 1, 2, 3, 4, 'h' ^ 1, 'e' ^ 2, 'l' ^ 3, 'l' ^ 4, 'o' ^ 1},
		{0x82, 0xFE, 0x01, 0x00, 0, 0, 0, 0},
		{0x82, 0xFF, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0},
		{0x82, 0xFF, 0x80, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0},
		{0x89, 0x80, 9, 9, 9, 9},
		{0x88, 0x82, 0, 0, 0, 0, 0x03, 0xE8},
		{0x01, 0x81, 0, 0, 0, 0, 'a', 0x80, 0x81, 0, 0, 0, 0, 'b'},
		{0xC1, 0x80, 0, 0, 0, 0},
		{0x83, 0x80, 0, 0, 0, 0},
		{0x09, 0x80, 0, 0, 0, 0},
		{0x81, 0x05, 'h', 'e', 'l', 'l', 'o'},
		{0x81, 0x84, 0, 0, 0, 0, 0xCE, 0xBA, 0xE1, 0xBD},
	}
	for _, s := range seeds {
		f.Add(s, uint8(3))
	}
	f.Fuzz(func(t *testing.T, b []byte, cut uint8) {
		whole, wholeErr := parseAll(b, len(b))
		split, splitErr := parseAll(b, int(cut))
		if (wholeErr == nil) != (splitErr == nil) || !bytes.Equal(whole, split) {
			t.Fatalf("whole %x %v, split at %d %x %v", whole, wholeErr, cut, split, splitErr)
		}
		h, n, err := parseHeader(b, true, false)
		if err != nil || n == 0 {
			return
		}
		switch {
		case !h.masked, h.length < 0, h.op.control() && (!h.fin || h.length > maxControlPayload), !h.op.known():
			t.Fatalf("accepted %+v", h)
		}
		again := appendHeader(nil, h.fin, h.op, int(h.length), true, h.mask)
		h2, n2, err := parseHeader(again, true, false)
		if err != nil || n2 != len(again) || h2 != h {
			t.Fatalf("round trip of %+v: %+v, %d, %v", h, h2, n2, err)
		}
	})
}

// parseAll runs the header parser and unmasking over b, delivered in two
// pieces (the first cut bytes, then the rest), as OnData sees it with
// kept bytes, and returns every frame's unmasked payload.
func parseAll(b []byte, cut int) ([]byte, error) {
	cut = min(cut, len(b))
	var out, pending []byte
	var h header
	inFrame := false
	var remaining int64
	pos := 0
	for _, piece := range [][]byte{b[:cut], b[cut:]} {
		buf := append(pending, piece...)
		pending = nil
		for len(buf) > 0 {
			if !inFrame {
				var n int
				var err error
				h, n, err = parseHeader(buf, true, false)
				if err != nil {
					return out, err
				}
				if n == 0 {
					pending = append([]byte(nil), buf...)
					break
				}
				buf = buf[n:]
				inFrame, remaining, pos = true, h.length, 0
			}
			k := int(min(int64(len(buf)), remaining))
			p := append([]byte(nil), buf[:k]...)
			pos = maskBytes(h.mask, pos, p)
			out = append(out, p...)
			buf, remaining = buf[k:], remaining-int64(k)
			if remaining == 0 {
				inFrame = false
			}
		}
	}
	return out, nil
}

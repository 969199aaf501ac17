package websocket

import (
	"bytes"
	"errors"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/require"
)

// TestParseHeader: each length form, masking rules and every refusal the
// server applies, and partial headers asking for more bytes.
func TestParseHeader(t *testing.T) {
	key := [4]byte{1, 2, 3, 4}
	for _, n := range []int{0, 1, 125, 126, 65535, 65536, 1 << 40} {
		b := appendHeader(nil, true, opBinary, n, true, key)
		for cut := range len(b) {
			_, got, err := parseHeader(b[:cut], true, false)
			require.NoError(t, err)
			require.Zero(t, got, "length %d cut at %d", n, cut)
		}
		h, got, err := parseHeader(b, true, false)
		require.NoError(t, err)
		require.Equal(t, len(b), got)
		require.Equal(t, header{fin: true, op: opBinary, masked: true, mask: key, length: int64(n)}, h)
	}
	refused := map[string][]byte{
		"rsv1":              {0xC1, 0x80, 0, 0, 0, 0},
		"rsv2":              {0xA1, 0x80, 0, 0, 0, 0},
		"rsv3":              {0x91, 0x80, 0, 0, 0, 0},
		"opcode 3":          {0x83, 0x80, 0, 0, 0, 0},
		"opcode 0xB":        {0x8B, 0x80, 0, 0, 0, 0},
		"unmasked":          {0x81, 0x00},
		"fragmented ping":   {0x09, 0x80, 0, 0, 0, 0},
		"ping of 126 bytes": {0x89, 0xFE, 0, 126, 0, 0, 0, 0},
		"top bit":           {0x82, 0xFF, 0x80, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0},
	}
	for name, b := range refused {
		_, _, err := parseHeader(b, true, false)
		var pe *protocolError
		require.True(t, errors.As(err, &pe), name)
		require.Equal(t, CloseProtocolError, pe.code, name)
		require.ErrorIs(t, err, ErrProtocol)
	}
	_, _, err := parseHeader([]byte{0x81, 0x80, 0, 0, 0, 0}, false, false)
	require.Error(t, err, "a client refuses masked frames")
	_, n, err := parseHeader([]byte{0x81, 0x00}, false, false)
	require.NoError(t, err)
	require.Equal(t, 2, n)
}

// TestMaskBytes: masking in pieces at any offset equals masking at once,
// and twice restores the input.
func TestMaskBytes(t *testing.T) {
	key := [4]byte{0xA1, 0xB2, 0xC3, 0xD4}
	src := make([]byte, 100)
	for i := range src {
		src[i] = byte(i * 7)
	}
	whole := bytes.Clone(src)
	maskBytes(key, 0, whole)
	for i := range whole {
		require.Equal(t, src[i]^key[i%4], whole[i])
	}
	for cut := range len(src) {
		p := bytes.Clone(src)
		pos := maskBytes(key, 0, p[:cut])
		maskBytes(key, pos, p[cut:])
		require.Equal(t, whole, p, "cut %d", cut)
		maskBytes(key, 0, p)
		require.Equal(t, src, p)
	}
}

// TestUTF8Checker agrees with utf8.Valid on every split of valid and
// invalid text, and refuses an invalid byte as soon as it arrives.
func TestUTF8Checker(t *testing.T) {
	texts := []string{"", "hello", "κόσμε", "\u00e9\u4e16\U0001F600", "\xed\xa0\x80", "\xf4\x90\x80\x80",
		"\xc0\xaf", "\xe0\x80\xaf", "a\xffb", "\xce\xba\xe1\xbd\xb9\xcf\x83\xce\xbc\xce\xb5\xed\xa0\x80edited",
		"\xf0\x9f\x98", "\x80", "abc\xe2\x82"}
	for _, s := range texts {
		b := []byte(s)
		for cut := 0; cut <= len(b); cut++ {
			for cut2 := cut; cut2 <= len(b); cut2++ {
				var u utf8Checker
				ok := u.write(b[:cut]) && u.write(b[cut:cut2]) && u.write(b[cut2:]) && u.done()
				require.Equal(t, utf8.ValidString(s), ok, "%q cut %d %d", s, cut, cut2)
			}
		}
	}
	var u utf8Checker
	require.False(t, u.write([]byte("\xce\xba\xed\xa0")), "a surrogate fails at its second byte")
}

package frame

import (
	"bufio"
	"encoding/binary"
	"testing"
)

// TestBoundOf: Split learns the largest unfinished frame of this package's
// bounded split functions (header or delimiter included), and of no other
// function: one of the user's, even wrapping LengthPrefixed, is bounded by
// the connection's keep limit and never probed.
func TestBoundOf(t *testing.T) {
	lp := LengthPrefixed(4, binary.BigEndian, 4<<20)
	probed := false
	for _, c := range []struct {
		name  string
		split bufio.SplitFunc
		want  int
	}{
		{"LengthPrefixed", lp, 4 + 4<<20},
		{"LengthPrefixed 8", LengthPrefixed(8, binary.LittleEndian, 10), 18},
		{"Delimited", Delimited([]byte("\r\n"), 2<<20), 2 + 2<<20},
		{"ScanLines", bufio.ScanLines, 0},
		{"user's", func(b []byte, atEOF bool) (int, []byte, error) { probed = true; return lp(b, atEOF) }, 0},
	} {
		if got := boundOf(c.split); got != c.want {
			t.Errorf("%s: bound %d, want %d", c.name, got, c.want)
		}
	}
	if probed {
		t.Error("Split called a split function it does not know")
	}
	// The probe is not an input: an empty slice at EOF is no frame.
	if adv, tok, err := lp(make([]byte, 0, 1), true); adv != 0 || tok != nil || err != nil {
		t.Errorf("LengthPrefixed on empty input at EOF: %d, %q, %v", adv, tok, err)
	}
}

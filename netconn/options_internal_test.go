package netconn

import "testing"

// TestOptionZeroKeepsDefault: in BufferLimits a zero field keeps its value
// (the default, or what an earlier option set), each field takes effect on
// its own, and a negative one is an error.
func TestOptionZeroKeepsDefault(t *testing.T) {
	c, err := newConfig([]Option{WithBufferLimits(BufferLimits{})})
	if err != nil {
		t.Fatal(err)
	}
	if c.readLimit != DefaultReadLimit || c.writeLimit != DefaultWriteLimit {
		t.Errorf("zero limits: read %d write %d", c.readLimit, c.writeLimit)
	}
	c, err = newConfig([]Option{WithBufferLimits(BufferLimits{Read: 10}), WithBufferLimits(BufferLimits{Write: 20})})
	if err != nil {
		t.Fatal(err)
	}
	if c.readLimit != 10 || c.writeLimit != 20 {
		t.Errorf("limits: read %d write %d", c.readLimit, c.writeLimit)
	}
	for _, o := range []Option{WithBufferLimits(BufferLimits{Read: -1}), WithBufferLimits(BufferLimits{Write: -1})} {
		if _, err := newConfig([]Option{o}); err == nil {
			t.Errorf("a negative buffer limit was accepted")
		}
	}
}

package netconn

import "testing"

// TestOptionZeroKeepsDefault: in Limits a zero field keeps its value
// (the default, or what an earlier option set), each field takes effect on
// its own, and a negative one is an error.
func TestOptionZeroKeepsDefault(t *testing.T) {
	c, err := newConfig([]Option{WithLimits(Limits{})})
	if err != nil {
		t.Fatal(err)
	}
	if c.readLimit != defaultReadLimit || c.writeLimit != defaultWriteLimit || c.acceptQueue != defaultAcceptQueue {
		t.Errorf("zero limits: read %d write %d accept queue %d", c.readLimit, c.writeLimit, c.acceptQueue)
	}
	c, err = newConfig([]Option{WithLimits(Limits{Read: 10}), WithLimits(Limits{Write: 20}), WithLimits(Limits{AcceptQueue: 3})})
	if err != nil {
		t.Fatal(err)
	}
	if c.readLimit != 10 || c.writeLimit != 20 || c.acceptQueue != 3 {
		t.Errorf("limits: read %d write %d accept queue %d", c.readLimit, c.writeLimit, c.acceptQueue)
	}
	for _, o := range []Option{WithLimits(Limits{Read: -1}), WithLimits(Limits{Write: -1}), WithLimits(Limits{AcceptQueue: -1})} {
		if _, err := newConfig([]Option{o}); err == nil {
			t.Errorf("a negative buffer limit was accepted")
		}
	}
}

package httpserver

import (
	"testing"
	"time"
)

// TestOptionZeroKeepsDefault: in Limits and Timeouts a zero field keeps its
// default, NoTimeout turns a timeout off, and a negative value is an error.
func TestOptionZeroKeepsDefault(t *testing.T) {
	c, err := newConfig([]Option{
		WithLimits(Limits{Headers: 10}),
		WithTimeouts(Timeouts{Read: NoTimeout, Idle: time.Minute}),
	})
	if err != nil {
		t.Fatal(err)
	}
	if c.maxHeaders != 10 || c.maxHeaderBytes != DefaultMaxHeaderBytes || c.maxLine != DefaultMaxRequestLine || c.maxBody != DefaultMaxBodyBytes {
		t.Errorf("limits: %+v", c.limits)
	}
	if c.readHeader != DefaultReadHeaderTimeout || c.read != 0 || c.idle != time.Minute {
		t.Errorf("timeouts: header %v read %v idle %v", c.readHeader, c.read, c.idle)
	}
	for _, o := range []Option{
		WithLimits(Limits{Body: -1}),
		WithLimits(Limits{Body: 2 << 30}),
		WithTimeouts(Timeouts{Idle: -2 * time.Second}),
	} {
		if _, err := newConfig([]Option{o}); err == nil {
			t.Errorf("an invalid option was accepted")
		}
	}
}

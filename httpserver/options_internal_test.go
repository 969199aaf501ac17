package httpserver

import (
	"net/http"
	"testing"
	"time"
)

// TestOptionZeroKeepsDefault: in Limits and Timeouts a zero field keeps its
// default, NoTimeout turns a timeout off, and a negative value is an error.
func TestOptionZeroKeepsDefault(t *testing.T) {
	c, err := newConfig([]Option{
		WithLimits(Limits{Headers: 10}),
		WithTimeouts(Timeouts{Read: NoTimeout, Idle: time.Minute}),
		WithTimeouts(Timeouts{WriteStall: NoTimeout}),
	})
	if err != nil {
		t.Fatal(err)
	}
	if c.maxHeaders != 10 || c.maxHeaderBytes != http.DefaultMaxHeaderBytes || c.maxLine != DefaultMaxRequestLine || c.maxBody != DefaultMaxBodyBytes {
		t.Errorf("limits: %+v", c.limits)
	}
	if c.readHeader != DefaultReadHeaderTimeout || c.read != 0 || c.idle != time.Minute || c.write != 0 || c.stall != 0 {
		t.Errorf("timeouts: header %v read %v idle %v write %v stall %v", c.readHeader, c.read, c.idle, c.write, c.stall)
	}
	// Write has no default, as net/http's WriteTimeout; WriteStall has.
	c, err = newConfig([]Option{WithTimeouts(Timeouts{Write: time.Second})})
	if err != nil || c.write != time.Second || c.stall != DefaultWriteStallTimeout {
		t.Errorf("write %v stall %v: %v", c.write, c.stall, err)
	}
	if c, _ := newConfig(nil); c.write != 0 {
		t.Errorf("default write timeout %v, want none", c.write)
	}
	if c, _ := newConfig([]Option{WithTimeouts(Timeouts{Write: time.Second}), WithTimeouts(Timeouts{Write: NoTimeout})}); c.write != 0 {
		t.Errorf("NoTimeout left the write timeout at %v", c.write)
	}
	for _, o := range []Option{
		WithLimits(Limits{Body: -1}),
		WithLimits(Limits{Body: 2 << 30}),
		WithTimeouts(Timeouts{Idle: -2 * time.Second}),
		WithTimeouts(Timeouts{Write: -2 * time.Second}),
		WithTimeouts(Timeouts{WriteStall: -2 * time.Second}),
	} {
		if _, err := newConfig([]Option{o}); err == nil {
			t.Errorf("an invalid option was accepted")
		}
	}
}

package option

import (
	"testing"
	"time"
)

type conf struct{ n int }

func TestBounds(t *testing.T) {
	for _, tc := range []struct {
		opt  func(*conf) error
		want string // "" when the option applies
	}{
		{Positive("p: size", 3, func(c *conf) { c.n = 3 }), ""},
		{Positive("p: size", 0, func(c *conf) { c.n = 3 }), "p: size 0 (expected > 0)"},
		{Positive("p: timeout", -time.Second, func(c *conf) { c.n = 3 }), "p: timeout -1s (expected > 0)"},
		{NonNegative("p: loops", 0, "; 0 = default", func(c *conf) { c.n = 3 }), ""},
		{NonNegative("p: loops", -2, "; 0 = default", func(c *conf) { c.n = 3 }), "p: loops -2 (expected >= 0; 0 = default)"},
		{NonNegative("p: spin", -time.Millisecond, "", func(c *conf) { c.n = 3 }), "p: spin -1ms (expected >= 0)"},
		{Required("x", "p: empty name", func(c *conf) { c.n = 3 }), ""},
		{Required("", "p: empty name", func(c *conf) { c.n = 3 }), "p: empty name"},
		{Required((*int)(nil), "p: nil thing", func(c *conf) { c.n = 3 }), "p: nil thing"},
	} {
		var c conf
		err := tc.opt(&c)
		switch {
		case tc.want == "" && (err != nil || c.n != 3):
			t.Errorf("want applied, got %v (n=%d)", err, c.n)
		case tc.want != "" && (err == nil || err.Error() != tc.want || c.n != 0):
			t.Errorf("want error %q and nothing set, got %v (n=%d)", tc.want, err, c.n)
		}
	}
}

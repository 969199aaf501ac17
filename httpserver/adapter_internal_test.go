package httpserver

import (
	"math/rand/v2"
	"net/url"
	"reflect"
	"testing"
)

// TestPlainTarget checks the adapter's in-place URL parsing against
// url.ParseRequestURI: on every target it takes, the URL must be the one
// net/url makes, and it must take the plain targets it is meant for.
func TestPlainTarget(t *testing.T) {
	check := func(target string) bool {
		t.Helper()
		var got url.URL
		if !plainTarget(target, &got) {
			return false
		}
		want, err := url.ParseRequestURI(target)
		if err != nil {
			t.Fatalf("%q: plainTarget took it, url.ParseRequestURI refuses it: %v", target, err)
		}
		if !reflect.DeepEqual(&got, want) {
			t.Fatalf("%q: plainTarget made %#v, url.ParseRequestURI %#v", target, got, *want)
		}
		return true
	}
	for _, target := range []string{"/", "/hello", "/a/b/c.txt", "/~user/x-y_z", "/a?", "/a?b=c&d=e", "/a??", "/a?b?",
		"/a?x=%20y", "/?", "/a?b=c/d:e@f", "/a?b=\"c\"", "/.."} {
		if !check(target) {
			t.Errorf("%q: not taken, want taken", target)
		}
	}
	for _, target := range []string{"", "*", "a", "//a", "/a%20b", "/a b", "/a#b", "/a?b#c", "/a!b", "/a;b", "/a:b",
		"/a\x7f", "/a?b\x01", "/ä", "http://h/a", "/a?ä"} {
		if check(target) {
			t.Errorf("%q: taken, want it left to url.ParseRequestURI", target)
		}
	}
	// Random targets over the characters that matter: whatever is taken
	// must agree with net/url.
	const alphabet = "/?#%:;@!$&=+,.-_~aZ09 \x7f\x01\x80\"'()*[]"
	r := rand.New(rand.NewPCG(1, 2))
	for range 200000 {
		b := make([]byte, 1+r.IntN(12))
		for i := range b {
			b[i] = alphabet[r.IntN(len(alphabet))]
		}
		if r.IntN(2) == 0 {
			b[0] = '/'
		}
		check(string(b))
	}
}

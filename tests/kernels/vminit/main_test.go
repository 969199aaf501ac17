//go:build linux

package main

import (
	"encoding/base64"
	"slices"
	"testing"
)

// TestTestArgs: the flags the host encoded come back as separate arguments;
// nothing set gives none.
func TestTestArgs(t *testing.T) {
	enc := base64.RawURLEncoding.EncodeToString([]byte("-test.run=TestHub  -test.count=4"))
	if got := testArgs(enc); !slices.Equal(got, []string{"-test.run=TestHub", "-test.count=4"}) {
		t.Fatalf("testArgs = %q", got)
	}
	if got := testArgs(""); got != nil {
		t.Fatalf("testArgs(\"\") = %q", got)
	}
}

// TestQueue: the packages named first run first, in the order given; the
// rest follow by name; a name with no binary is ignored.
func TestQueue(t *testing.T) {
	bins := []string{"/tests/a.test", "/tests/engine.test", "/tests/tests.test", "/tests/websocket.test", "/tests/b.test"}
	got := queue(bins, []string{"websocket", "gone", "tests"})
	want := []string{"/tests/websocket.test", "/tests/tests.test", "/tests/a.test", "/tests/b.test", "/tests/engine.test"}
	if !slices.Equal(got, want) {
		t.Fatalf("queue = %q, want %q", got, want)
	}
	if got := queue(bins, []string{""}); !slices.Equal(got, slices.Sorted(slices.Values(bins))) {
		t.Fatalf("queue with nothing first = %q", got)
	}
}

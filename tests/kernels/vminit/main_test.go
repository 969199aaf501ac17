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

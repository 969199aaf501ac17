package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestReadPinsOnlyNamed: -kernels boots the kernels it names and no other
// (naming the first pinned one once selected every kernel after it), and a
// name that no pin has is an error.
func TestReadPinsOnlyNamed(t *testing.T) {
	path := filepath.Join(t.TempDir(), "pins")
	pins := "# name suite package version sha256\n" +
		"5.10 bullseye a 1 x\n6.1 bookworm b 2 y\n6.12 trixie c 3 z\n"
	if err := os.WriteFile(path, []byte(pins), 0o644); err != nil {
		t.Fatal(err)
	}
	for only, want := range map[string]string{"": "5.10 6.1 6.12", "5.10": "5.10", "6.1": "6.1", "5.10,6.12": "5.10 6.12"} {
		ks, err := readPins(path, only)
		if err != nil {
			t.Fatalf("-kernels %q: %v", only, err)
		}
		var names []string
		for _, k := range ks {
			names = append(names, k.name)
		}
		if got := strings.Join(names, " "); got != want {
			t.Errorf("-kernels %q boots %q, want %q", only, got, want)
		}
	}
	if _, err := readPins(path, "5.10,4.19"); err == nil || !strings.Contains(err.Error(), "4.19") {
		t.Errorf("-kernels naming an unpinned kernel: error %v", err)
	}
}

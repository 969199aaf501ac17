package main

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// The fixture module declares each kind of name once or twice, plus the
// names that must not count: unexported ones, a method of an unexported
// type (but one it promotes to an exported type counts there), an interface's methods, test files, internal/, examples/, a package
// main and a nested module. F2 is declared in a cgo file and its stub.
func TestCountFixture(t *testing.T) {
	pkgs, err := Count("testdata/mod")
	require.NoError(t, err)
	require.Equal(t, []Package{
		{Dir: ".", Name: "fixture", Counts: Counts{Funcs: 4, Types: 4, Consts: 2, Vars: 1, Methods: 4, With: 1},
			Names: []string{"const A", "const B", "func F", "func F2", "func WithA", "func Without", "method G.Get",
				"method T.M", "method T.N", "method T.X", "type Alias", "type G", "type I", "type T", "var V"}},
		{Dir: "sub", Name: "sub", Counts: Counts{Funcs: 1, Vars: 1, With: 1}, Names: []string{"func WithB", "var E"}},
	}, pkgs)
	require.Equal(t, 15, pkgs[0].Total())

	var out strings.Builder
	require.NoError(t, report(&out, pkgs))
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	require.Len(t, lines, 4, out.String())
	require.Equal(t, []string{"module", "5", "4", "2", "2", "4", "17", "2"}, strings.Fields(lines[3]))
}

func TestIsOption(t *testing.T) {
	for name, want := range map[string]bool{"WithBackend": true, "WithX": true, "With": false, "Without": false, "Withdraw": false} {
		require.Equal(t, want, isOption(name), name)
	}
}

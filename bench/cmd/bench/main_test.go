package main

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ringloop/ringloop/bench/runner"
)

// TestSelectCases: -cases keeps the named cases in the suite's order and
// refuses an id the suite does not have.
func TestSelectCases(t *testing.T) {
	cases, err := runner.Suite(runner.Full)
	require.NoError(t, err)
	got, err := selectCases(cases, []string{"p1-tls-idle-10k", "p1-tls-handshake-c16"})
	require.NoError(t, err)
	require.Len(t, got, 2)
	require.Equal(t, "p1-tls-handshake-c16", got[0].ID)
	require.Equal(t, "p1-tls-idle-10k", got[1].ID)
	_, err = selectCases(cases, []string{"p1-tls-handshake-c16", "no-such-case"})
	require.ErrorContains(t, err, "no-such-case")
}

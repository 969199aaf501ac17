package httpserver

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestH2FloodWindowOwed: the WINDOW_UPDATEs a window's worth of small DATA
// frames earns are accepted however late they come (a slow client reading
// a backlog answers it seconds later, all at once); past them the
// second's bound holds.
func TestH2FloodWindowOwed(t *testing.T) {
	var f h2Flood
	t0 := int64(time.Hour)
	const frames = 8191 // 8-byte messages in a 64 KiB window
	for range frames {
		f.sent(t0, 8)
	}
	late := t0 + int64(3*time.Second)
	for i := range 2 * frames {
		require.NoError(t, f.add(late, h2Window, 100), "update %d", i)
	}
	for i := range h2FloodLimit[h2Window] {
		require.NoError(t, f.add(late, h2Window, 100), "unearned update %d", i)
	}
	require.Error(t, f.add(late, h2Window, 100), "past the second's bound")

	// A KiB sent earns one more.
	var g h2Flood
	g.sent(t0, 16<<10)
	for range 2 + 16 + h2FloodLimit[h2Window] {
		require.NoError(t, g.add(late, h2Window, 100))
	}
	require.Error(t, g.add(late, h2Window, 100))
}

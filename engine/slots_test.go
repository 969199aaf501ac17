package engine

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// TestSlotTableGenerations: a freed slot is reused under a new generation,
// so the old (index, generation) finds nothing, and removing it again
// changes nothing.
func TestSlotTableGenerations(t *testing.T) {
	var st slotTable[string]
	i1, g1 := st.add("a")
	i2, g2 := st.add("b")
	require.NotEqual(t, i1, i2)
	v, ok := st.get(i1, g1)
	require.True(t, ok)
	require.Equal(t, "a", v)

	v, ok = st.remove(i1, g1)
	require.True(t, ok)
	require.Equal(t, "a", v)
	_, ok = st.remove(i1, g1)
	require.False(t, ok, "a second remove of the same slot is a no-op")
	require.Equal(t, 1, st.live)

	i3, g3 := st.add("c")
	require.Equal(t, i1, i3, "the freed slot is reused")
	require.NotEqual(t, g1, g3)
	_, ok = st.get(i1, g1)
	require.False(t, ok, "the old generation is stale")
	_, ok = st.get(99, 0)
	require.False(t, ok, "an index past the table is stale")

	var seen []string
	st.each(func(s string) { seen = append(seen, s) })
	require.ElementsMatch(t, []string{"c", "b"}, seen)
	_, _ = st.remove(i2, g2)
	_, _ = st.remove(i3, g3)
	require.Zero(t, st.live)
}

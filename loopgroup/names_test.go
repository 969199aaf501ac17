package loopgroup_test

import (
	"regexp"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ringloop/ringloop/engine"
	"github.com/ringloop/ringloop/internal/testenv"
	"github.com/ringloop/ringloop/loopgroup"
)

// TestLoopNamesInGroups: a named group's loops are "<name>-<index>"; an
// unnamed group's are "group-<n>-<index>", n counting the unnamed groups of
// the process, so the same code names them the same at every start; an
// engine.WithName among the engine options names the loops of an unnamed
// group, the group's own name wins over it; an empty name is refused. The
// names are the loops' metrics labels.
func TestLoopNamesInGroups(t *testing.T) {
	testenv.ForEach(t, func(t *testing.T, c testenv.Combo) {
		g := newGroup(t, c, loopgroup.WithName("workers"), loopgroup.WithLoops(2))
		var names []string
		for _, l := range g.Loops() {
			names = append(names, l.Name())
		}
		require.Equal(t, []string{"workers-0", "workers-1"}, names)

		a := newGroup(t, c, loopgroup.WithLoops(2))
		b := newGroup(t, c, loopgroup.WithLoops(1))
		re := regexp.MustCompile(`^group-(\d+)-(\d+)$`)
		var an, bn []string
		for _, l := range a.Loops() {
			an = append(an, l.Name())
		}
		for _, l := range b.Loops() {
			bn = append(bn, l.Name())
		}
		m0, m1, mb := re.FindStringSubmatch(an[0]), re.FindStringSubmatch(an[1]), re.FindStringSubmatch(bn[0])
		require.NotNil(t, m0, an[0])
		require.NotNil(t, m1, an[1])
		require.NotNil(t, mb, bn[0])
		require.Equal(t, m0[1], m1[1], "one group, one prefix")
		require.Equal(t, []string{"0", "1"}, []string{m0[2], m1[2]})
		require.NotEqual(t, m0[1], mb[1], "two groups, two prefixes")

		e := newGroup(t, c, loopgroup.WithLoops(1), loopgroup.WithEngineOptions(engine.WithName("mine")))
		require.Equal(t, "mine", e.Next().Name())
		n := newGroup(t, c, loopgroup.WithLoops(1), loopgroup.WithName("http"), loopgroup.WithEngineOptions(engine.WithName("mine")))
		require.Equal(t, "http-0", n.Next().Name())

		_, err := loopgroup.New(loopgroup.WithName(""))
		require.ErrorContains(t, err, "empty group name")
	})
}

package engine_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ringloop/ringloop/engine"
	"github.com/ringloop/ringloop/internal/testenv"
)

// The driver's settings a user sees are engine's names: a kernel profile
// and the ring and buffer sizes reach the driver, and the loop reports the
// profile in force in Backend().Features.
func TestDriverSettings(t *testing.T) {
	testenv.ForEachBackend(t, func(t *testing.T, c testenv.Combo) {
		testenv.CheckLeaks(t)
		l := newLoop(t, c, engine.WithDriverConfig(engine.DriverConfig{Profile: "5.15"}),
			engine.WithDriverConfig(engine.DriverConfig{Entries: 64, BufferSize: 4096, BufferCount: 16}))
		var f engine.Features = l.Backend().Features
		require.EqualValues(t, "5.15", f.Profile)
		ran, err := engine.Submit(l, func() (bool, error) { return true, nil }).Await(context.Background())
		require.NoError(t, err)
		require.True(t, ran, "a loop with a sized driver runs its tasks")
	})
}

// Settings no driver can use fail New, naming what was given.
func TestDriverSettingsChecked(t *testing.T) {
	_, err := engine.New(engine.WithDriverConfig(engine.DriverConfig{BufferSize: -1}))
	require.ErrorContains(t, err, "driver buffers 0 x -1 bytes")
	_, err = engine.New(engine.WithDriverConfig(engine.DriverConfig{Profile: "4.19"}))
	require.ErrorContains(t, err, `"4.19"`)
}

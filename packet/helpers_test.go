package packet_test

import (
	"io"
	"log/slog"
	"testing"

	"github.com/ringloop/ringloop/engine"
	"github.com/ringloop/ringloop/internal/testenv"
)

// newLoop, onLoop and busy are testenv's, as engine's tests spell them.
func newLoop(t *testing.T, c testenv.Combo, opts ...engine.Option) *engine.Loop {
	t.Helper()
	return testenv.NewLoop(t, c, opts...)
}

func onLoop[T any](t *testing.T, l *engine.Loop, fn func() T) T {
	t.Helper()
	return testenv.OnLoop(t, l, fn)
}

// scale is normal, or race under the race detector and -short.
func scale(normal, race int) int { return testenv.Scale(normal, race) }

func discardLogger() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

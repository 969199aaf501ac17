package loopgroup_test

import (
	"context"
	"go/build"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func goTool(t *testing.T) string {
	if p, err := exec.LookPath("go"); err == nil {
		return p
	}
	p := filepath.Join(build.Default.GOROOT, "bin", "go") // the toolchain that built this test
	if _, err := os.Stat(p); err != nil {
		t.Fatalf("no go command to build the examples: %v", err)
	}
	return p
}

// examplesEnv names a directory holding prebuilt mainsub, single and
// reuseport programs, for where there is no Go toolchain (a booted test
// kernel).
const examplesEnv = "RINGLOOP_EXAMPLES"

// TestExamplePrograms builds the three reactor-model programs in examples/
// (or takes them from examplesEnv) and runs each (mainsub also on epoll,
// where the hand-off takes the task ring): every one must exit 0 within its
// timeout and report its model.
func TestExamplePrograms(t *testing.T) {
	bin := os.Getenv(examplesEnv)
	if bin == "" {
		if testing.Short() {
			t.Skip("builds programs; skipped with -short unless " + examplesEnv + " names them prebuilt")
		}
		bin = t.TempDir()
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
		defer cancel()
		build := exec.CommandContext(ctx, goTool(t), "build", "-o", bin+string(filepath.Separator),
			"./examples/mainsub", "./examples/single", "./examples/reuseport")
		build.Dir = ".."
		out, err := build.CombinedOutput()
		require.NoError(t, err, "go build: %s", out)
	}

	cases := []struct {
		prog, backend string
		want          []string
	}{
		{"mainsub", "", []string{"main/sub reactors", "worker-3 serves 10 connections", "served 40 connections; shut down cleanly"}},
		{"mainsub", "epoll", []string{"hand-offs: 0 by MSG_RING, 40 by task ring (backend epoll)", "shut down cleanly"}},
		{"single", "", []string{"last reply 15; connections served locally: 3, handed off: 0", "shut down cleanly"}},
		{"reuseport", "", []string{"SO_REUSEPORT: 4 loops", "acceptor-3 accepted and serves", "shut down cleanly"}},
	}
	for _, c := range cases {
		t.Run(c.prog+"/"+c.backend, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			cmd := exec.CommandContext(ctx, filepath.Join(bin, c.prog))
			cmd.Env = append(os.Environ(), "RINGLOOP_BACKEND="+c.backend)
			out, err := cmd.CombinedOutput()
			require.NoError(t, err, "%s: %s", c.prog, out)
			for _, w := range c.want {
				assert.Contains(t, string(out), w)
			}
			if c.prog == "mainsub" && c.backend == "" && strings.Contains(string(out), "backend io_uring") {
				assert.Contains(t, string(out), "0 by task ring", "MSG_RING on this kernel")
			}
		})
	}
}

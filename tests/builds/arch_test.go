package builds

import (
	"strings"
	"testing"
)

const only64 = "ringloop needs a 64-bit GOARCH (amd64, arm64, riscv64, ...): 32-bit is not supported"

// Test32BitNamesTheLimit: a build of the module for a 32-bit Linux GOARCH
// stops on one message saying 64-bit is needed (on linux/386 the engine
// compiled and its timer tests hung), while tasks and timers, which promise
// to build anywhere, still vet (TestTasksAndTimersBuildOn32Bit).
func Test32BitNamesTheLimit(t *testing.T) {
	for _, arch := range []string{"386", "arm"} {
		t.Run(arch, func(t *testing.T) {
			env := []string{"GOOS=linux", "GOARCH=" + arch, "CGO_ENABLED=0"}
			out, err := goCmd(t, env, "build", "./...")
			if err == nil {
				t.Fatalf("GOARCH=%s go build ./... succeeded:\n%s", arch, out)
			}
			var msgs, others int
			for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
				switch {
				case strings.HasPrefix(line, "# "):
				case strings.Contains(line, only64):
					msgs++
				default:
					others++
				}
			}
			if msgs != 1 || others != 0 {
				t.Fatalf("GOARCH=%s: want only the 64-bit message, once; got:\n%s", arch, out)
			}
		})
	}
}

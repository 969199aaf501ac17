package testenv

import (
	"os"
	"os/exec"
	"testing"
)

// RequireToolsEnv names the environment variable that makes the external
// programs interop tests run (node, python3...) mandatory: set to 1, as CI
// sets it, a missing program fails the test instead of skipping it, so a
// dependency dropped from the Makefile's DEPS is caught. The variable CI,
// which most CI services set, does the same.
const RequireToolsEnv = "RINGLOOP_REQUIRE_TOOLS"

// ToolsRequired reports whether a missing external program is a failure.
func ToolsRequired() bool {
	v := os.Getenv(RequireToolsEnv)
	return v != "" && v != "0" || os.Getenv("CI") != ""
}

// NeedTool returns the path of the program name (a command looked up in
// PATH, or an absolute path). Where it is missing the test skips, saying
// that make deps installs it, or fails when tools are required
// (ToolsRequired).
func NeedTool(t testing.TB, name string) string {
	t.Helper()
	p, err := exec.LookPath(name)
	if err != nil {
		ToolMissing(t, name, err)
	}
	return p
}

// ToolMissing skips t because what (a program, a library of one) is
// missing, saying why, or fails it when tools are required.
func ToolMissing(t testing.TB, what string, why error) {
	t.Helper()
	if ToolsRequired() {
		t.Fatalf("%s is missing (make deps installs it) and %s=1 or CI requires it: %v", what, RequireToolsEnv, why)
	}
	t.Skipf("%s is not installed (make deps installs it; %s=1 makes this a failure): %v", what, RequireToolsEnv, why)
}

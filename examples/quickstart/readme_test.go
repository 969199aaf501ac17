// Package quickstart_test checks that README.md shows the quick-start
// programs as they are, so the README's code always builds and passes the
// programs' tests.
package quickstart_test

import (
	"os"
	"strings"
	"testing"
)

func TestREADMEShowsEachProgram(t *testing.T) {
	readme, err := os.ReadFile("../../README.md")
	if os.IsNotExist(err) {
		t.Skip("no source tree here (a test binary copied alone, as in the kernel VMs)")
	}
	if err != nil {
		t.Fatal(err)
	}
	for _, dir := range []string{"tcp", "http", "websocket", "netconn", "../udpecho"} {
		src, err := os.ReadFile(dir + "/main.go")
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(readme), "```go\n"+string(src)+"```\n") {
			t.Errorf("README.md does not show examples/quickstart/%s/main.go as it is: copy the file into its code block", dir)
		}
	}
}

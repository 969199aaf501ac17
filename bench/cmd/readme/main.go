// Command readme regenerates the performance section of the README (between
// its bench markers) from a report's JSON, so the README never quotes a
// figure no command produced.
//
//	go run ./cmd/readme -json results/latest.json -readme ../README.md
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"

	"github.com/ringloop/ringloop/bench/runner"
)

func main() {
	js := flag.String("json", "results/latest.json", "report to quote")
	readme := flag.String("readme", "../README.md", "README to update in place")
	flag.Parse()
	b, err := os.ReadFile(*js)
	if err != nil {
		fail(err)
	}
	var rep runner.Report
	if err := json.Unmarshal(b, &rep); err != nil {
		fail(fmt.Errorf("%s: %v", *js, err))
	}
	doc, err := os.ReadFile(*readme)
	if err != nil {
		fail(err)
	}
	out, err := runner.ReplaceSection(string(doc), runner.READMESection(rep))
	if err != nil {
		fail(err)
	}
	if err := os.WriteFile(*readme, []byte(out), 0o644); err != nil {
		fail(err)
	}
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "readme:", err)
	os.Exit(1)
}

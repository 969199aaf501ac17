// Command readme regenerates every passage of the README and of engine's
// package doc that quotes a result (the README's sections between their
// generated markers, the engine doc's paragraph on how the default was
// chosen) from the committed results: the latest sweep's JSON, every sweep
// kept in results/history, and the last full kernel run's report. So the
// docs never quote a figure no command produced, and TestDocsMatchResults
// fails when they drift.
//
//	go run ./cmd/readme   # make bench-readme
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/ringloop/ringloop/bench/runner"
)

func main() {
	src := runner.Committed
	flag.StringVar(&src.Latest, "json", src.Latest, "the latest sweep's report")
	flag.StringVar(&src.History, "history", src.History, "directory of every sweep's report")
	flag.StringVar(&src.Kernels, "kernels", src.Kernels, "report of the last full make test-kernels run")
	readme := flag.String("readme", "../README.md", "README to update in place")
	engineDoc := flag.String("engine-doc", "../engine/doc.go", "engine's package doc to update in place")
	flag.Parse()
	sections, passage, err := runner.Generate(src)
	if err != nil {
		fail(err)
	}
	if err := rewrite(*readme, func(doc string) (string, error) { return runner.RenderREADME(doc, sections) }); err != nil {
		fail(err)
	}
	if err := rewrite(*engineDoc, func(doc string) (string, error) { return runner.ReplaceDocPassage(doc, passage) }); err != nil {
		fail(err)
	}
}

// rewrite applies f to the file's text, writing only a changed text.
func rewrite(path string, f func(string) (string, error)) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	out, err := f(string(b))
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	if out == string(b) {
		return nil
	}
	return os.WriteFile(path, []byte(out), 0o644)
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "readme:", err)
	os.Exit(1)
}

package runner

import (
	"errors"
	"io/fs"
	"path/filepath"

	"github.com/ringloop/ringloop/tests/kernels/report"
)

// SectionKernels is the README's kernel table, rendered from the committed
// report of the last full `make test-kernels` run.
const SectionKernels = "kernels"

// KernelsReport is that report's path from the repository's root, as the
// README names it.
const KernelsReport = "tests/kernels/results/latest.json"

// Sources are the committed results the generated passages come from,
// relative to the bench module (cmd/readme's and the tests' directory).
type Sources struct {
	Latest  string // the latest sweep's JSON
	History string // the directory of every sweep's JSON
	Kernels string // the kernel run's report
}

// Committed is where the repository keeps them.
var Committed = Sources{Latest: "results/latest.json", History: filepath.Join("results", HistoryDir), Kernels: filepath.Join("..", KernelsReport)}

// Generate reads the sources and renders every generated passage: the
// README's sections by name and engine's package doc paragraph.
func Generate(src Sources) (sections map[string]string, engineDoc string, err error) {
	latest, err := ReadReport(src.Latest)
	if err != nil {
		return nil, "", err
	}
	hist, err := ReadHistory(src.History)
	if err != nil {
		return nil, "", err
	}
	sections = READMESections(latest, hist)
	switch k, err := report.Read(src.Kernels); {
	case errors.Is(err, fs.ErrNotExist):
		sections[SectionKernels] = report.Missing(KernelsReport)
	case err != nil:
		return nil, "", err
	default:
		sections[SectionKernels] = report.Markdown(k)
	}
	return sections, EngineDocPassage(latest, hist), nil
}

// RenderREADME puts every section in doc.
func RenderREADME(doc string, sections map[string]string) (string, error) {
	var err error
	for _, name := range []string{SectionDefault, SectionPerformance, SectionKernels} {
		if doc, err = ReplaceSection(doc, name, sections[name]); err != nil {
			return "", err
		}
	}
	return doc, nil
}

// Under is s with each path taken from dir (the tests run in runner/, one
// level below the bench module).
func (s Sources) Under(dir string) Sources {
	return Sources{Latest: filepath.Join(dir, s.Latest), History: filepath.Join(dir, s.History), Kernels: filepath.Join(dir, s.Kernels)}
}

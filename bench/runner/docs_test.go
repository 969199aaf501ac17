package runner

import (
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ringloop/ringloop/bench/stats"
	"github.com/ringloop/ringloop/tests/kernels/report"
)

// TestDocsMatchResults: every figure the README and engine's package doc
// quote from a result is what `make bench-readme` renders from the
// committed results (results/latest.json, results/history, the kernel
// run's report), byte for byte. A hand edit between the markers, or a new
// sweep committed without regenerating, fails here.
func TestDocsMatchResults(t *testing.T) {
	sections, passage, err := Generate(Committed.Under(".."))
	require.NoError(t, err)
	readme, err := os.ReadFile("../../README.md")
	require.NoError(t, err)
	want, err := RenderREADME(string(readme), sections)
	require.NoError(t, err, "README.md lacks a generated section's markers")
	for name := range sections {
		got, err := Section(string(readme), name)
		require.NoError(t, err)
		exp, err := Section(want, name)
		require.NoError(t, err)
		require.Equal(t, exp, got, "README.md's %q section is not what `make bench-readme` renders from the committed results: run it and commit the result", name)
	}
	require.Equal(t, want, string(readme), "README.md differs from its regenerated text")

	doc, err := os.ReadFile("../../engine/doc.go")
	require.NoError(t, err)
	out, err := ReplaceDocPassage(string(doc), passage)
	require.NoError(t, err)
	require.Equal(t, out, string(doc), "engine/doc.go's paragraph on the default is not what `make bench-readme` renders: run it and commit the result")
}

// TestHistoryHoldsLatest: the committed latest sweep is kept in the
// history under its date, byte for byte, as Write keeps every new one.
func TestHistoryHoldsLatest(t *testing.T) {
	latest, err := ReadReport("../results/latest.json")
	require.NoError(t, err)
	name, err := HistoryName(latest)
	require.NoError(t, err)
	a, err := os.ReadFile("../results/latest.json")
	require.NoError(t, err)
	b, err := os.ReadFile("../results/history/" + name)
	require.NoError(t, err, "results/history has no entry for the latest sweep")
	require.Equal(t, a, b)
}

// TestOneRoundCasesHoldStill: a case the full suite runs once must not
// vary by 3× or more across the sweeps kept with the same default (in any
// row's figure of that load); one that does needs rounds, so that its
// report shows the range rather than one draw from it.
func TestOneRoundCasesHoldStill(t *testing.T) {
	latest, err := ReadReport("../results/latest.json")
	require.NoError(t, err)
	hist, err := ReadHistory("../results/history")
	require.NoError(t, err)
	sweeps := sameDefault(latest, hist)
	cases, err := Suite(Full)
	require.NoError(t, err)
	figure := map[Load]func(Row) stats.Spread{
		LoadIdle: func(r Row) stats.Spread { return r.RSSPerConn }, LoadSyscalls: func(r Row) stats.Spread { return r.Syscalls },
		LoadRest: func(r Row) stats.Spread { return r.RestCPU }, LoadBcast: func(r Row) stats.Spread { return r.Rate },
		LoadEcho: func(r Row) stats.Spread { return r.Rate }, LoadWrk: func(r Row) stats.Spread { return r.Rate },
		LoadOpenLoop: func(r Row) stats.Spread { return r.P99 }, LoadHandshake: func(r Row) stats.Spread { return r.Rate },
		LoadUDP: func(r Row) stats.Spread { return r.Rate },
	}
	for _, c := range cases {
		if c.Rounds > 1 {
			continue
		}
		f := figure[c.Load]
		require.NotNil(t, f, "case %s: no figure for load %s", c.ID, c.Load)
		lo, hi := map[string]float64{}, map[string]float64{}
		for _, s := range sweeps {
			cr, ok := caseOf(s, c.ID)
			if !ok || cr.Rounds > 1 {
				continue // not in that sweep, or run with rounds then
			}
			for _, r := range cr.Rows {
				x := float64(f(r).Median)
				if math.IsNaN(x) || x <= 0 {
					continue
				}
				if _, ok := lo[r.Label]; !ok {
					lo[r.Label], hi[r.Label] = x, x
				}
				lo[r.Label], hi[r.Label] = math.Min(lo[r.Label], x), math.Max(hi[r.Label], x)
			}
		}
		for label := range lo {
			require.Less(t, hi[label]/lo[label], 3.0, "case %s, %s: one round ranged %.3g to %.3g across the kept sweeps: give it rounds", c.ID, label, lo[label], hi[label])
		}
	}
}

// TestKernelTableWriters: the kernel run renders the README's kernel table
// itself (report.UpdateREADME, so the README agrees with the report it
// leaves behind) and make bench-readme renders it too; both write the same
// bytes between the same markers.
func TestKernelTableWriters(t *testing.T) {
	require.Equal(t, report.BeginMarker, BeginMarker(SectionKernels))
	require.Equal(t, report.EndMarker, EndMarker(SectionKernels))
	dir := t.TempDir()
	k := report.Report{Date: "2026-11-28 10:00 UTC", Duration: "21m53s", Parallel: 2, Boots: []report.Boot{
		{Release: "6.1.0-50-cloud-amd64", Package: "linux-image-6.1.0-50-cloud-amd64-unsigned", Version: "6.1.176-1", Expect: "io_uring",
			Backend: "io_uring", Threading: "parked", Features: "epoll_pwait2", OK: true,
			Packages: []report.Package{{Name: "engine", Status: "pass", Passed: 200, Skipped: 3}, {Name: "tests", Status: "pass", Passed: 90, Failed: 0}}},
		{Release: "6.12.107+deb13-cloud-amd64", Package: "linux-image-6.12.107+deb13-cloud-amd64-unsigned", Version: "6.12.107-1", Args: "sysctl.kernel.io_uring_disabled=2",
			Expect: "epoll", Backend: "epoll", Threading: "parked", Reason: "auto: fell back to epoll", Only: []string{"tests"},
			Packages: []report.Package{{Name: "tests", Status: "fail", Passed: 80, Failed: 1}}},
	}}
	src := Committed.Under("..")
	src.Kernels = filepath.Join(dir, "kernels.json")
	require.NoError(t, report.Write(src.Kernels, k))
	doc := "# x\n\n" + BeginMarker(SectionDefault) + "\n" + EndMarker(SectionDefault) + "\n\n" + BeginMarker(SectionPerformance) + "\n" +
		EndMarker(SectionPerformance) + "\n\n" + report.BeginMarker + "\nold\n" + report.EndMarker + "\n"
	sections, _, err := Generate(src)
	require.NoError(t, err)
	want, err := RenderREADME(doc, sections)
	require.NoError(t, err)
	path := filepath.Join(dir, "README.md")
	mine, err := RenderREADME(doc, map[string]string{SectionKernels: "old"}) // the other sections as make bench-readme leaves them
	require.NoError(t, err)
	mine, err = ReplaceSection(mine, SectionDefault, sections[SectionDefault])
	require.NoError(t, err)
	mine, err = ReplaceSection(mine, SectionPerformance, sections[SectionPerformance])
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(path, []byte(mine), 0o644))
	require.NoError(t, report.UpdateREADME(path, k))
	got, err := os.ReadFile(path)
	require.NoError(t, err)
	require.Equal(t, want, string(got))
	require.Contains(t, string(got), "| 6.1.0-50-cloud-amd64 | `linux-image-6.1.0-50-cloud-amd64-unsigned` 6.1.176-1 | io_uring | parked | epoll_pwait2 | 290 passed, 0 failed, 3 skipped |")
	require.Contains(t, string(got), "| epoll (auto: fell back to epoll) | parked | - | 80 passed, 1 failed, 0 skipped (tests) (FAIL) |")
	require.Contains(t, string(got), "`make test-kernels`, 2026-11-28 10:00 UTC, 21m53s (qemu TCG, 2 vCPUs on one host thread, 2 VMs at once")
}

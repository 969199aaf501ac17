package runner

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// HistoryDir is where, under a results directory, every sweep's JSON is
// kept: latest.json is replaced by the next run, and a figure the README
// quotes from an earlier sweep ("the sweeps before ranged …") must stay
// checkable. One file per sweep, named for its date (HistoryName).
const HistoryDir = "history"

// HistoryName is the file a report is kept under in HistoryDir:
// "2026-11-27T1659Z.json" for a report dated "2026-11-27 16:59 UTC", so the
// names sort in time order.
func HistoryName(rep Report) (string, error) {
	t, err := time.Parse("2006-01-02 15:04 MST", rep.Date)
	if err != nil {
		return "", fmt.Errorf("history: report date %q: %w", rep.Date, err)
	}
	return t.UTC().Format("2006-01-02T1504Z") + ".json", nil
}

// keepHistory writes js, the report's JSON exactly as latest.json holds it,
// as the sweep's entry in dir/history. An entry already there is left as it
// is: it is the record of what that sweep measured, and re-rendering an old
// report (cmd/bench -rerender) must not rewrite it.
func keepHistory(dir string, rep Report, js []byte) error {
	name, err := HistoryName(rep)
	if err != nil {
		return err
	}
	hd := filepath.Join(dir, HistoryDir)
	if err := os.MkdirAll(hd, 0o755); err != nil {
		return err
	}
	f, err := os.OpenFile(filepath.Join(hd, name), os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if errors.Is(err, fs.ErrExist) {
		return nil
	}
	if err != nil {
		return err
	}
	if _, err := f.Write(js); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// ReadHistory reads every sweep kept in dir (a results directory's
// history), oldest first, each with its comparisons derived again as
// ReadReport does.
func ReadHistory(dir string) ([]Report, error) {
	names, err := filepath.Glob(filepath.Join(dir, "*.json"))
	if err != nil {
		return nil, err
	}
	slices.Sort(names)
	var reps []Report
	for _, n := range names {
		rep, err := ReadReport(n)
		if err != nil {
			return nil, err
		}
		reps = append(reps, rep)
	}
	return reps, nil
}

// sameDefault keeps the sweeps whose automatic choice is latest's, ending
// with latest itself (added when history does not hold it yet): the sweeps
// that measured the default the README describes.
func sameDefault(latest Report, hist []Report) []Report {
	var out []Report
	for _, h := range hist {
		if h.Date != latest.Date && h.Auto.Known() && h.Auto.Backend == latest.Auto.Backend && h.Auto.Threading == latest.Auto.Threading &&
			h.Mode == latest.Mode {
			out = append(out, h)
		}
	}
	return append(out, latest)
}

// shortDate drops the zone from a report's date: "2026-11-27 16:59".
func shortDate(rep Report) string { return strings.TrimSuffix(rep.Date, " UTC") }

package testsum

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"time"
)

// StageRecord is one stage of a run, appended to a file as a JSON line so
// that the go commands of a run (several make targets) add up at its end.
type StageRecord struct {
	Stage   string  `json:"stage"`
	Tests   bool    `json:"tests"` // whether the stage ran tests (else only its time counts)
	Counts  Counts  `json:"counts"`
	Seconds float64 `json:"seconds"`
	OK      bool    `json:"ok"`
}

// Line is the stage's summary line.
func (r StageRecord) Line() string {
	s := fmt.Sprintf("stage %s: ", r.Stage)
	if r.Tests {
		s += r.Counts.String() + " in "
	}
	s += FormatDuration(time.Duration(r.Seconds * float64(time.Second)))
	if !r.OK {
		s += " (FAILED)"
	}
	return s
}

// FormatDuration writes d as minutes and seconds ("3m12s").
func FormatDuration(d time.Duration) string {
	d = d.Round(time.Second)
	return fmt.Sprintf("%dm%02ds", int(d/time.Minute), int(d%time.Minute/time.Second))
}

// AppendRecord appends r to the file at p.
func AppendRecord(p string, r StageRecord) error {
	f, err := os.OpenFile(p, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	b, _ := json.Marshal(r)
	_, err = f.Write(append(b, '\n'))
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// ReadRecords reads the records appended to the file at p.
func ReadRecords(p string) ([]StageRecord, error) {
	f, err := os.Open(p)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var rs []StageRecord
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var r StageRecord
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			return nil, fmt.Errorf("%s: %w", p, err)
		}
		rs = append(rs, r)
	}
	return rs, sc.Err()
}

// Report writes each stage's line and the total, and returns the total.
func Report(w io.Writer, rs []StageRecord) StageRecord {
	total := StageRecord{Stage: "total", Tests: true, OK: true}
	for _, r := range rs {
		fmt.Fprintln(w, r.Line())
		total.Counts.Add(r.Counts)
		total.Seconds += r.Seconds
		total.OK = total.OK && r.OK
	}
	fmt.Fprintf(w, "total: %s in %s", total.Counts, FormatDuration(time.Duration(total.Seconds*float64(time.Second))))
	if !total.OK {
		fmt.Fprint(w, " (FAILED)")
	}
	fmt.Fprintln(w)
	return total
}

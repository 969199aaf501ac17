package client

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os/exec"
	"strconv"
	"strings"
	"time"
)

// WrkConfig is one wrk run: closed-loop keep-alive HTTP load, optionally
// pipelined Depth deep through a Lua script.
type WrkConfig struct {
	Addr     string
	Conns    int
	Duration time.Duration
	Depth    int      // > 1 pipelines through Script
	Script   string   // path of scripts/pipeline.lua
	Wrap     []string // argv prefix, e.g. taskset -c 1
	TLS      bool     // https: wrk speaks TLS (it verifies no certificate)
}

// WrkResult is what wrk reported.
type WrkResult struct {
	Requests int64   `json:"requests"`
	Seconds  float64 `json:"seconds"`
	Rate     float64 `json:"reqs_per_sec"`
	P50      float64 `json:"p50_us"` // closed-loop latency: subject to coordinated omission
	P99      float64 `json:"p99_us"`
	Errors   int64   `json:"socket_errors"`
	Non2xx   int64   `json:"non_2xx"`
}

// RunWrk runs wrk with one thread and parses its report.
func RunWrk(ctx context.Context, c WrkConfig) (WrkResult, error) {
	args := append([]string{}, c.Wrap...)
	args = append(args, "wrk", "-t1", "-c"+strconv.Itoa(c.Conns), "-d"+strconv.Itoa(max(1, int(c.Duration.Seconds())))+"s", "--latency")
	if c.Depth > 1 {
		args = append(args, "-s", c.Script)
	}
	scheme := "http://"
	if c.TLS {
		scheme = "https://"
	}
	args = append(args, scheme+c.Addr+"/plaintext")
	if c.Depth > 1 {
		args = append(args, "--", strconv.Itoa(c.Depth))
	}
	out, err := exec.CommandContext(ctx, args[0], args[1:]...).CombinedOutput()
	if err != nil {
		return WrkResult{}, fmt.Errorf("wrk: %v: %s", err, strings.TrimSpace(string(out)))
	}
	r, err := ParseWrk(string(out))
	if err == nil && c.Depth <= 1 && (r.P50 <= 0 || r.P99 <= 0) {
		return r, fmt.Errorf("%w: %q", ErrWrkNoLatency, out)
	}
	return r, err
}

// ErrWrkNoLatency: wrk's report (run with --latency), without pipelining,
// had its totals but no latency percentiles above zero; the harness runs
// wrk again once on it. Pipelined reports are taken as they come: wrk
// printed their percentiles above p50 as zero in every pipelined round of
// the 2026-11-27 08:13 sweep (the report's n/a).
var ErrWrkNoLatency = errors.New("wrk: no latency percentiles in its report")

// ParseWrk reads wrk's text report (run with --latency).
func ParseWrk(out string) (WrkResult, error) {
	var r WrkResult
	var haveRate, haveReqs bool
	sc := bufio.NewScanner(strings.NewReader(out))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		switch {
		case len(f) == 2 && f[0] == "Requests/sec:":
			v, err := strconv.ParseFloat(f[1], 64)
			if err != nil {
				return r, fmt.Errorf("wrk: bad rate %q", f[1])
			}
			r.Rate, haveRate = v, true
		case len(f) >= 4 && f[1] == "requests" && f[2] == "in":
			n, err1 := strconv.ParseInt(f[0], 10, 64)
			d, err2 := parseWrkDuration(strings.TrimSuffix(f[3], ","))
			if err1 != nil || err2 != nil {
				return r, fmt.Errorf("wrk: bad totals line %q", sc.Text())
			}
			r.Requests, r.Seconds, haveReqs = n, d, true
		case len(f) == 2 && (f[0] == "50%" || f[0] == "99%"):
			us, err := parseWrkLatency(f[1])
			if err != nil {
				return r, err
			}
			if f[0] == "50%" {
				r.P50 = us
			} else {
				r.P99 = us
			}
		case len(f) > 2 && f[0] == "Socket" && f[1] == "errors:":
			// Socket errors: connect 0, read 0, write 0, timeout 0
			for i := 2; i+1 < len(f); i += 2 {
				n, _ := strconv.ParseInt(strings.TrimSuffix(f[i+1], ","), 10, 64)
				r.Errors += n
			}
		case len(f) == 5 && f[0] == "Non-2xx":
			// Non-2xx or 3xx responses: 12
			r.Non2xx, _ = strconv.ParseInt(f[4], 10, 64)
		}
	}
	if !haveRate || !haveReqs {
		return r, fmt.Errorf("wrk: no totals in its report: %q", out)
	}
	return r, nil
}

// parseWrkLatency reads wrk's "512.34us", "1.20ms" or "2.00s" as microseconds.
func parseWrkLatency(s string) (float64, error) {
	for _, u := range []struct {
		suffix string
		scale  float64
	}{{"us", 1}, {"ms", 1e3}, {"s", 1e6}} {
		if num, ok := strings.CutSuffix(s, u.suffix); ok {
			v, err := strconv.ParseFloat(num, 64)
			if err != nil {
				break
			}
			return v * u.scale, nil
		}
	}
	return 0, fmt.Errorf("wrk: bad latency %q", s)
}

// parseWrkDuration reads the "3.00s" or "1.00m" of wrk's totals line as seconds.
func parseWrkDuration(s string) (float64, error) {
	scale := 1.0
	switch {
	case strings.HasSuffix(s, "ms"):
		s, scale = strings.TrimSuffix(s, "ms"), 1e-3
	case strings.HasSuffix(s, "m"):
		s, scale = strings.TrimSuffix(s, "m"), 60
	case strings.HasSuffix(s, "s"):
		s = strings.TrimSuffix(s, "s")
	}
	v, err := strconv.ParseFloat(s, 64)
	return v * scale, err
}

package client

import (
	"bufio"
	"context"
	"fmt"
	"os/exec"
	"strconv"
	"strings"
	"time"
)

// H2LoadConfig is one h2load run (nghttp2's HTTP/2 load generator, one
// thread): Conns connections, each keeping Streams requests in flight,
// GET /plaintext (or POST Data to Path) for Duration; over TLS (ALPN h2)
// or in clear with prior knowledge (h2c).
type H2LoadConfig struct {
	Addr     string
	Conns    int
	Streams  int
	Duration time.Duration
	TLS      bool
	Path     string   // "" is /plaintext
	Data     string   // a file whose bytes every request posts ("": GET)
	Headers  []string // more request header lines, "name: value"
	Wrap     []string // argv prefix, e.g. taskset -c 1
}

// H2LoadResult is what h2load reported. Requests counts the succeeded
// ones (a 2xx or 3xx answer); Failed, Errored and TimedOut are its other
// counters, Non2xx the answers that were not 2xx.
type H2LoadResult struct {
	Requests int64   `json:"requests"`
	Failed   int64   `json:"failed"`
	Errored  int64   `json:"errored"`
	TimedOut int64   `json:"timeout"`
	Non2xx   int64   `json:"non_2xx"`
	Seconds  float64 `json:"seconds"`
	Rate     float64 `json:"reqs_per_sec"`
	Data     int64   `json:"data_bytes"` // response body bytes received (DATA payloads)
	Protocol string  `json:"protocol"`   // "h2" (ALPN chose it) or "h2c", as h2load's "Application protocol:" says
}

// RunH2Load runs h2load and parses its report; a run that spoke anything
// but HTTP/2 is an error.
func RunH2Load(ctx context.Context, c H2LoadConfig) (H2LoadResult, error) {
	scheme := "http://"
	if c.TLS {
		scheme = "https://"
	}
	args := append([]string{}, c.Wrap...)
	args = append(args, "h2load", "-t1", "-c"+strconv.Itoa(c.Conns), "-m"+strconv.Itoa(c.Streams),
		"-D", strconv.FormatInt(max(1, c.Duration.Milliseconds()), 10)+"ms")
	if c.Data != "" {
		args = append(args, "-d", c.Data)
	}
	for _, h := range c.Headers {
		args = append(args, "-H", h)
	}
	path := c.Path
	if path == "" {
		path = "/plaintext"
	}
	args = append(args, scheme+c.Addr+path)
	out, err := exec.CommandContext(ctx, args[0], args[1:]...).CombinedOutput()
	if err != nil {
		return H2LoadResult{}, fmt.Errorf("h2load: %v: %s", err, strings.TrimSpace(string(out)))
	}
	r, err := ParseH2Load(string(out))
	want := "h2c"
	if c.TLS {
		want = "h2"
	}
	if err == nil && r.Protocol != want {
		err = fmt.Errorf("h2load: spoke %q, not %s", r.Protocol, want)
	}
	return r, err
}

// ParseH2Load reads h2load's text report.
func ParseH2Load(out string) (H2LoadResult, error) {
	var r H2LoadResult
	var haveRate, haveReqs bool
	sc := bufio.NewScanner(strings.NewReader(out))
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		switch {
		case strings.HasPrefix(line, "Application protocol:"):
			r.Protocol = strings.TrimSpace(strings.TrimPrefix(line, "Application protocol:"))
		case strings.HasPrefix(line, "finished in "):
			// finished in 10.00s, 41234.50 req/s, 1.52MB/s
			f := strings.Split(strings.TrimPrefix(line, "finished in "), ", ")
			if len(f) < 2 || !strings.HasSuffix(f[1], " req/s") {
				return r, fmt.Errorf("h2load: bad totals line %q", line)
			}
			d, err1 := parseH2LoadDuration(f[0])
			v, err2 := strconv.ParseFloat(strings.TrimSuffix(f[1], " req/s"), 64)
			if err1 != nil || err2 != nil {
				return r, fmt.Errorf("h2load: bad totals line %q", line)
			}
			r.Seconds, r.Rate, haveRate = d, v, true
		case strings.HasPrefix(line, "requests: "):
			// requests: 412345 total, 412445 started, 412345 done, 412345 succeeded, 0 failed, 0 errored, 0 timeout
			for _, part := range strings.Split(strings.TrimPrefix(line, "requests: "), ", ") {
				num, what, ok := strings.Cut(part, " ")
				n, err := strconv.ParseInt(num, 10, 64)
				if !ok || err != nil {
					return r, fmt.Errorf("h2load: bad requests line %q", line)
				}
				switch what {
				case "succeeded":
					r.Requests, haveReqs = n, true
				case "failed":
					r.Failed = n
				case "errored":
					r.Errored = n
				case "timeout":
					r.TimedOut = n
				}
			}
		case strings.HasPrefix(line, "traffic: "):
			// traffic: 3.62MB (3796316) total, 1.04MB (1088500) headers (space savings 90.49%), 1.24MB (1300000) data
			for _, part := range strings.Split(strings.TrimPrefix(line, "traffic: "), ", ") {
				if !strings.HasSuffix(part, ") data") {
					continue
				}
				_, num, _ := strings.Cut(strings.TrimSuffix(part, ") data"), "(")
				n, err := strconv.ParseInt(num, 10, 64)
				if err != nil {
					return r, fmt.Errorf("h2load: bad traffic line %q", line)
				}
				r.Data = n
			}
		case strings.HasPrefix(line, "status codes: "):
			// status codes: 412345 2xx, 0 3xx, 0 4xx, 0 5xx
			for _, part := range strings.Split(strings.TrimPrefix(line, "status codes: "), ", ") {
				num, what, _ := strings.Cut(part, " ")
				if n, err := strconv.ParseInt(num, 10, 64); err == nil && what != "2xx" {
					r.Non2xx += n
				}
			}
		}
	}
	if !haveRate || !haveReqs {
		return r, fmt.Errorf("h2load: no totals in its report: %q", out)
	}
	return r, nil
}

// parseH2LoadDuration reads the "10.00s" or "512.34ms" of h2load's
// "finished in" as seconds.
func parseH2LoadDuration(s string) (float64, error) {
	scale := 1.0
	switch {
	case strings.HasSuffix(s, "ms"):
		s, scale = strings.TrimSuffix(s, "ms"), 1e-3
	case strings.HasSuffix(s, "us"):
		s, scale = strings.TrimSuffix(s, "us"), 1e-6
	case strings.HasSuffix(s, "s"):
		s = strings.TrimSuffix(s, "s")
	}
	v, err := strconv.ParseFloat(s, 64)
	return v * scale, err
}

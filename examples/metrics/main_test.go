package main

import (
	"context"
	"io"
	"net"
	"net/http"
	"sort"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"github.com/stretchr/testify/require"

	"github.com/ringloop/ringloop/internal/testenv"
)

// scrape fetches /metrics and parses it with Prometheus's text-format
// parser.
func scrape(t *testing.T, cl *http.Client, base string) map[string]*dto.MetricFamily {
	t.Helper()
	res, err := cl.Get(base + "/metrics")
	require.NoError(t, err)
	defer res.Body.Close()
	require.Equal(t, http.StatusOK, res.StatusCode)
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(res.Body)
	require.NoError(t, err)
	return fams
}

func label(m *dto.Metric, name string) string {
	for _, lp := range m.GetLabel() {
		if lp.GetName() == name {
			return lp.GetValue()
		}
	}
	return ""
}

// loopsIn returns the loop names a family has series for, sorted.
func loopsIn(t *testing.T, fams map[string]*dto.MetricFamily, name string) []string {
	t.Helper()
	f := fams[name]
	require.NotNil(t, f, "no family %s", name)
	var out []string
	for _, m := range f.GetMetric() {
		out = append(out, label(m, "loop"))
	}
	sort.Strings(out)
	return out
}

// responses returns ringloop_http_responses_total for server app and class.
func responses(t *testing.T, fams map[string]*dto.MetricFamily, class string) float64 {
	t.Helper()
	f := fams["ringloop_http_responses_total"]
	require.NotNil(t, f)
	require.Equal(t, dto.MetricType_COUNTER, f.GetType())
	for _, m := range f.GetMetric() {
		if label(m, "server") == "app" && label(m, "code") == class {
			return m.GetCounter().GetValue()
		}
	}
	t.Fatalf("no series for code %s", class)
	return 0
}

// TestScrapeMetrics runs the service on two loops, sends it requests and
// scrapes /metrics twice: every loop appears by its stable name (http-0,
// http-1) in every loop family with its backend and mode, once; the server's
// responses are counted by class and timed in the histogram; the second
// scrape has the same loops and larger counters (the first scrape itself
// is a 2xx).
func TestScrapeMetrics(t *testing.T) {
	testenv.ForEachBackend(t, func(t *testing.T, c testenv.Combo) {
		testenv.CheckLeaks(t)
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		addrc := make(chan string, 1)
		done := make(chan error, 1)
		go func() {
			done <- serve(ctx, "127.0.0.1:0", 2, func(a net.Addr) { addrc <- a.String() }, c.Options()...)
		}()
		var base string
		select {
		case a := <-addrc:
			base = "http://" + a
		case err := <-done:
			t.Fatal(err)
		}
		cl := &http.Client{Timeout: 30 * time.Second}
		defer cl.CloseIdleConnections()
		get := func(path string, want int) {
			res, err := cl.Get(base + path)
			require.NoError(t, err)
			_, _ = io.Copy(io.Discard, res.Body)
			res.Body.Close()
			require.Equal(t, want, res.StatusCode, path)
		}
		for range 3 {
			get("/", http.StatusOK)
		}
		get("/nope", http.StatusNotFound)

		fams := scrape(t, cl, base)
		want := []string{"http-0", "http-1"}
		for _, name := range []string{"ringloop_loop_iterations_total", "ringloop_loop_completions_total",
			"ringloop_loop_tasks_total", "ringloop_loop_panics_total", "ringloop_loop_connections", "ringloop_loop_longest_seconds"} {
			require.Equal(t, want, loopsIn(t, fams, name), name)
		}
		for _, m := range fams["ringloop_loop_iterations_total"].GetMetric() {
			require.Equal(t, c.Backend.String(), label(m, "backend"))
			require.Equal(t, c.Threading.String(), label(m, "mode"))
		}
		require.Equal(t, dto.MetricType_GAUGE, fams["ringloop_loop_connections"].GetType())
		require.Equal(t, 3.0, responses(t, fams, "2xx"))
		require.Equal(t, 1.0, responses(t, fams, "4xx"))
		require.Equal(t, 0.0, responses(t, fams, "5xx"))
		h := fams["ringloop_http_request_duration_seconds"]
		require.NotNil(t, h)
		require.Equal(t, dto.MetricType_HISTOGRAM, h.GetType())
		hist := h.GetMetric()[0].GetHistogram()
		require.Equal(t, uint64(4), hist.GetSampleCount())
		require.Len(t, hist.GetBucket(), 17, "16 bounds and +Inf")
		require.Equal(t, 10.0, hist.GetBucket()[15].GetUpperBound())
		require.Equal(t, uint64(4), hist.GetBucket()[15].GetCumulativeCount(), "every request under 10 s")
		require.Contains(t, fams, "go_goroutines")

		fams2 := scrape(t, cl, base)
		require.Equal(t, want, loopsIn(t, fams2, "ringloop_loop_iterations_total"))
		require.Equal(t, 4.0, responses(t, fams2, "2xx"), "the first scrape counted")
		var it1, it2 float64
		for _, m := range fams["ringloop_loop_iterations_total"].GetMetric() {
			it1 += m.GetCounter().GetValue()
		}
		for _, m := range fams2["ringloop_loop_iterations_total"].GetMetric() {
			it2 += m.GetCounter().GetValue()
		}
		require.Greater(t, it2, it1)

		cancel()
		select {
		case err := <-done:
			require.NoError(t, err)
		case <-time.After(30 * time.Second):
			t.Fatalf("serve did not return after %v", 30*time.Second)
		}
	})
}

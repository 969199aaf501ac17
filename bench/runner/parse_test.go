package runner

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ringloop/ringloop/bench/stats"
)

func TestParsePerfCount(t *testing.T) {
	n, err := ParsePerfCount("# started on ...\n\n123456,,raw_syscalls:sys_enter,1000000,100.00,,\n")
	require.NoError(t, err)
	require.EqualValues(t, 123456, n)
	n, err = ParsePerfCount("<not counted>,,raw_syscalls:sys_enter,0,100.00,,\n")
	require.NoError(t, err)
	require.Zero(t, n)
	_, err = ParsePerfCount("event syntax error: 'raw_syscalls:sys_enter'\n")
	require.Error(t, err)
}

func TestParseStraceTotal(t *testing.T) {
	out := `% time     seconds  usecs/call     calls    errors syscall
------ ----------- ----------- --------- --------- ----------------
 60.00    0.000600           3       200           io_uring_enter
 40.00    0.000400           2       150        14 futex
------ ----------- ----------- --------- --------- ----------------
100.00    0.001000           2       350        14 total
`
	n, err := ParseStraceTotal(out)
	require.NoError(t, err)
	require.EqualValues(t, 350, n)
	_, err = ParseStraceTotal("strace: attach: ptrace(PTRACE_SEIZE, 1): Operation not permitted\n")
	require.Error(t, err)
}

func TestOpenLoopRateFromSlowestPeak(t *testing.T) {
	done := []CaseResult{{ID: "wrk", Rows: []Row{
		{Peer: "a", Rounds: []Round{{Rate: 1000}}},
		{Peer: "b", Rounds: []Round{{Rate: 400}}},
	}}}
	for i := range done[0].Rows {
		done[0].Rows[i].summarize()
	}
	rate, note := openLoopRate(done, Case{Fraction: 0.5, RateFrom: "wrk"})
	require.Equal(t, 200.0, rate)
	require.Contains(t, note, "400")
	rate, note = openLoopRate(done, Case{Fraction: 0.5, RateFrom: "wrk", RatePeer: "a"})
	require.Equal(t, 500.0, rate, "a named peer's peak, not the slowest")
	require.Contains(t, note, "a's median")
	rate, note = openLoopRate(nil, Case{Fraction: 0.5, RateFrom: "wrk"})
	require.Positive(t, rate)
	require.Contains(t, note, "no peak")
}

func TestGroup(t *testing.T) {
	require.Equal(t, "1,234,567", group(1234567, 0))
	require.Equal(t, "999", group(999, 0))
	require.Equal(t, "12.35", group(12.345, 2))
	require.Equal(t, "-1,000.0", group(-1000, 1))
}

// wrk's 0 µs percentiles (pipelined batches) are missing figures, not
// latencies.
func TestWrkLatencyZeroIsMissing(t *testing.T) {
	require.False(t, stats.Spread{Median: wrkLatency(0)}.Valid())
	require.EqualValues(t, 512, wrkLatency(512))
}

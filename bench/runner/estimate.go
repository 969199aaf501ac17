package runner

import (
	"time"

	"github.com/ringloop/ringloop/bench/peers"
)

// Per-run costs beyond a case's own warm-up and duration, from a smoke run
// on the 2-core development machine: starting and stopping a server and a
// client process (less in-process), wrk's start, an idle hold's set-up and
// its dials (over TLS each a full handshake too).
const (
	runOverhead    = 600 * time.Millisecond
	inProcOverhead = 300 * time.Millisecond
	wrkOverhead    = 1200 * time.Millisecond
	idleBase       = time.Second
	idlePerConn    = 300 * time.Microsecond
	idleTLSPerConn = time.Millisecond
)

// Estimate is about how long cases take with this runner's peers: every
// row of every round, its warm-up, duration and the overhead of a run. It
// guides how many rows a suite can afford (make bench-compare aims at
// 20-30 minutes), and the command prints it before it starts.
func (r *Runner) Estimate(cases []Case) time.Duration {
	var total time.Duration
	for _, c := range cases {
		var each time.Duration
		switch {
		case c.Load == LoadIdle && (c.Kind == peers.TLSEcho || c.Kind == peers.H2):
			each = idleBase + time.Duration(c.Conns)*idleTLSPerConn
		case c.Load == LoadIdle:
			each = idleBase + time.Duration(c.Conns)*idlePerConn
		case c.Load == LoadBcast: // dials and upgrades every connection first
			each = c.Warmup + c.Duration + runOverhead + time.Duration(c.Conns)*idlePerConn
		case c.Load == LoadWrk:
			each = max(time.Second, c.Duration.Truncate(time.Second)) + wrkOverhead
		case c.Scenario.InProc:
			each = c.Warmup + c.Duration + inProcOverhead
		default:
			each = c.Warmup + c.Duration + runOverhead
		}
		total += time.Duration(c.Rounds*len(r.caseVariants(c))) * each
	}
	return total
}

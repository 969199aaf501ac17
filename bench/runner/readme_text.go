package runner

import (
	"fmt"
	"math"
	"strings"

	"github.com/ringloop/ringloop/bench/peers"
	"github.com/ringloop/ringloop/bench/stats"
)

// The prose the README (and engine's package doc) quotes around the table:
// the TLS and WebSocket figures and how the automatic default scored, each
// generated from the latest sweep and the sweeps kept before it, so that no
// figure is typed by hand and none drifts from the result it came from.

// autoRow is the row a user with no options gets in a case: the family's
// [default] row, or, for peers outside the families (HTTPS), the row of
// peer prefix on the automatic backend and threading mode.
func autoRow(rep Report, cr CaseResult, family, prefix string) (Row, bool) {
	for _, r := range cr.Rows {
		if family != "" && r.Family == family && r.Default {
			return r, true
		}
		if prefix != "" && r.Family == "" && strings.HasPrefix(r.Peer, prefix+"-") && rep.Auto.Picks(r.Backend, r.Threading) {
			return r, true
		}
	}
	return Row{}, false
}

// peerRow is the row of peer in the case.
func peerRow(cr CaseResult, peer string) (Row, bool) {
	for _, r := range cr.Rows {
		if r.Peer == peer {
			return r, true
		}
	}
	return Row{}, false
}

// caseOf is the report's case id.
func caseOf(rep Report, id string) (CaseResult, bool) {
	for _, cr := range rep.Cases {
		if cr.ID == id {
			return cr, true
		}
	}
	return CaseResult{}, false
}

// pair is one ringloop row against one peer in one case: medians' ratios
// and, where both ran several rounds, the spread of the round-by-round
// ratios (rounds alternate, so round i of each ran side by side).
type pair struct {
	ok                 bool
	rate, cpu, rss     float64 // ringloop ÷ peer; NaN where a side lacks the figure
	ours, theirs       Row
	rounds             int
	roundLo, roundHi   float64 // per-round rate ratios
	oursRate, peerRate stats.Spread
}

// pairOf looks up ringloop's row (autoRow) and peer's in case id.
func pairOf(rep Report, id, family, prefix, peer string) pair {
	cr, ok := caseOf(rep, id)
	if !ok {
		return pair{}
	}
	a, ok1 := autoRow(rep, cr, family, prefix)
	b, ok2 := peerRow(cr, peer)
	if !ok1 || !ok2 {
		return pair{}
	}
	div := func(x, y stats.Spread) float64 {
		if !x.Valid() || !y.Valid() || y.Median <= 0 {
			return math.NaN()
		}
		return float64(x.Median / y.Median)
	}
	p := pair{ok: true, ours: a, theirs: b, rounds: cr.Rounds, oursRate: a.Rate, peerRate: b.Rate,
		rate: div(a.Rate, b.Rate), cpu: div(a.CPUPerReq, b.CPUPerReq), rss: div(a.RSSPerConn, b.RSSPerConn),
		roundLo: math.NaN(), roundHi: math.NaN()}
	if len(a.Rounds) > 1 && len(a.Rounds) == len(b.Rounds) {
		for i := range a.Rounds {
			x, y := float64(a.Rounds[i].Rate), float64(b.Rounds[i].Rate)
			if math.IsNaN(x) || math.IsNaN(y) || y <= 0 {
				continue
			}
			r := x / y
			if math.IsNaN(p.roundLo) || r < p.roundLo {
				p.roundLo = r
			}
			if math.IsNaN(p.roundHi) || r > p.roundHi {
				p.roundHi = r
			}
		}
	}
	return p
}

// verdict names a rate ratio and a CPU ratio together, as shown (two
// decimals): fewer messages at more CPU is a loss, and is called one.
func verdict(rate, cpu float64) string {
	r, c := math.Round(rate*100), math.Round(cpu*100)
	switch {
	case math.IsNaN(r) || math.IsNaN(c):
		return ""
	case r < 100 && c > 100:
		return "a loss"
	case r > 100 && c < 100:
		return "a win"
	case r < 100 && c < 100:
		return "slower and cheaper"
	case r > 100 && c > 100:
		return "faster and costlier"
	case r == 100 && c > 100, r < 100 && c == 100:
		return "a loss"
	case r == 100 && c < 100, r > 100 && c == 100:
		return "a win"
	}
	return "level"
}

// rateAndCPU is "0.86× the rate at 1.08× the CPU per message (a loss)".
func rateAndCPU(p pair, per string) string {
	s := fmt.Sprintf("%.2f× the rate", p.rate)
	if !math.IsNaN(p.cpu) {
		s += fmt.Sprintf(" at %.2f× the CPU per %s", p.cpu, per)
		if v := verdict(p.rate, p.cpu); v != "" {
			s += " (" + v + ")"
		}
	}
	return s
}

// spread is how many rounds bound a ratio and, for several, the
// round-by-round range: "one round" or "5 rounds (round by round
// 22.10×–30.40×)".
func spread(p pair) string {
	if p.rounds <= 1 || math.IsNaN(p.roundLo) {
		return "one round"
	}
	return fmt.Sprintf("%d rounds (round by round %.2f×–%.2f×)", p.rounds, p.roundLo, p.roundHi)
}

// span is a ratio's range over the sweeps that measured it.
type span struct {
	what        string
	lo, hi      float64
	n           int
	first, last string
}

// spanOf collects f over sweeps, skipping those without the figure (NaN).
func spanOf(what string, sweeps []Report, f func(Report) float64) span {
	sp := span{what: what, lo: math.NaN(), hi: math.NaN()}
	for _, s := range sweeps {
		x := f(s)
		if math.IsNaN(x) {
			continue
		}
		if sp.n == 0 {
			sp.first = shortDate(s)
		}
		sp.last = shortDate(s)
		sp.n++
		sp.lo, sp.hi = math.Min(nz(sp.lo, x), x), math.Max(nz(sp.hi, x), x)
	}
	return sp
}

// history says how the ratios ranged across the kept sweeps: one sentence,
// naming the sweeps once when every ratio comes from the same ones.
func history(spans []span) string {
	var have []span
	for _, sp := range spans {
		if sp.n > 0 {
			have = append(have, sp)
		}
	}
	if len(have) == 0 {
		return ""
	}
	same := true
	for _, sp := range have {
		same = same && sp.n == have[0].n && sp.first == have[0].first && sp.last == have[0].last
	}
	var parts []string
	for _, sp := range have {
		part := fmt.Sprintf("%s %.2f×–%.2f×", sp.what, sp.lo, sp.hi)
		if !same {
			part += fmt.Sprintf(" (%d sweeps, %s to %s)", sp.n, sp.first, sp.last)
		}
		parts = append(parts, part)
	}
	if same {
		return fmt.Sprintf(" Across the %d sweeps kept in `bench/results/history` with this default that measured them (%s to %s), the rate ratios ranged: %s.",
			have[0].n, have[0].first, have[0].last, strings.Join(parts, "; "))
	}
	return " Across the sweeps kept in `bench/results/history` with this default that measured them, the rate ratios ranged: " + strings.Join(parts, "; ") + "."
}

func nz(x, or float64) float64 {
	if math.IsNaN(x) {
		return or
	}
	return x
}

// TLSParagraph is the README's TLS figures: TLS on the loop (looptls) and
// HTTPS against crypto/tls on net, from the latest sweep, with each
// ratio's range over the sweeps kept with the same default.
func TLSParagraph(latest Report, hist []Report) string {
	sweeps := sameDefault(latest, hist)
	e1 := pairOf(latest, "p1-tls-echo-c1-1024", peers.FamilyLoopTLS, "", "net+tls")
	e64 := pairOf(latest, "p1-tls-echo-c64-1024", peers.FamilyLoopTLS, "", "net+tls")
	hs := pairOf(latest, "p1-tls-handshake-c16", peers.FamilyLoopTLS, "", "net+tls")
	idle := pairOf(latest, "p1-tls-idle-10k", peers.FamilyLoopTLS, "", "net+tls")
	fast := pairOf(latest, "p1-https-c50", "", "ringloop-http-tls", "net/http+tls")
	adapter := pairOf(latest, "p1-https-c50", "", "ringloop-http-adapter-tls", "net/http+tls")
	nc1 := pairOf(latest, "p1-tls-echo-c1-1024", peers.FamilyTLS, "", "net+tls")
	nc64 := pairOf(latest, "p1-tls-echo-c64-1024", peers.FamilyTLS, "", "net+tls")
	if !e1.ok && !e64.ok && !fast.ok {
		return ""
	}
	var b strings.Builder
	fmt.Fprintf(&b, "**TLS** (%s; each server on one pinned core, the client on the other; medians, the default configuration's rows): ", shortDate(latest))
	var parts []string
	if e1.ok {
		parts = append(parts, "TLS on the loop (`looptls`) against Go's `crypto/tls` over `net` echoes 1 KiB at one connection at "+rateAndCPU(e1, "message"))
	}
	if e64.ok {
		parts = append(parts, "at 64 connections at "+rateAndCPU(e64, "message"))
	}
	if hs.ok {
		parts = append(parts, fmt.Sprintf("completes %.2f× the full TLS 1.3 handshakes a second", hs.rate))
	}
	if idle.ok && !math.IsNaN(idle.rss) {
		parts = append(parts, fmt.Sprintf("holds an idle connection in %s of server RSS against %s (%.2f×)",
			fmtBytes(idle.ours.RSSPerConn), fmtBytes(idle.theirs.RSSPerConn), idle.rss))
	}
	if fast.ok && adapter.ok {
		parts = append(parts, fmt.Sprintf("HTTPS keep-alive at 50 connections (wrk), against `net/http` over TLS: the fast API at %s, the adapter at %s",
			rateAndCPU(fast, "request"), rateAndCPU(adapter, "request")))
	}
	if nc1.ok && nc64.ok {
		parts = append(parts, fmt.Sprintf("`crypto/tls` over `netconn` echoes at %s at one connection and %s at 64", rateAndCPU(nc1, "message"), rateAndCPU(nc64, "message")))
	}
	b.WriteString(strings.Join(parts, "; ") + ".")
	var spans []span
	for _, h := range []struct {
		what            string
		id, family, pfx string
		peer            string
	}{
		{"looptls echo at one connection", "p1-tls-echo-c1-1024", peers.FamilyLoopTLS, "", "net+tls"},
		{"at 64", "p1-tls-echo-c64-1024", peers.FamilyLoopTLS, "", "net+tls"},
		{"HTTPS fast API", "p1-https-c50", "", "ringloop-http-tls", "net/http+tls"},
		{"adapter", "p1-https-c50", "", "ringloop-http-adapter-tls", "net/http+tls"},
	} {
		spans = append(spans, spanOf(h.what, sweeps, func(r Report) float64 { return nanIfNot(pairOf(r, h.id, h.family, h.pfx, h.peer)) }))
	}
	b.WriteString(history(spans))
	return b.String()
}

// nanIfNot is a pair's rate ratio, NaN when the sweep lacks it.
func nanIfNot(p pair) float64 {
	if !p.ok {
		return math.NaN()
	}
	return p.rate
}

// WebSocketParagraph is the README's WebSocket figures against
// gorilla/websocket on net/http.
func WebSocketParagraph(latest Report, hist []Report) string {
	sweeps := sameDefault(latest, hist)
	const fam, peer = peers.FamilyWebSocket, "gorilla"
	echo := pairOf(latest, "p1-ws-echo-c64-128", fam, "", peer)
	idle := pairOf(latest, "p1-idle-ws-10k", fam, "", peer)
	bc := pairOf(latest, "p1-ws-bcast-10k-128", fam, "", peer)
	if !echo.ok && !idle.ok && !bc.ok {
		return ""
	}
	var parts []string
	if idle.ok && !math.IsNaN(idle.rss) {
		parts = append(parts, fmt.Sprintf("10,000 idle connections cost %s of server RSS each against %s (%.2f×)",
			fmtBytes(idle.ours.RSSPerConn), fmtBytes(idle.theirs.RSSPerConn), idle.rss))
	}
	if bc.ok && !math.IsNaN(bc.rate) {
		parts = append(parts, fmt.Sprintf("a broadcast of 128 B to 10,000 connections delivers %.2f× as many messages a second (%s against %s deliveries/s, over %s)",
			bc.rate, fmtSpread(bc.oursRate, 0), fmtSpread(bc.peerRate, 0), spread(bc)))
	}
	if echo.ok {
		parts = append(parts, fmt.Sprintf("a 64-connection echo of 128 B runs at %s, over %s", rateAndCPU(echo, "message"), spread(echo)))
	}
	var b strings.Builder
	fmt.Fprintf(&b, "**WebSocket** (%s; `websocket` on one loop against gorilla/websocket on `net/http`, the same cores): %s.", shortDate(latest), strings.Join(parts, "; "))
	var spans []span
	for _, h := range []struct{ what, id string }{{"broadcast", "p1-ws-bcast-10k-128"}, {"echo", "p1-ws-echo-c64-128"}} {
		spans = append(spans, spanOf(h.what, sweeps, func(r Report) float64 { return nanIfNot(pairOf(r, h.id, fam, "", peer)) }))
	}
	b.WriteString(history(spans))
	return b.String()
}

// configName is "io_uring parked".
func configName(s ConfigScore) string { return s.Backend + " " + s.Threading }

// scoreCmp compares a with b on the three scores the default is chosen by
// (groups within 5% of the best, geometric-mean throughput and CPU per
// request, as shown: three decimals): +1 where a is ahead, -1 behind, 0 level.
func scoreCmp(a, b ConfigScore) [3]int {
	sign := func(x float64) int {
		switch {
		case x > 0:
			return 1
		case x < 0:
			return -1
		}
		return 0
	}
	r3 := func(x stats.Num) float64 { return math.Round(float64(x) * 1000) }
	return [3]int{sign(float64(a.RateWithin - b.RateWithin)), sign(r3(a.GeoRate) - r3(b.GeoRate)), sign(r3(b.GeoCPU) - r3(a.GeoCPU))}
}

var scoreNames = [3]string{"groups within 5%", "throughput", "CPU"}

// sweepVerdict says how the default scored against every other
// configuration in one sweep: "led" (ahead of each on all three scores),
// "lost to X" (X ahead on all three) or how the scores split.
func sweepVerdict(rep Report) (led bool, text string) {
	var def ConfigScore
	found := false
	for _, s := range rep.ConfigScores {
		if s.Default {
			def, found = s, true
		}
	}
	if !found {
		return false, ""
	}
	led = true
	var notes []string
	for _, s := range rep.ConfigScores {
		if s.Default {
			continue
		}
		c := scoreCmp(def, s)
		if c == [3]int{1, 1, 1} {
			continue
		}
		led = false
		if c == [3]int{-1, -1, -1} {
			notes = append(notes, configName(s)+" led it on all three (a loss)")
			continue
		}
		var ahead, level, behind []string
		for i, x := range c {
			switch x {
			case 1:
				ahead = append(ahead, scoreNames[i])
			case 0:
				level = append(level, scoreNames[i])
			default:
				behind = append(behind, scoreNames[i])
			}
		}
		var bits []string
		for _, g := range []struct {
			word  string
			names []string
		}{{"ahead on", ahead}, {"level on", level}, {"behind on", behind}} {
			if len(g.names) > 0 {
				bits = append(bits, g.word+" "+strings.Join(g.names, " and "))
			}
		}
		notes = append(notes, "against "+configName(s)+" it was "+strings.Join(bits, ", ")+" (split)")
	}
	return led, strings.Join(notes, "; ")
}

// DefaultSummary is how the automatic default scored, as plain sentences
// (the README's "Backend and threading mode" and engine's package doc
// quote it): the latest sweep's scores for every configuration, then, over
// the sweeps kept with the same default, in how many it led every other
// configuration on all three scores and what happened in the others.
func DefaultSummary(latest Report, hist []Report) string {
	if len(latest.ConfigScores) == 0 {
		return ""
	}
	var def ConfigScore
	var others []string
	for _, s := range latest.ConfigScores {
		if s.Default {
			def = s
		} else {
			others = append(others, fmt.Sprintf("%s %d / %.3f / %.3f", configName(s), s.RateWithin, s.GeoRate, s.GeoCPU))
		}
	}
	if def.Backend == "" {
		return ""
	}
	var b strings.Builder
	fmt.Fprintf(&b, "In the latest sweep (%s, `%s`) %s, the default, comes within 5%% of its family's best row in %d of %d family × case groups, "+
		"with %.3f of the best's throughput and %.3f of its CPU per request in geometric mean, and its best round reaches the best row's worst in %d; "+
		"the other configurations score (groups within 5%% / throughput / CPU) %s.",
		shortDate(latest), latest.Command, configName(def), def.RateWithin, def.Compared, def.GeoRate, def.GeoCPU, def.Overlap, strings.Join(others, ", "))
	sweeps := sameDefault(latest, hist)
	var ledN int
	var notes []string
	for _, s := range sweeps {
		led, text := sweepVerdict(s)
		if led {
			ledN++
		} else if text != "" {
			notes = append(notes, shortDate(s)+": "+text)
		}
	}
	fmt.Fprintf(&b, " Of the %d sweeps kept in `bench/results/history` with this default (%s to %s), it led every other configuration on all three scores "+
		"(groups within 5%%, geometric-mean throughput, geometric-mean CPU) in %d", len(sweeps), shortDate(sweeps[0]), shortDate(latest), ledN)
	if len(notes) > 0 {
		fmt.Fprintf(&b, "; in the other %d, %s", len(notes), strings.Join(notes, "; "))
	}
	b.WriteString(".")
	return b.String()
}

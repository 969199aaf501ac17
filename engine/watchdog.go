package engine

import (
	"bytes"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// The stall detector's watchdog. A loop publishes, in one atomic word, which
// piece of work it runs (a task, a timer, a handler callback...) and a
// sequence number that changes with every piece: two stores per piece, no
// clock read. One goroutine for the process samples every loop a few times
// per threshold; a loop seen running the same piece for the threshold or
// longer is reported once, while it is still blocked, with the stack of
// the loop's goroutine (what it is blocked in). So a handler that never
// returns (a deadlock, a lost channel send) is reported too, which timing a
// piece after it returns never could, and a healthy loop pays two stores
// per piece instead of two clock reads (a clock read costs more than a
// store, and much more where a virtual machine's clock source traps to the
// hypervisor). What the detector costs a loop, on against off, is
// BenchmarkStallDetector's to measure.
//
// A batch of completions that is slow as a whole, each callback being
// short, is load rather than a block, and so is a loop whose thread the
// machine did not run: neither is reported (the batch's time is the
// longest_seconds metric).

// Piece kinds, the low bits of Loop.running.
const (
	pieceNone uint64 = iota
	pieceTask
	pieceTimer
	pieceTail
	pieceControl
	pieceCallback
	pieceHook
	pieceBits = 3
)

var pieceNames = [...]string{"", "task", "timer", "tail task", "control task", "callback", "shutdown hook"}

// enter publishes that the loop starts a piece of work of kind k, and wakes
// the watchdog if it dozes (the store comes before the load, and the
// watchdog stores dozing before it samples again: one of the two sees the
// other).
func (l *Loop) enter(k uint64) {
	l.pieceSeq++
	l.running.Store(l.pieceSeq<<pieceBits | k)
	if watchdog.dozing.Load() && watchdog.dozing.CompareAndSwap(true, false) {
		select {
		case watchdog.kick <- struct{}{}:
		default:
		}
	}
}

// leave publishes that the loop is between pieces.
func (l *Loop) leave() { l.running.Store(l.pieceSeq << pieceBits) }

// watchdog is the process's stall watcher: the loops it watches and
// whether its goroutine runs.
var watchdog watchdogState

type watchdogState struct {
	mu      sync.Mutex
	loops   map[*Loop]*watched
	running bool
	kick    chan struct{} // wakes the goroutine when a loop leaves, or one enters a piece while it dozes
	// dozing: every loop was between pieces for a whole tick, so the
	// goroutine waits for a kick instead of ticking; an idle process is
	// not woken 16 times a second for nothing.
	dozing atomic.Bool
}

// watched is what the watchdog last saw of a loop.
type watched struct {
	seen     uint64 // the loop's running word
	since    int64  // when it was first seen (engine clock)
	credit   int64  // how long it has been seen blocked, counting late ticks short (see watchLoops)
	reported bool
}

// watch starts watching l (its goroutine, on start).
func (l *Loop) watch() {
	if l.cfg.stallThreshold <= 0 {
		return
	}
	l.goid.Store(currentGoid())
	w := &watchdog
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.loops == nil {
		w.loops = map[*Loop]*watched{}
		w.kick = make(chan struct{}, 1)
	}
	w.loops[l] = &watched{}
	if !w.running {
		w.running = true
		go watchLoops()
	}
}

// unwatch stops watching l (it terminated); the goroutine ends with the
// last loop.
func (l *Loop) unwatch() {
	w := &watchdog
	w.mu.Lock()
	_, ok := w.loops[l]
	delete(w.loops, l)
	empty := len(w.loops) == 0
	w.mu.Unlock()
	if ok && empty {
		select {
		case w.kick <- struct{}{}:
		default:
		}
	}
}

// watchLoops samples the loops every quarter of the smallest threshold.
func watchLoops() {
	w := &watchdog
	t := time.NewTimer(time.Hour)
	defer t.Stop()
	var stalled []stallSeen
	last, every := now(), time.Duration(0)
	for {
		w.mu.Lock()
		if len(w.loops) == 0 {
			w.running = false
			w.dozing.Store(false)
			w.mu.Unlock()
			return
		}
		at := now()
		// A tick that comes late says the machine is overloaded: the
		// watchdog itself did not get a CPU in time, and neither, perhaps,
		// did the loop, which is then not blocked by its own work. Such a
		// gap counts as two ticks at most, so an overloaded machine delays
		// a report rather than makes one up.
		gap := min(at-last, 2*int64(every))
		last = at
		every = time.Duration(1<<63 - 1)
		stalled = stalled[:0]
		idle := true // every loop between pieces and unchanged since the last tick
		for l, s := range w.loops {
			th := l.cfg.stallThreshold
			every = min(every, th/4)
			v := l.running.Load()
			idle = idle && v == s.seen && v&(1<<pieceBits-1) == pieceNone
			switch {
			case v&(1<<pieceBits-1) == pieceNone:
				s.seen, s.since, s.credit, s.reported = v, 0, 0, false
			case v != s.seen || s.since == 0:
				s.seen, s.since, s.credit, s.reported = v, at, 0, false
			default:
				s.credit += gap
				if !s.reported && s.credit >= int64(th) {
					s.reported = true
					stalled = append(stalled, stallSeen{l, v & (1<<pieceBits - 1), at - s.since})
				}
			}
		}
		doze := idle && w.doze()
		w.mu.Unlock()
		for _, s := range stalled {
			s.l.blocked(s.kind, s.took)
		}
		if doze {
			<-w.kick
			last = now()
			continue
		}
		t.Reset(max(every, time.Millisecond))
		select {
		case <-t.C:
		case <-w.kick:
		}
	}
}

// doze reports whether the watchdog may wait for a kick alone: it
// announces that it dozes, then samples every loop again; a loop that
// entered a piece since the tick either shows here or sees dozing and
// kicks. Called with mu held, after a tick that found every loop idle.
func (w *watchdogState) doze() bool {
	w.dozing.Store(true)
	for l, s := range w.loops {
		if l.running.Load() != s.seen {
			// A loop woke: tick on. If it already took dozing back, its
			// kick only ends the next wait early.
			w.dozing.CompareAndSwap(true, false)
			return false
		}
	}
	return true
}

type stallSeen struct {
	l    *Loop
	kind uint64
	took int64
}

// blocked reports l, blocked in a piece of work of kind for took so far
// (on the watchdog's goroutine).
func (l *Loop) blocked(kind uint64, took int64) {
	stack := goroutineStack(l.goid.Load())
	detail := "its goroutine's stack was not found"
	for _, f := range stack {
		if userFrame(f) {
			detail = f
			break
		}
	}
	l.stalled(pieceNames[kind], detail, stack, took)
}

// userFrame reports whether a frame ("function (file:line)") is outside
// Go's runtime and standard library: its package path starts with a domain
// (a dot in its first element, "github.com/...") or is main.
func userFrame(f string) bool {
	fn, _, _ := strings.Cut(f, " (")
	if first, _, ok := strings.Cut(fn, "/"); ok {
		return strings.Contains(first, ".")
	}
	pkg, _, _ := strings.Cut(fn, ".") // "time.Sleep": the standard library's time
	return pkg == "main"
}

// currentGoid returns the calling goroutine's id, from its stack header
// ("goroutine 18 [running]:"); called once per loop start.
func currentGoid() uint64 {
	var buf [64]byte
	b := buf[:runtime.Stack(buf[:], false)]
	b = bytes.TrimPrefix(b, []byte("goroutine "))
	if i := bytes.IndexByte(b, ' '); i > 0 {
		n, _ := strconv.ParseUint(string(b[:i]), 10, 64)
		return n
	}
	return 0
}

// goroutineStack returns the frames of goroutine id, each "function
// (file:line)", from a dump of every goroutine (it stops the world
// briefly: only on a stall). Nil if not found.
func goroutineStack(id uint64) []string {
	if id == 0 {
		return nil
	}
	buf := make([]byte, 1<<16)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) || len(buf) >= 64<<20 {
			buf = buf[:n]
			break
		}
		buf = make([]byte, 2*len(buf))
	}
	head := []byte("goroutine " + strconv.FormatUint(id, 10) + " [")
	i := bytes.Index(buf, head)
	if i < 0 {
		return nil
	}
	block := buf[i:]
	if j := bytes.Index(block, []byte("\n\n")); j >= 0 {
		block = block[:j]
	}
	lines := strings.Split(string(block), "\n")[1:]
	var frames []string
	for k := 0; k+1 < len(lines) && len(frames) < 48; k += 2 {
		fn := lines[k]
		if p := strings.LastIndexByte(fn, '('); p > 0 {
			fn = fn[:p]
		}
		loc := strings.TrimSpace(lines[k+1])
		if p := strings.LastIndex(loc, " +0x"); p > 0 {
			loc = loc[:p]
		}
		frames = append(frames, fn+" ("+loc+")")
	}
	return frames
}

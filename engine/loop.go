package engine

import (
	"fmt"
	"math"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ringloop/ringloop/internal/driver"
	"github.com/ringloop/ringloop/internal/taskq"
	"github.com/ringloop/ringloop/internal/timers"
	"github.com/ringloop/ringloop/tasks"
)

// ErrShutdown: the loop no longer accepts work; also why connections,
// dials and listeners still open when it shut down ended (OnClose's cause).
// It matches tasks.ErrShutdown too. The other errors of handing work to a
// loop are package tasks': tasks.ErrRejected (a bounded task ring was full
// and the reject policy gave up), tasks.ErrDeadlock (a loop was asked to
// wait for itself: Netty's BlockingOperationException) and
// tasks.ErrPanicked.
var ErrShutdown error = loopShutdown{}

// nextWake values besides a deadline: the loop is running (awake), or it
// blocks without a timer (none).
const (
	awake    int64 = -1
	wakeNone int64 = math.MaxInt64
)

// Loop is one event loop: one goroutine (locked to an OS thread or parked in
// Go's netpoller when idle, see Threading) driving its own I/O driver, task
// rings and timer heap. Every method is safe from any goroutine unless its
// doc says it must run on the loop.
type Loop struct {
	cfg       config
	drv       driver.Driver
	info      BackendInfo
	threading Threading

	ctl      atomic.Uint64  // state and announced producers, see state.go
	nextWake atomic.Int64   // awake, wakeNone, or the deadline the loop sleeps until
	tid      atomic.Int32   // OS thread id of a locked loop, 0 before start
	g        atomic.Uintptr // curg() of the loop goroutine while it runs
	ioRatio  atomic.Int32

	taskQ taskq.Queue
	tailQ taskq.Queue
	// ctlQ is the control ring: the library's own work (closes, read and
	// accept resumes, hand-offs, AsyncWrite drains, responses of handlers
	// on other goroutines, future listeners) never rides on taskQ, which the user may bound
	// (WithMaxPendingTasks), so a full task ring cannot drop it. It is
	// unbounded, but each producer holds at most a few entries at a time
	// (one per connection and kind, or one per waiting caller), so its size
	// is bounded by the connections and goroutines that feed it.
	ctlQ taskq.Queue
	heap *timers.Heap

	quietNanos   atomic.Int64
	timeoutNanos atomic.Int64
	done         chan struct{} // closed once Terminated

	hooksMu sync.Mutex
	hooks   []hook
	hookSeq uint64

	stats     stats
	packets   packetCounts // the loop's own datagram counts (metrics.go)
	pktShared any          // what package packet's sockets on the loop share (internals.go)
	inbox     handoffInbox // MSG_RING hand-offs towards this loop (handoffinbox.go)

	running atomic.Uint64 // stall detector: the piece of work running, for the watchdog (watchdog.go)
	goid    atomic.Uint64 // the loop goroutine's id, for the watchdog's stack

	// Loop-only state.
	reg           registry
	due           []tasks.Task
	dueHead       int
	lastExec      int64
	shutdownStart int64
	shutdownBegun bool
	waitFails     int   // driver waits failed in a row
	shutdownPoll  int64 // while the quiet period runs: wake by then to re-check
	lastActive    int64 // last iteration with completions or tasks (busy poll, spin)
	spin          spinner
	ioFirst       int64  // time of the first completion of this Wait
	pieceSeq      uint64 // stall detector: numbers the pieces of work (watchdog.go)
	completions   int    // completions in this Wait
	inWait        bool   // the driver's Wait is running (see afterGoexit)
	it            iteration
	resumer       driver.Resumer // drv, if it can go on waiting (see iterate)
	betweenFn     func() (time.Duration, bool)
	fault         error // set when the loop's own code panicked (see fail)
	appendDue     func(tasks.Task)
	flushList     []*Conn  // connections written to this iteration
	redeliverList []*Conn  // connections that resumed reading with bytes kept
	bufs          bufCache // large buffers connections gave back (bufcache.go)
	trim          sendTrim // connections holding send buffers (sendtrim.go)
}

// New builds a loop and its driver; the loop's goroutine starts lazily, on its
// first task. It fails if the chosen backend cannot be set up (a forced
// io_uring where io_uring is refused, for instance).
func New(opts ...Option) (*Loop, error) {
	c := defaultConfig()
	for _, o := range opts {
		if err := o(&c); err != nil {
			return nil, err
		}
	}
	if c.drv.Profile == "" { // no option set it: the environment may
		p, err := driver.ProfileFromEnv()
		if err != nil {
			return nil, fmt.Errorf("engine: %s: %w", driver.ProfileEnv, err)
		}
		c.drv.Profile = p
	}
	th, err := resolveThreading(c.threading)
	if err != nil {
		return nil, err
	}
	c.threading = th // 0: the default of whichever backend opens
	d, why, err := openDriver(&c)
	if err != nil {
		return nil, err
	}
	if th == 0 {
		th = defaultThreading
	}
	c.threading = th
	if c.name == "" {
		c.name = nextLoopName() // only once the loop exists: failed builds take no number
	}
	l := &Loop{
		cfg:       c,
		drv:       d,
		info:      BackendInfo{Name: backendOf(d), Features: d.Features(), Reason: why, Threading: th},
		threading: th,
		taskQ:     taskq.NewQueue(c.maxPending),
		tailQ:     taskq.NewQueue(c.maxPending),
		ctlQ:      taskq.NewUnbounded(0),
	}
	if c.busyPoll == 0 {
		l.spin.limit = int64(c.spinLimit)
	}
	l.ctl.Store(withState(0, NotStarted))
	l.nextWake.Store(awake)
	l.ioRatio.Store(int32(c.ioRatio))
	l.heap = timers.NewHeap(l)
	l.initTrim()
	l.appendDue = l.appendDueTask
	l.resumer, _ = d.(driver.Resumer)
	l.betweenFn = l.between // made once: a method value per Wait would allocate
	l.done = make(chan struct{})
	return l, nil
}

// Name returns the loop's name: WithName's, else "loop-<n>" (see WithName).
func (l *Loop) Name() string { return l.cfg.name }

// loopSeq numbers the loops built without a name.
var loopSeq atomic.Uint64

func nextLoopName() string { return "loop-" + strconv.FormatUint(loopSeq.Add(1)-1, 10) }

// Backend says which I/O driver the loop runs and why it was chosen.
func (l *Loop) Backend() BackendInfo { return l.info }

// Next returns the loop itself: a loop is a group of one (Netty's
// EventExecutor.next).
func (l *Loop) Next() *Loop { return l }

// InEventLoop reports whether the caller runs on this loop's goroutine. It
// makes no system call: it compares goroutine identities (see curg).
func (l *Loop) InEventLoop() bool {
	g := l.g.Load()
	return g != 0 && g == curg()
}

// ThreadID returns the OS thread id a locked loop runs on, 0 before it
// started, after it terminated, and for a parked loop, which has no thread
// of its own (for affinity tools and thread dumps).
func (l *Loop) ThreadID() int { return int(l.tid.Load()) }

// pendingTasks returns about how many tasks wait in the task and tail rings
// (Metrics.Pending). It never blocks and never hops into the loop; a count
// read while producers offer may be off by the number of offers in flight.
func (l *Loop) pendingTasks() int { return l.taskQ.Len() + l.tailQ.Len() }

// String names the loop with its backend and state, for logs.
func (l *Loop) String() string {
	return fmt.Sprintf("%s(%s, %s, %s)", l.cfg.name, l.info.Name, l.threading, l.State())
}

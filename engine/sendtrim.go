package engine

import (
	"time"

	"github.com/ringloop/ringloop/internal/timers"
)

// An idle connection gives its send buffers back. A connection keeps its
// outbound buffers between bursts (two, swapped at each flush, plus
// AsyncWrite's two), so that steady traffic allocates nothing; kept for
// ever, a keep-alive connection that once sent a large response would hold
// that response's size in memory while it idles, and ten thousand of them
// gigabytes. So each connection that writes is listed once, and a sweep on
// a loop timer releases the send buffers of those that wrote nothing for a
// whole period (large ones go to the loop's cache, small ones to the
// collector): a connection trims one to two periods after its last write.
// The write path pays one flag test; the timer runs only while some
// connection holds buffers.
type sendTrim struct {
	conns  []*Conn // connections that wrote since their last trim
	timer  timers.Timer
	task   trimTask
	period time.Duration
}

// trimPeriod is how long a connection writes nothing before it trims.
const trimPeriod = time.Second

func (l *Loop) initTrim() {
	l.trim.task.l = l
	l.trim.timer.Init(&l.trim.task)
	l.trim.period = trimPeriod
}

// noteWrite marks the connection as writing and lists it for the sweep.
func (c *Conn) noteWrite() {
	if c.has(flagTrimListed) {
		c.set(flagWrote)
		return
	}
	c.set(flagWrote | flagTrimListed)
	l := c.loop
	c.trimAt = int32(len(l.trim.conns))
	l.trim.conns = append(l.trim.conns, c)
	if !l.trim.timer.Pending() {
		l.heap.Start(&l.trim.timer, now()+int64(l.trim.period))
	}
}

type trimTask struct{ l *Loop }

// Run sweeps the listed connections: those that wrote since the last sweep
// stay listed, as do those still sending; the others release their buffers.
func (t *trimTask) Run() {
	l := t.l
	kept := l.trim.conns[:0]
	for _, c := range l.trim.conns {
		switch {
		case c.st == connClosed:
			c.clear(flagTrimListed) // its release takes the buffers
		case c.has(flagWrote) || c.has(flagInFlight) || len(c.out) > 0 || len(c.plain) > 0:
			c.clear(flagWrote)
			c.trimAt = int32(len(kept))
			kept = append(kept, c)
		default:
			c.releaseSendBuffers()
			c.clear(flagTrimListed)
		}
	}
	clear(l.trim.conns[len(kept):])
	l.trim.conns = kept
	if len(kept) > 0 {
		l.heap.Start(&l.trim.timer, now()+int64(l.trim.period))
	}
}

// unlistTrim takes a released connection off the list at once: listed
// until the next sweep, a closed connection would keep everything it
// references (its handler's state, a TLS connection's buffers) reachable
// for up to two periods, which at thousands of short connections a second
// is thousands of dead connections in the live heap.
func (c *Conn) unlistTrim() {
	if !c.has(flagTrimListed) {
		return
	}
	c.clear(flagTrimListed)
	list := c.loop.trim.conns
	i, last := int(c.trimAt), len(list)-1
	list[i] = list[last]
	list[i].trimAt = int32(i)
	list[last] = nil
	c.loop.trim.conns = list[:last]
}

// releaseSendBuffers gives up the connection's empty send buffers; nothing
// may be in flight. AsyncWrite's batch is kept if it holds bytes.
func (c *Conn) releaseSendBuffers() {
	bufs := &c.loop.bufs
	bufs.put(c.out)
	bufs.put(c.sending)
	c.out, c.sending = nil, nil
	if len(c.plain) == 0 { // plaintext held for a transport's OnOpen stays
		bufs.put(c.plain)
		c.plain = nil
	}
	a := &c.async
	a.Mu.Lock()
	if len(a.Buf) == 0 {
		bufs.put(a.Buf)
		a.Buf = nil
	}
	bufs.put(a.Spare)
	a.Spare = nil
	a.Mu.Unlock()
}

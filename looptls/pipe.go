package looptls

import (
	"net"
	"sync"
	"time"

	"github.com/ringloop/ringloop/engine"
	"github.com/ringloop/ringloop/internal/loopctl"
)

// errWouldBlock is what the pipe's Read returns, once the connection is
// established, when the ciphertext the loop handed over is used up. It is a
// temporary net.Error: crypto/tls then keeps the partial record it holds and
// does not fail the connection, so the next delivery resumes the record
// where it stopped.
var errWouldBlock net.Error = wouldBlock{}

type wouldBlock struct{}

func (wouldBlock) Error() string   { return "looptls: no more ciphertext until the next delivery" }
func (wouldBlock) Timeout() bool   { return false }
func (wouldBlock) Temporary() bool { return true }

// pipe is the net.Conn a tls.Conn runs over: Read returns the ciphertext
// the loop received, Write hands ciphertext to the engine connection below
// its transport (engine.Wire: on the loop a copy into its outbound buffer;
// from the handshake goroutine a copy the loop writes, in order: see
// flight).
//
// During the handshake Read blocks until the loop feeds bytes or the
// pipe is closed (the handshake timeout, or the connection ended);
// once established it never blocks: it returns errWouldBlock instead.
type pipe struct {
	w engine.Wire
	c *engine.Conn

	mu      sync.Mutex
	buf     []byte // ciphertext received and not yet read (owned)
	off     int    // read position in buf
	src     []byte // established: the delivery being read (the engine's buffer)
	steady  bool   // established: Read never blocks
	err     error  // closed: what Read returns once buf is empty
	paused  bool   // the handshake side paused the engine connection's reading
	limit   int    // bytes buffered during the handshake before reading pauses
	wake    chan struct{}
	waiting bool // the handshake goroutine waits on wake

	rec records // the inbound stream's record boundaries
}

func (t *pipe) init(w engine.Wire, limit int) {
	t.w, t.c, t.limit = w, w.Conn(), limit
	t.wake = make(chan struct{}, 1)
}

// pending is the number of buffered bytes not yet read (t.mu held).
func (t *pipe) pending() int { return len(t.buf) - t.off }

// feed appends ciphertext received during the handshake and wakes the
// handshake goroutine; past the limit it pauses reading until the
// handshake has read them (a peer cannot make a handshake hold more).
// On the loop.
func (t *pipe) feed(b []byte) {
	t.mu.Lock()
	if t.err == nil {
		t.buf = append(t.buf, b...)
		t.rec.frame(b)
	}
	over := t.pending() > t.limit && !t.steady
	if over {
		t.paused = true
	}
	wake := t.waiting
	t.waiting = false
	t.mu.Unlock()
	if over {
		t.c.PauseRead() // on the loop: at once; called again on each delivery past the limit
	}
	if wake {
		t.signal()
	}
}

func (t *pipe) signal() {
	select {
	case t.wake <- struct{}{}:
	default:
	}
}

// Read gives crypto/tls the ciphertext received: during the handshake all
// of it, blocking until there is some; once established whole records
// only, never blocking (and all of it once the pipe is closed, for
// crypto/tls to judge a truncated record). Only the handshake goroutine
// reads steady unlocked before it is set, and nothing sets it meanwhile.
func (t *pipe) Read(p []byte) (int, error) {
	if t.steady && t.err == nil {
		return t.readWhole(p)
	}
	t.mu.Lock()
	for {
		if t.pending() > 0 {
			n := copy(p, t.buf[t.off:])
			t.rec.given += int64(n)
			t.off += n
			if t.off == len(t.buf) {
				t.buf, t.off = t.buf[:0], 0
			}
			resume := t.paused && !t.steady && t.pending() <= t.limit/2
			if resume {
				t.paused = false
			}
			t.mu.Unlock()
			if resume {
				t.c.ResumeRead() // off the loop: handed to it
			}
			return n, nil
		}
		if len(t.src) > 0 {
			n := copy(p, t.src)
			t.rec.given += int64(n)
			t.src = t.src[n:]
			t.mu.Unlock()
			return n, nil
		}
		if t.err != nil {
			err := t.err
			t.mu.Unlock()
			return 0, err
		}
		t.waiting = true
		t.mu.Unlock()
		<-t.wake
		t.mu.Lock()
	}
}

// An established pipe is the loop's alone: the handshake goroutine
// has ended (hsDone runs after it), its timer stopped before firing, and
// only the loop calls what follows, with no lock.

// readWhole is Read once established: whole records only, first those
// stashed, then the delivery's.
func (t *pipe) readWhole(p []byte) (int, error) {
	lim := t.rec.wholeEnd - t.rec.given
	if lim <= 0 {
		// crypto/tls asks past the whole records: it has read them.
		t.rec.consumed = t.rec.whole
		return 0, errWouldBlock
	}
	if int64(len(p)) > lim {
		p = p[:lim]
	}
	n := 0
	if t.pending() > 0 {
		n = copy(p, t.buf[t.off:])
		t.off += n
		if t.off == len(t.buf) {
			t.buf, t.off = t.buf[:0], 0
		}
	}
	if n < len(p) && len(t.src) > 0 {
		m := copy(p[n:], t.src)
		t.src = t.src[m:]
		n += m
	}
	t.rec.given += int64(n)
	return n, nil
}

// deliver makes b, the engine's buffer, what Read returns next (on the
// loop, established).
func (t *pipe) deliver(b []byte) {
	t.src = b
	t.rec.frame(b)
}

// more reports whether crypto/tls may have a whole record left to read,
// or the end of the stream to hear of (on the loop, established).
func (t *pipe) more() bool {
	return t.rec.consumed < t.rec.whole || t.err != nil
}

// readOne counts a record crypto/tls surely read: a read of its that
// returned plaintext, into room for a whole record's, read at least one.
func (t *pipe) readOne() {
	if t.rec.consumed < t.rec.whole {
		t.rec.consumed++
	}
}

// stash copies what crypto/tls did not read of the delivery (a partial
// record, or reading paused) so that it outlives the engine's buffer (on
// the loop, established). A partial record goes into a pooled buffer of a
// record's size; a buffer left empty is let go: an established connection
// reads from the engine's buffer and needs its own only for what is left,
// so an idle one holds none.
func (t *pipe) stash() {
	if len(t.src) > 0 {
		if t.buf == nil && len(t.src) <= recordBufSize {
			t.buf = recordPool.Get().(*[recordBufSize]byte)[:0]
		}
		t.buf = append(t.buf, t.src...)
	}
	t.src = nil
	if t.pending() == 0 {
		if cap(t.buf) == recordBufSize {
			recordPool.Put((*[recordBufSize]byte)(t.buf[:recordBufSize]))
		}
		t.buf, t.off = nil, 0
	}
}

// recordBufSize holds the largest record: what a stream split between
// deliveries leaves behind each time.
const recordBufSize = 5 + maxRecordBody

var recordPool = sync.Pool{New: func() any { return new([recordBufSize]byte) }}

// establish makes Read non-blocking and resumes reading if the handshake
// had paused it (on the loop).
func (t *pipe) establish() {
	t.mu.Lock()
	t.steady = true
	resume := t.paused
	t.paused = false
	// The handshake goroutine has ended (its timer stopped before it
	// fired) and Read no longer waits: nothing sends on wake any more,
	// and signal skips a nil channel.
	t.wake = nil
	t.mu.Unlock()
	if resume {
		t.c.ResumeRead()
	}
}

// Write hands ciphertext to the engine connection: on the loop at once;
// from the handshake goroutine as a flight the loop writes.
func (t *pipe) Write(p []byte) (int, error) {
	if t.c.Loop().InEventLoop() {
		return t.w.Write(p)
	}
	f := &flight{w: t.w, b: append([]byte(nil), p...)}
	if err := loopctl.Run(t.c.Loop(), f); err != nil {
		return 0, err
	}
	return len(p), nil
}

// flight is ciphertext the handshake goroutine wrote (a whole flight:
// crypto/tls buffers a flight's messages and writes them at once), which
// the loop copies into the engine connection's outbound buffer. It rides
// the loop's control ring, as hsDone does, so it keeps its place before
// the handshake's outcome. It is written below the transport (the
// engine connection's own writes would be encrypted), and this copy is
// garbage once written, so an idle connection holds none. The handshake bounds how much is in flight: a server writes
// its flight, then waits for the client's.
type flight struct {
	w engine.Wire
	b []byte
}

func (f *flight) Run() { _, _ = f.w.Write(f.b) } // closed: the handshake's next read fails

// Close ends a Read under way and every later one (the handshake timeout,
// or the engine connection ended). It does not close the engine
// connection: the loop does.
func (t *pipe) Close() error {
	t.mu.Lock()
	if t.err == nil {
		t.err = net.ErrClosed
	}
	t.buf, t.off, t.src = nil, 0, nil
	t.mu.Unlock()
	t.signal()
	return nil
}

// closeWith ends the pipe once the bytes buffered are read: Read
// returns them, then err (the engine connection closed).
func (t *pipe) closeWith(err error) {
	t.mu.Lock()
	if t.err == nil {
		t.err = err
	}
	t.mu.Unlock()
	t.signal()
}

// release lets the buffers go once the connection has closed and the
// handshake goroutine, if any, has ended (on the loop).
func (t *pipe) release() {
	t.mu.Lock()
	defer t.mu.Unlock()
	if cap(t.buf) == recordBufSize {
		recordPool.Put((*[recordBufSize]byte)(t.buf[:recordBufSize]))
	}
	t.buf, t.off, t.src = nil, 0, nil
}

func (t *pipe) LocalAddr() net.Addr  { return t.c.LocalAddr() }
func (t *pipe) RemoteAddr() net.Addr { return t.c.RemoteAddr() }

// Deadlines do not apply: the handshake has its own timeout and an
// established connection never blocks.
func (t *pipe) SetDeadline(time.Time) error      { return nil }
func (t *pipe) SetReadDeadline(time.Time) error  { return nil }
func (t *pipe) SetWriteDeadline(time.Time) error { return nil }

package netconn

import (
	"errors"
	"io"
	"net"
	"os"
	"sync"
	"syscall"

	"github.com/ringloop/ringloop/engine"
	"github.com/ringloop/ringloop/internal/loopctl"
)

// Conn is a net.Conn whose socket a ringloop loop serves: the loop receives
// into a bounded read buffer that Read drains, and takes what Write leaves
// in a bounded write buffer into the connection's outbound buffer, as long
// as the connection is under its high watermark. Read and Write block (with
// deadlines) when their buffer is empty or full, so a slow peer or a slow
// reader costs bounded memory. Every method is safe from any goroutine
// except the connection's own loop, where Read and Write would block the
// loop: call them from ordinary goroutines.
type Conn struct {
	loop         *engine.Loop
	cfg          *config
	network      string
	laddr, raddr net.Addr

	rmu, wmu sync.Mutex // one Read and one Write at a time, each whole

	mu       sync.Mutex
	rbuf     []byte // received, not yet read: rbuf[roff:]
	roff     int
	rerr     error // why reading ended (io.EOF: the peer closed its side)
	rpaused  bool  // the loop stopped reading: the read buffer is full
	resuming bool  // a resume task is queued
	wbuf     []byte
	werr     error // why writing ended
	owed     bool  // wbuf waits for the loop: a move is queued or awaits writability
	closed   bool  // Close was called
	wshut    bool  // CloseWrite was called

	rready, wready chan struct{} // the loop's signals to a waiting Read or Write
	done           chan struct{} // closed by Close
	deadlines

	c                                   *engine.Conn // loop side only
	moveT, resumeT, closeT, closeWriteT connTask
}

// connTask runs one of a connection's steps on its loop; each connection
// keeps its own, so queueing one allocates nothing. They go on the loop's
// control ring (package loopctl), not its task ring: a user's
// engine.WithMaxPendingTasks must not drop a close or a read resume. Each
// is queued at most once at a time (owed, resuming, closed, wshut), which
// bounds what a connection puts there. They re-read the connection's state
// on the loop instead of carrying a decision, which is why they are not
// engine.Conn's own ResumeRead or Close: a resume decided on the reader's
// goroutine could land after the loop paused again.
type connTask struct {
	nc *Conn
	fn func(*Conn)
}

func (t *connTask) Run() { t.fn(t.nc) }

func newConn(l *engine.Loop, cfg *config, network string) *Conn {
	nc := &Conn{
		loop:      l,
		cfg:       cfg,
		network:   network,
		rready:    make(chan struct{}, 1),
		wready:    make(chan struct{}, 1),
		done:      make(chan struct{}),
		deadlines: newDeadlines(),
	}
	nc.moveT = connTask{nc, (*Conn).moveOut}
	nc.resumeT = connTask{nc, (*Conn).resume}
	nc.closeT = connTask{nc, (*Conn).closeOnLoop}
	nc.closeWriteT = connTask{nc, (*Conn).closeWriteOnLoop}
	return nc
}

func signal(ch chan struct{}) {
	select {
	case ch <- struct{}{}:
	default:
	}
}

// Read reads received bytes, waiting for some unless the read deadline has
// passed (os.ErrDeadlineExceeded) or the connection ended (io.EOF once the
// peer closed its side).
func (nc *Conn) Read(p []byte) (int, error) {
	nc.rmu.Lock()
	defer nc.rmu.Unlock()
	for {
		nc.mu.Lock()
		if nc.closed {
			nc.mu.Unlock()
			return 0, nc.opError("read", net.ErrClosed)
		}
		if nc.rdl.passed() {
			nc.mu.Unlock()
			return 0, nc.opError("read", os.ErrDeadlineExceeded)
		}
		if len(nc.rbuf) > nc.roff {
			n := copy(p, nc.rbuf[nc.roff:])
			nc.roff += n
			if nc.roff == len(nc.rbuf) {
				nc.rbuf, nc.roff = nc.rbuf[:0], 0
			}
			kick := nc.rpaused && !nc.resuming && len(nc.rbuf)-nc.roff <= nc.cfg.readLimit/2
			nc.resuming = nc.resuming || kick
			nc.mu.Unlock()
			if kick {
				// Refused only once the loop has shut down, which closed
				// the connection; buffered bytes stay readable.
				_ = loopctl.Run(nc.loop, &nc.resumeT)
			}
			return n, nil
		}
		if err := nc.rerr; err != nil {
			nc.mu.Unlock()
			if err == io.EOF {
				return 0, io.EOF
			}
			return 0, nc.opError("read", err)
		}
		nc.mu.Unlock()
		if len(p) == 0 {
			return 0, nil
		}
		select {
		case <-nc.rready:
		case <-nc.rdl.done():
		case <-nc.done:
		}
	}
}

// Write copies p for the loop to send and returns once all of it is taken.
// It blocks while the write buffer is full, which happens when the
// connection is over its high watermark (the peer reads slower than we
// write), until the write deadline (os.ErrDeadlineExceeded). Bytes a Write
// took are sent before Close closes the socket; if the connection fails
// first, a later Write or Read reports why.
func (nc *Conn) Write(p []byte) (int, error) {
	nc.wmu.Lock()
	defer nc.wmu.Unlock()
	n := 0
	for {
		nc.mu.Lock()
		if err := nc.writeErr(); err != nil {
			nc.mu.Unlock()
			return n, nc.opError("write", err)
		}
		if nc.wdl.passed() {
			nc.mu.Unlock()
			return n, nc.opError("write", os.ErrDeadlineExceeded)
		}
		if n == len(p) {
			nc.mu.Unlock()
			return n, nil
		}
		if room := nc.cfg.writeLimit - len(nc.wbuf); room > 0 {
			k := min(room, len(p)-n)
			nc.wbuf = append(nc.wbuf, p[n:n+k]...)
			n += k
			kick := !nc.owed
			nc.owed = true
			nc.mu.Unlock()
			if kick {
				if err := loopctl.Run(nc.loop, &nc.moveT); err != nil { // the loop shut down
					// Nothing was owed before, so wbuf holds only these k bytes.
					nc.mu.Lock()
					nc.wbuf, nc.owed = nc.wbuf[:0], false
					nc.mu.Unlock()
					return n - k, nc.opError("write", err)
				}
			}
			if n == len(p) {
				return n, nil
			}
			continue
		}
		nc.mu.Unlock()
		select {
		case <-nc.wready:
		case <-nc.wdl.done():
		case <-nc.done:
		}
	}
}

// writeErr says why Write cannot go on (with nc.mu held).
func (nc *Conn) writeErr() error {
	switch {
	case nc.closed:
		return net.ErrClosed
	case nc.wshut:
		return syscall.EPIPE
	}
	return nc.werr
}

// Close closes the connection: pending Reads and Writes return at once, and
// the loop sends what Writes took, then closes the socket.
func (nc *Conn) Close() error {
	nc.mu.Lock()
	if nc.closed {
		nc.mu.Unlock()
		return nc.opError("close", net.ErrClosed)
	}
	nc.closed = true
	nc.rbuf, nc.roff = nil, 0
	close(nc.done)
	nc.mu.Unlock()
	nc.deadlines.stop()
	// Refused only once the loop has shut down, which closed the socket.
	_ = loopctl.Run(nc.loop, &nc.closeT)
	return nil
}

// CloseWrite shuts down the sending side once what Writes took is sent;
// the peer reads EOF, and Read goes on.
func (nc *Conn) CloseWrite() error {
	nc.mu.Lock()
	if nc.closed {
		nc.mu.Unlock()
		return nc.opError("close", net.ErrClosed)
	}
	already := nc.wshut
	nc.wshut = true
	nc.mu.Unlock()
	if already {
		return nil
	}
	if err := loopctl.Run(nc.loop, &nc.closeWriteT); err != nil { // the loop shut down
		return nc.opError("close", err)
	}
	return nil
}

// LocalAddr returns the local address.
func (nc *Conn) LocalAddr() net.Addr { return nc.laddr }

// RemoteAddr returns the peer's address.
func (nc *Conn) RemoteAddr() net.Addr { return nc.raddr }

// Loop returns the loop that serves the connection.
func (nc *Conn) Loop() *engine.Loop { return nc.loop }

func (nc *Conn) opError(op string, err error) error {
	return &net.OpError{Op: op, Net: nc.network, Source: nc.laddr, Addr: nc.raddr, Err: err}
}

// The loop's side. These run on the connection's loop, from its handler
// callbacks or as its tasks.

// attach binds the engine connection (OnOpen).
func (nc *Conn) attach(c *engine.Conn, addrs bool) {
	nc.c = c
	if addrs {
		nc.laddr, nc.raddr = c.LocalAddr(), c.RemoteAddr()
	}
}

func (nc *Conn) onData(b []byte) {
	nc.mu.Lock()
	if nc.closed {
		nc.mu.Unlock()
		return
	}
	if nc.roff > 0 && len(nc.rbuf)+len(b) > cap(nc.rbuf) {
		nc.rbuf = nc.rbuf[:copy(nc.rbuf, nc.rbuf[nc.roff:])]
		nc.roff = 0
	}
	nc.rbuf = append(nc.rbuf, b...)
	if !nc.rpaused && len(nc.rbuf)-nc.roff >= nc.cfg.readLimit {
		nc.rpaused = true
		nc.c.PauseRead()
	}
	nc.mu.Unlock()
	signal(nc.rready)
}

// resume reads again once Read has drained the buffer to half its limit.
func (nc *Conn) resume() {
	nc.mu.Lock()
	nc.resuming = false
	again := nc.rpaused && len(nc.rbuf)-nc.roff < nc.cfg.readLimit
	nc.rpaused = nc.rpaused && !again
	nc.mu.Unlock()
	if again {
		nc.c.ResumeRead()
	}
}

func (nc *Conn) moveOut() { nc.move(false) }

// move hands the write buffer to the engine connection, unless that is over
// its high watermark (then OnWritabilityChanged calls it again) and force
// is off, and wakes a waiting Write.
func (nc *Conn) move(force bool) {
	if !force && !nc.c.Writable() {
		return
	}
	nc.mu.Lock()
	if len(nc.wbuf) > 0 {
		if _, err := nc.c.Write(nc.wbuf); err != nil && nc.werr == nil {
			nc.werr = err
		}
		nc.wbuf = nc.wbuf[:0]
	}
	nc.owed = false
	nc.mu.Unlock()
	signal(nc.wready)
}

func (nc *Conn) closeOnLoop() {
	nc.move(true)
	_ = nc.c.Close()
}

func (nc *Conn) closeWriteOnLoop() {
	nc.move(true)
	_ = nc.c.CloseWrite()
}

// onReadClosed: the peer shut down its sending side.
func (nc *Conn) onReadClosed() {
	nc.mu.Lock()
	if nc.rerr == nil {
		nc.rerr = io.EOF
	}
	nc.mu.Unlock()
	signal(nc.rready)
}

// onClose: the socket is closed, for err.
func (nc *Conn) onClose(err error) {
	if err == nil { // closed from this side: reads and writes now fail as net's do
		err = engine.ErrConnClosed
	}
	nc.mu.Lock()
	if nc.rerr == nil {
		nc.rerr = err
	}
	if nc.werr == nil {
		nc.werr = err
		if err == io.EOF || errors.Is(err, engine.ErrConnClosed) {
			nc.werr = syscall.EPIPE
		}
	}
	nc.wbuf, nc.owed = nil, false
	nc.mu.Unlock()
	signal(nc.rready)
	signal(nc.wready)
}

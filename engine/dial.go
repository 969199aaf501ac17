package engine

import (
	"context"
	"errors"
	"fmt"
	"time"

	"golang.org/x/sys/unix"

	"github.com/ringloop/ringloop/driver"
	"github.com/ringloop/ringloop/tasks"
)

// DefaultConnectTimeout applies when Dial's context has no deadline (Netty's
// CONNECT_TIMEOUT_MILLIS default).
const DefaultConnectTimeout = 30 * time.Second

var (
	// ErrConnectTimeout: the connect did not finish before its deadline.
	ErrConnectTimeout = errors.New("engine: connect timeout")
	// errConnectDeadline is what a Dial past its deadline fails with: both
	// ErrConnectTimeout and context.DeadlineExceeded.
	errConnectDeadline = fmt.Errorf("%w: %w", ErrConnectTimeout, context.DeadlineExceeded)
	errNilHandler      = errors.New("engine: nil handler")
	errDialOnLoop      = errors.New("engine: Dial would block its own loop; use DialAsync there")
)

// Dial connects to addr from loop l and waits for the connection; h serves
// it (OnOpen runs on the loop). The connect timeout is ctx's deadline, else
// DefaultConnectTimeout, kept on the loop's timer heap; cancelling ctx
// cancels the connect. Call DialAsync from the loop itself.
func Dial(ctx context.Context, l *Loop, network, addr string, h Handler, opts ...ConnOption) (*Conn, error) {
	if l.InEventLoop() {
		return nil, errDialOnLoop
	}
	return DialAsync(ctx, l, network, addr, h, opts...).Await(context.Background())
}

// DialAsync starts a connect and returns a future of the connection; usable
// from any goroutine, the loop included.
func DialAsync(ctx context.Context, l *Loop, network, addr string, h Handler, opts ...ConnOption) tasks.Future[*Conn] {
	p := tasks.NewPromise[*Conn](l)
	if h == nil {
		p.Fail(errNilHandler)
		return p
	}
	if err := ctx.Err(); err != nil {
		p.Fail(err)
		return p
	}
	cfg, err := newConnConfig(network, opts)
	if err != nil {
		p.Fail(err)
		return p
	}
	family, sa, err := resolve(network, addr)
	if err != nil {
		p.Fail(err)
		return p
	}
	fd, err := newSocket(family)
	if err != nil {
		p.Fail(err)
		return p
	}
	if err := applyConnOptions(fd, family, cfg, true); err != nil {
		unix.Close(fd)
		p.Fail(err)
		return p
	}
	deadline := time.Now().Add(DefaultConnectTimeout)
	if d, ok := ctx.Deadline(); ok {
		deadline = d
	}
	start := func() {
		if l.IsShuttingDown() {
			unix.Close(fd)
			p.Fail(ErrShutdown)
			return
		}
		c := newConn(l, fd, h, cfg)
		c.dial = p
		c.st = connConnecting
		c.connArmed = true
		l.drv.Connect(fd, c.tag(opConnect), sa)
		c.idle.Init(&connectTimeout{c: c, err: errConnectDeadline})
		l.heap.Start(&c.idle, now()+int64(time.Until(deadline)))
		if ctx.Done() != nil {
			stop := context.AfterFunc(ctx, func() {
				err := fmt.Errorf("engine: dial: %w", ctx.Err())
				if errors.Is(ctx.Err(), context.DeadlineExceeded) {
					err = errConnectDeadline
				}
				_ = l.ExecuteFunc(func() { c.cancelConnect(err) })
			})
			c.stopDialCtx = stop
		}
	}
	if l.InEventLoop() {
		start()
	} else if err := l.ExecuteFunc(start); err != nil {
		unix.Close(fd)
		p.Fail(err)
	}
	return p
}

// connectTimeout cancels a connect at its deadline.
type connectTimeout struct {
	c   *Conn
	err error
}

func (t *connectTimeout) Run() { t.c.cancelConnect(t.err) }

func (c *Conn) cancelConnect(err error) {
	if c.st != connConnecting || !c.connArmed {
		return
	}
	c.closeErr = err
	c.loop.drv.Cancel(c.fd, c.tag(opConnect))
}

func (c *Conn) onConnect(comp *driver.Completion) {
	c.connArmed = false
	c.loop.heap.Stop(&c.idle)
	if c.stopDialCtx != nil {
		c.stopDialCtx()
		c.stopDialCtx = nil
	}
	if comp.Res == 0 && c.st == connConnecting {
		c.idle.Init(&c.idleTask)
		p := c.dial
		c.dial = nil
		p.Succeed(c)
		c.open()
		return
	}
	if c.closeErr == nil {
		c.closeErr = fmt.Errorf("engine: connect: %w", comp.Err())
	}
	c.finish()
	c.maybeRelease()
}

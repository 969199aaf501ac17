package engine

import (
	"context"
	"errors"
	"net"
	"net/netip"
	"os"
	"time"

	"golang.org/x/sys/unix"

	"github.com/ringloop/ringloop/internal/driver"
	"github.com/ringloop/ringloop/tasks"
)

// defaultConnectTimeout applies when Dial's context has no deadline (Netty's
// CONNECT_TIMEOUT_MILLIS default).
const defaultConnectTimeout = 30 * time.Second

var (
	errNilHandler = errors.New("engine: nil handler")
	errDialOnLoop = errors.New("engine: Dial would block its own loop; use DialAsync there")
)

// Dial connects to addr from loop l and waits for the connection; h serves
// it (OnOpen runs on the loop). The connect timeout is ctx's deadline, else
// 30 s (Netty's CONNECT_TIMEOUT_MILLIS), kept on the loop's timer heap; cancelling ctx
// cancels the connect. Call DialAsync from the loop itself.
//
// Its errors are *net.OpError with Op "dial", as net.Dial's: the connect's
// errno inside an *os.SyscallError ("dial tcp 127.0.0.1:1: connect:
// connection refused"); past the deadline an error that is a Timeout() and
// matches context.DeadlineExceeded and os.ErrDeadlineExceeded; on a cancel,
// ctx's error; ErrShutdown once the loop has shut down.
func Dial(ctx context.Context, l *Loop, network, addr string, h Handler, opts ...ConnOption) (*Conn, error) {
	if l.InEventLoop() {
		return nil, errDialOnLoop
	}
	return DialAsync(ctx, l, network, addr, h, opts...).Await(context.Background())
}

// DialAsync starts a connect and returns a future of the connection; usable
// from any goroutine, the loop included: it never blocks. A host name is
// resolved on another goroutine (with WithResolver's resolver, honouring
// ctx), and each address it resolves to is tried in turn until one
// connects; the future fails with the last address's error. ctx's deadline
// (else 30 s) bounds the whole dial.
func DialAsync(ctx context.Context, l *Loop, network, addr string, h Handler, opts ...ConnOption) tasks.Future[*Conn] {
	p := tasks.NewPromise[*Conn](l)
	if h == nil {
		p.Fail(errNilHandler)
		return p
	}
	if err := ctx.Err(); err != nil {
		p.Fail(opError("dial", network, nil, nil, ctxError(err)))
		return p
	}
	cfg, err := newConnConfig(network, opts)
	if err != nil {
		p.Fail(opError("dial", network, nil, nil, err))
		return p
	}
	d := &dialer{ctx: ctx, l: l, h: h, cfg: cfg, p: p, deadline: time.Now().Add(defaultConnectTimeout)}
	if dl, ok := ctx.Deadline(); ok {
		d.deadline = dl
	}
	targets, literal, err := literalTargets(network, addr)
	if err != nil {
		p.Fail(opError("dial", network, nil, nil, err))
		return p
	}
	if literal {
		d.targets = targets
		d.start()
		return p
	}
	go d.resolve(network, addr)
	return p
}

// dialTarget is one address to try.
type dialTarget struct {
	family int
	sa     unix.Sockaddr
}

// dialer is one DialAsync: its addresses, the attempt under way, its promise.
type dialer struct {
	ctx      context.Context
	l        *Loop
	h        Handler
	cfg      *connConfig
	p        *tasks.Promise[*Conn]
	deadline time.Time
	targets  []dialTarget
	next     int // the next target to try
	cur      *Conn
	retry    bool // the current attempt failed on its own: try the next target
	stopCtx  func() bool
}

// literalTargets handles the addresses that need no lookup: a Unix path, an
// IP literal, an empty host (the wildcard).
func literalTargets(network, addr string) ([]dialTarget, bool, error) {
	if network == "unix" {
		return []dialTarget{{unix.AF_UNIX, &unix.SockaddrUnix{Name: addr}}}, true, nil
	}
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, false, err
	}
	if _, perr := netip.ParseAddr(host); perr != nil && host != "" {
		return nil, false, nil
	}
	family, sa, err := resolve(network, addr)
	if err != nil {
		return nil, false, err
	}
	return []dialTarget{{family, sa}}, true, nil
}

// resolve looks the host name up off the loop, then starts the attempts.
func (d *dialer) resolve(network, addr string) {
	host, portStr, _ := net.SplitHostPort(addr)
	r := d.cfg.resolver
	if r == nil {
		r = net.DefaultResolver
	}
	ctx, cancel := context.WithDeadline(d.ctx, d.deadline)
	defer cancel()
	port, err := r.LookupPort(ctx, network, portStr)
	if err != nil {
		d.fail(err)
		return
	}
	ipNet := map[string]string{"tcp": "ip", "tcp4": "ip4", "tcp6": "ip6"}[network]
	ips, err := r.LookupNetIP(ctx, ipNet, host)
	if err != nil {
		if ctx.Err() != nil {
			err = ctxError(ctx.Err())
		}
		d.fail(err)
		return
	}
	for _, ip := range ips {
		ip = ip.Unmap()
		switch {
		case ip.Is4() && network != "tcp6":
			d.targets = append(d.targets, dialTarget{unix.AF_INET, &unix.SockaddrInet4{Port: port, Addr: ip.As4()}})
		case ip.Is6() && network != "tcp4":
			d.targets = append(d.targets, dialTarget{unix.AF_INET6, &unix.SockaddrInet6{Port: port, Addr: ip.As16()}})
		}
	}
	if len(d.targets) == 0 {
		d.fail(&net.AddrError{Err: "no suitable address found", Addr: host})
		return
	}
	d.start()
}

// start runs the first attempt on the loop.
func (d *dialer) start() {
	if d.ctx.Done() != nil {
		d.stopCtx = context.AfterFunc(d.ctx, func() {
			err := ctxError(d.ctx.Err())
			// The control ring: a full task ring cannot drop the cancel.
			// Refused only once the loop has shut down, which ends the
			// connect itself.
			_ = d.l.control(tasks.Func(func() {
				if d.cur != nil {
					d.cur.cancelConnect(err)
				}
			}))
		})
	}
	if d.l.InEventLoop() {
		d.try(nil)
	} else if err := d.l.control(tasks.Func(func() { d.try(nil) })); err != nil {
		d.fail(err)
	}
}

// try connects to the next target, skipping those whose socket cannot be
// made; with none left it fails the dial with lastErr (on the loop).
func (d *dialer) try(lastErr error) {
	l := d.l
	for d.next < len(d.targets) {
		if l.State() >= ShuttingDown {
			d.fail(ErrShutdown)
			return
		}
		if err := d.ctx.Err(); err != nil {
			d.fail(ctxError(err))
			return
		}
		t := d.targets[d.next]
		d.next++
		fd, err := newSocket(t.family)
		if err != nil {
			lastErr = err
			continue
		}
		if err := applyConnOptions(fd, t.family, d.cfg, true); err != nil {
			unix.Close(fd)
			lastErr = err
			continue
		}
		c := newConn(l, fd, d.h, d.cfg)
		c.dialer, d.cur, d.retry = d, c, false
		c.st = connConnecting
		c.set(flagConnArmed)
		l.drv.Connect(fd, c.tag(driver.OpConnect), t.sa)
		c.idle.Init(&connectTimeout{c: c})
		l.heap.Start(&c.idle, now()+int64(time.Until(d.deadline)))
		return
	}
	d.fail(lastErr)
}

// fail fails the dial with err as an *net.OpError naming the address
// tried last, else the first to try (none when a lookup failed).
func (d *dialer) fail(err error) {
	if d.stopCtx != nil {
		d.stopCtx()
	}
	var addr net.Addr
	if len(d.targets) > 0 {
		addr = sockaddrToAddr(d.targets[max(d.next-1, 0)].sa, d.cfg.network)
	}
	d.p.Fail(opError("dial", d.cfg.network, nil, addr, err))
}

// ended follows an attempt's connection to its release: the next target is
// tried when the connect itself failed (refused, unreachable), not when it
// was cancelled or timed out.
func (d *dialer) ended(err error) {
	d.cur = nil
	if d.retry && d.next < len(d.targets) {
		d.try(err)
		return
	}
	d.fail(err)
}

// connectTimeout cancels a connect at its deadline.
type connectTimeout struct{ c *Conn }

func (t *connectTimeout) Run() { t.c.cancelConnect(timeoutError{}) }

func (c *Conn) cancelConnect(err error) {
	if c.st != connConnecting || !c.has(flagConnArmed) {
		return
	}
	c.closeErr = err
	c.loop.drv.Cancel(c.fd, c.tag(driver.OpConnect))
}

func (c *Conn) onConnect(comp *driver.Completion) {
	c.clear(flagConnArmed)
	c.loop.heap.Stop(&c.idle)
	d := c.dialer
	if comp.Res == 0 && c.st == connConnecting {
		if d.stopCtx != nil {
			d.stopCtx()
		}
		c.dialer, d.cur = nil, nil
		c.idle.Init(&c.idleTask)
		c.fillAddrs() // before the future publishes c
		d.p.Succeed(c)
		c.open()
		return
	}
	if c.closeErr == nil {
		d.retry = true
		c.closeErr = os.NewSyscallError("connect", comp.Err())
	}
	c.finish()
	c.maybeRelease()
}

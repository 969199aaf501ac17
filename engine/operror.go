package engine

import (
	"context"
	"errors"
	"net"
	"os"
)

// Listen, accept and dial errors are *net.OpError, as net's are, so they read
// the same ("listen tcp 127.0.0.1:8080: bind: address already in use") and
// code written for net (errors.As to *net.OpError, Timeout(), errors.Is with
// an errno) works unchanged.

// opError wraps err as an *net.OpError for op on network; an error that
// already is one is returned as it is.
func opError(op, network string, source, addr net.Addr, err error) error {
	if err == nil {
		return nil
	}
	var oe *net.OpError
	if errors.As(err, &oe) {
		return err
	}
	return &net.OpError{Op: op, Net: network, Source: source, Addr: addr, Err: err}
}

// timeoutError is the error inside a dial's *net.OpError once its deadline
// passed: net's own text, a Timeout() of true, and errors.Is holds for both
// context.DeadlineExceeded (what net's dial errors match) and
// os.ErrDeadlineExceeded (what a net.Conn's deadlines return).
type timeoutError struct{}

func (timeoutError) Error() string   { return "i/o timeout" }
func (timeoutError) Timeout() bool   { return true }
func (timeoutError) Temporary() bool { return true }

func (timeoutError) Is(target error) bool {
	return target == context.DeadlineExceeded || target == os.ErrDeadlineExceeded
}

// ctxError maps a dial's context error as net does: a deadline is a timeout.
func ctxError(err error) error {
	if errors.Is(err, context.DeadlineExceeded) {
		return timeoutError{}
	}
	return err
}

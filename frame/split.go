package frame

import (
	"bufio"
	"errors"
	"fmt"
	"strings"

	"github.com/ringloop/ringloop/engine"
)

// Handler receives a connection's frames; like engine.Handler, its
// callbacks run on the connection's loop one at a time. It may also
// implement engine.WritabilityHandler, engine.IdleHandler and
// engine.ShutdownHandler, which are passed on (engine.HalfCloseHandler is
// not: the connection closes at the peer's FIN).
type Handler interface {
	OnOpen(c *engine.Conn)
	// OnFrame is called with each whole frame (the token of the split
	// function); frame is valid only during the call.
	OnFrame(c *engine.Conn, frame []byte)
	// OnClose is called once, as engine.Handler's OnClose, with why:
	// io.ErrUnexpectedEOF when the peer closed in the middle of a frame
	// (c.Kept returns its bytes), the split function's error wrapped in
	// ErrSplit when it refused the input.
	OnClose(c *engine.Conn, err error)
}

// Split returns an engine.Handler that splits each connection's bytes with
// split (always called with atEOF false: a connection's frames are answered
// while it is open, and bytes left at the peer's close are an unfinished
// frame) and hands every frame to h. A split error ends the connection (its
// output is flushed first) with that error wrapped in ErrSplit;
// bufio.ErrFinalToken delivers its token and closes the connection.
//
// The connection's keep limit (engine.BufferLimits.Keep) bounds the bytes of an
// unfinished frame. With LengthPrefixed or Delimited the split function's
// own maximum governs instead: each connection's keep limit is raised at
// OnOpen to hold the largest frame the function accepts (never lowered), so
// the maximum given is the one that applies. Other split functions are bounded
// by the keep limit, and a frame over it ends the connection with an error
// wrapping engine.ErrKeepLimit.
func Split(split bufio.SplitFunc, h Handler) engine.Handler {
	s := &splitter{split: split, h: h, bound: boundOf(split)}
	if ih, ok := h.(engine.IdleHandler); ok {
		return &idleSplitter{s, ih}
	}
	return s
}

// ErrSplit wraps the errors a split function returns and the ones it causes
// (a negative or too far advance).
var ErrSplit = errors.New("frame: split")

// splitError is a split function's error wrapped in ErrSplit. Its text
// says "frame: split: " once, whatever package prefix the cause has
// ("frame: split: too long: ...", not "frame: split: frame: frame too
// long: ...").
type splitError struct{ err error }

func (e *splitError) Error() string {
	return "frame: split: " + strings.TrimPrefix(e.err.Error(), "frame: ")
}
func (e *splitError) Unwrap() error        { return e.err }
func (e *splitError) Is(target error) bool { return target == ErrSplit }

type splitter struct {
	split bufio.SplitFunc
	h     Handler
	bound int // the largest unfinished frame split accepts (bounded split functions), else 0
}

func (s *splitter) OnOpen(c *engine.Conn) {
	if s.bound > c.KeepLimit() {
		_ = c.SetKeepLimit(s.bound) // on the loop, positive: cannot fail
	}
	s.h.OnOpen(c)
}

func (s *splitter) OnData(c *engine.Conn, b []byte) {
	rest, err := s.frames(c, b)
	if err != nil {
		_ = c.CloseWithError(err)
		return
	}
	if err := c.Keep(rest); err != nil {
		// err names the sizes and the limit (engine.ErrKeepLimit).
		_ = c.CloseWithError(fmt.Errorf("frame: an unfinished frame does not fit: %w", err))
	}
}

// frames hands every whole frame of b to the handler and returns the rest.
// It stops where the connection stops reading (the handler paused it or
// closed it).
func (s *splitter) frames(c *engine.Conn, b []byte) (rest []byte, err error) {
	for len(b) > 0 && c.Reading() {
		adv, tok, err := s.split(b, false)
		final := errors.Is(err, bufio.ErrFinalToken)
		switch {
		case err != nil && !final:
			return nil, &splitError{err}
		case adv < 0:
			return nil, &splitError{bufio.ErrNegativeAdvance}
		case adv > len(b):
			return nil, &splitError{bufio.ErrAdvanceTooFar}
		}
		if adv == 0 && tok == nil && !final {
			break // needs more bytes
		}
		b = b[adv:]
		if tok != nil {
			s.h.OnFrame(c, tok)
		}
		if final {
			_ = c.Close()
			return nil, nil
		}
		if adv == 0 && len(tok) == 0 {
			// An empty token that consumes nothing would repeat forever
			// (bufio.Scanner allows a few); take it as "needs more".
			break
		}
	}
	return b, nil
}

func (s *splitter) OnClose(c *engine.Conn, err error) { s.h.OnClose(c, err) }

func (s *splitter) OnWritabilityChanged(c *engine.Conn, writable bool) {
	if wh, ok := s.h.(engine.WritabilityHandler); ok {
		wh.OnWritabilityChanged(c, writable)
	}
}

func (s *splitter) OnShutdown(c *engine.Conn) {
	if sh, ok := s.h.(engine.ShutdownHandler); ok {
		sh.OnShutdown(c)
	}
}

// idleSplitter passes idle events on to a handler that takes them; one that
// does not is closed by the engine when an idle timeout fires.
type idleSplitter struct {
	*splitter
	ih engine.IdleHandler
}

func (s *idleSplitter) OnIdle(c *engine.Conn, k engine.IdleKind) { s.ih.OnIdle(c, k) }

package frame

import (
	"bufio"
	"errors"
	"fmt"

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
func Split(split bufio.SplitFunc, h Handler) engine.Handler {
	s := &splitter{split: split, h: h}
	if ih, ok := h.(engine.IdleHandler); ok {
		return &idleSplitter{s, ih}
	}
	return s
}

// ErrSplit wraps the errors a split function returns and the ones it causes
// (a negative or too far advance).
var ErrSplit = errors.New("frame: split")

type splitter struct {
	split bufio.SplitFunc
	h     Handler
}

func (s *splitter) OnOpen(c *engine.Conn) { s.h.OnOpen(c) }

func (s *splitter) OnData(c *engine.Conn, b []byte) {
	rest, err := s.frames(c, b)
	if err != nil {
		_ = c.CloseWithError(err)
		return
	}
	if err := c.Keep(rest); err != nil {
		_ = c.CloseWithError(fmt.Errorf("frame: %d bytes without a whole frame: %w", len(rest), err))
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
			return nil, fmt.Errorf("%w: %w", ErrSplit, err)
		case adv < 0:
			return nil, fmt.Errorf("%w: %w", ErrSplit, bufio.ErrNegativeAdvance)
		case adv > len(b):
			return nil, fmt.Errorf("%w: %w", ErrSplit, bufio.ErrAdvanceTooFar)
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

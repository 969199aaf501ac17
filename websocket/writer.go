package websocket

import (
	"bytes"
	"errors"
)

// Errors of NextWriter and MessageWriter.
var (
	// ErrMessageOpen: a message NextWriter opened is being sent, and no
	// other data frame may come between its fragments (RFC 6455 §5.4):
	// WriteMessage on the loop and a second NextWriter wait for its Close.
	ErrMessageOpen   = errors.New("websocket: a fragmented message is being sent (close its MessageWriter first)")
	errWriterOffLoop = errors.New("websocket: NextWriter and MessageWriter run on the connection's loop only")
	errWriterDone    = errors.New("websocket: MessageWriter used after its Close")
	errWriterText    = errors.New("websocket: text message is not UTF-8")
)

// MessageWriter sends one message in fragments: each Write is a frame, and
// Close sends the final one. It lives in its Conn (NextWriter allocates
// nothing), so it is valid until its Close: after it the next NextWriter
// hands out the same value for the next message.
//
// While it is open no other data frame may be put between its fragments:
// WriteMessage on the loop returns ErrMessageOpen; AsyncWriteMessage from
// other goroutines is accepted as usual (within the async write limit, which
// the held frames count against) and sent behind the message once it is
// closed; a Hub broadcast waits with them (or, past that limit, the member
// misses it, counted in Hub.Stats' Dropped); so does a Ping called off the loop.
// Control frames sent on the loop (Ping, the answer to the peer's pings,
// Close) may come between fragments, as the RFC allows.
//
// A close of the connection while a message is open (Close, a protocol
// failure, the loop's shutdown) ends it unfinished: the close frame follows
// the fragments sent, the peer drops the partial message, and the
// AsyncWriteMessage frames held behind it are dropped too (they could not
// follow the close frame; OnClose's error then wraps ErrAsyncDropped with
// their size). A message left open holds those frames back
// until the connection closes.
//
// Text: the message as a whole must be UTF-8, and a fragment may split a
// code point. Write refuses, sending nothing, bytes that cannot continue
// valid UTF-8, and Close refuses to end the message inside a code point;
// in both cases the message stays open.
//
// Compression: on a connection that negotiated permessage-deflate every
// fragmented message is compressed (its size is not known up front to
// compare with the 64-byte threshold): RSV1 on its first frame, and its
// frames' payloads together are one deflate stream, sync-flushed at each
// Write so that each fragment can be inflated as it arrives. The message
// holds a pooled compressor from NextWriter to Close.
type MessageWriter struct {
	c       *Conn
	kind    MessageKind
	open    bool
	started bool // the first frame, with the kind's opcode, is sent
	text    utf8Checker
	d       *deflater // the message's compressor, when compressed
	release func()    // ends the connection's HoldAsync
}

// NextWriter opens a message of kind to be sent in fragments, for a message
// whose size is not known in advance or that is too large to hold whole.
// On the loop only (a handler's callback or a task on its loop). It returns
// ErrMessageOpen while the previous message is open, ErrClosed once a close
// frame was sent.
//
// Why a writer rather than a WriteFragment(kind, p, final) call: it is an
// io.WriteCloser, so io.Copy, a json.Encoder or a template can stream a
// message, and the state a fragmented message needs (its kind, the text
// check, the compressor) has one owner that ends it.
func (c *Conn) NextWriter(kind MessageKind) (*MessageWriter, error) {
	switch {
	case kind != Text && kind != Binary:
		return nil, errBadKind
	case !c.ec.Loop().InEventLoop():
		return nil, errWriterOffLoop
	case c.closeSent || c.closeDone || c.ended:
		return nil, ErrClosed
	case c.wr.open:
		return nil, ErrMessageOpen
	}
	c.wr = MessageWriter{c: c, kind: kind, open: true}
	if c.deflate {
		d := deflaters.Get().(*deflater)
		d.buf.Reset()
		d.fw.Reset(&d.buf)
		c.wr.d = d
	}
	c.wr.release, _ = c.ec.HoldAsync() // on the loop (checked above): cannot fail
	return &c.wr, nil
}

// Write sends p as the message's next frame (the first carries the kind):
// copied into the connection's output like WriteMessage's frame, with the
// same backpressure (the watermarks, the slow-consumer policy). An empty p
// sends an empty fragment. It returns ErrClosed once the connection is
// closing.
func (w *MessageWriter) Write(p []byte) (int, error) {
	if err := w.usable(); err != nil {
		return 0, err
	}
	if w.kind == Text {
		t := w.text
		if !t.write(p) {
			return 0, errWriterText
		}
		w.text = t
	}
	if err := w.frame(false, p); err != nil {
		return 0, err
	}
	return len(p), nil
}

// Close sends the final frame (empty, or for a compressed message the end
// of its deflate stream) and lets the frames held behind the message go.
func (w *MessageWriter) Close() error {
	if err := w.usable(); err != nil {
		return err
	}
	if w.kind == Text && w.text.need != 0 {
		return errWriterText // the last code point is unfinished
	}
	err := w.frame(true, nil)
	if w.open { // a failed write may have closed the connection, and ended w
		w.end()
	}
	return err
}

func (w *MessageWriter) usable() error {
	c := w.c
	switch {
	case c == nil:
		return errWriterDone
	case !c.ec.Loop().InEventLoop():
		return errWriterOffLoop
	case c.closeSent || c.closeDone:
		return ErrClosed
	case !w.open:
		return errWriterDone
	}
	return nil
}

// frame writes the message's next frame; fin ends it.
func (w *MessageWriter) frame(fin bool, p []byte) error {
	op := opContinuation
	if !w.started {
		op = opcode(w.kind)
	}
	rsv1 := w.d != nil && !w.started
	w.started = true
	if d := w.d; d != nil {
		d.buf.Reset()
		_, _ = d.fw.Write(p) // a bytes.Buffer does not fail
		_ = d.fw.Flush()
		p = d.buf.Bytes()
		if fin {
			// The sync flush's empty block ends the stream; its
			// 00 00 ff ff is removed as for a whole message (RFC 7692
			// §7.2.1), and the receiver puts it back.
			p = p[:len(p)-4]
		}
	}
	err := w.c.writeRaw(fin, rsv1, op, p)
	if err != nil && (w.c.closeSent || w.c.closeDone) {
		err = ErrClosed // the write closed it (CloseSlow) or found it closing
	}
	return err
}

// end closes the message: the compressor goes back to the pool and the
// held frames go out (unless a close discarded them).
func (w *MessageWriter) end() {
	w.open = false
	if d := w.d; d != nil {
		w.d = nil
		if d.buf.Cap() > maxPooledFrame {
			d.buf = bytes.Buffer{}
		}
		deflaters.Put(d)
	}
	w.release()
}

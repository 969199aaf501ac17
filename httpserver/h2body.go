package httpserver

import "net/http"

// A streamed request body over HTTP/2: the stream's DATA frames fill the
// window of a Body, whose reader is HTTP/1.1's (Read, Close, Trailer),
// and the bytes its reader takes go back to the client as window
// (release): a handler that does not read holds the client to its
// stream's window, and one that reads keeps the upload flowing. The
// reader tells the loop what it took through Body's wake task once it has
// taken a frame's worth, or all there was.

// newBody makes the stream's streamed body.
func (st *h2Stream) newBody() *Body {
	cs := st.hc.cs
	bs := &Body{loop: cs.c.Loop(), st: st, expect: st.expect, owed: st.expect, limit: cs.s.cfg.maxStreamBody}
	bs.cond.L = &bs.mu
	return bs
}

// put appends DATA to the body's window (which the stream's window bounds
// to h2StreamWindow); a closed body's are dropped, and one past
// Limits.StreamedBody ends in *http.MaxBytesError.
func (st *h2Stream) put(data []byte) {
	bs := st.body
	n := int64(len(data))
	if st.received > bs.limit {
		bs.fail(&http.MaxBytesError{Limit: bs.limit})
	}
	bs.mu.Lock()
	if bs.closed || bs.err != nil {
		bs.mu.Unlock()
		st.discard = true
		n += st.inWin
		st.inWin = 0
		st.release(n)
		st.hc.release(n)
		return
	}
	switch {
	case bs.r == len(bs.win):
		bs.win, bs.r = bs.win[:0], 0
	case bs.r > 0 && cap(bs.win)-len(bs.win) < len(data):
		bs.win = bs.win[:copy(bs.win, bs.win[bs.r:])]
		bs.r = 0
	}
	bs.win = append(bs.win, data...)
	st.inWin += n
	st.watch()
	bs.cond.Broadcast()
	bs.mu.Unlock()
}

// watch sets, under the body's lock, when its reader wakes the loop: once
// it has taken a frame's worth of what the loop last knew of, or all of
// it.
func (st *h2Stream) watch() {
	bs := st.body
	bs.stalled = st.inWin > 0
	bs.low = int(max(st.inWin-h2MaxFrame, 0))
}

// bodyWake is the loop's side of the reader's wake: the "100 Continue" a
// client asked for, and the window the reader made room in.
func (st *h2Stream) bodyWake(owed bool) {
	hc := st.hc
	if st.closed || hc.dead {
		return
	}
	if owed && !st.headSent {
		hc.writeHead(st.id, http.StatusContinue, nil, -1, false, false)
	}
	bs := st.body
	bs.mu.Lock()
	taken := st.inWin - int64(len(bs.win)-bs.r)
	st.inWin -= taken
	st.watch()
	bs.mu.Unlock()
	st.release(taken)
	hc.release(taken)
	st.touchRead(0)
}

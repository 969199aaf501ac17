package httpserver

import "github.com/ringloop/ringloop/engine"

// Parsed is a test's view of what the parser read from the first request of
// some bytes.
type Parsed struct {
	Method, Target, Proto string
	Header, Trailer       [][2]string // name and value as sent, in order
	Body                  []byte
	Chunked               bool
	End                   int // bytes the request took
}

// ParseFirst runs the parser over data delivered in two pieces (split at
// split, clamped), as a connection would, and returns the first request, the
// refusal status (0: none), or complete=false when data ends first.
func ParseFirst(data []byte, split int) (pr *Parsed, status int, complete bool) {
	return ParseFirstLimits(data, split, 64<<10)
}

// ParseFirstLimits is ParseFirst with another body limit.
func ParseFirstLimits(data []byte, split, maxBody int) (pr *Parsed, status int, complete bool) {
	lim := &limits{maxHeaderBytes: 4096, maxHeaders: 100, maxLine: 2048, maxBody: maxBody}
	p := &parser{lim: lim}
	split = max(0, min(split, len(data)))
	buf := append([]byte(nil), data[:split]...)
	step := func() (bool, *parseError) {
		if p.headEnd == 0 {
			done, err := p.head(buf)
			if err != nil || !done {
				return false, err
			}
			if err := p.limitBody(int64(maxBody)); err != nil {
				return false, err
			}
		}
		switch p.kind {
		case bodyLength:
			return len(buf) >= int(p.body.hi), nil
		case bodyChunked:
			return p.chunks(buf)
		}
		return true, nil
	}
	done, err := step()
	if err == nil && !done {
		buf = append(buf, data[split:]...)
		done, err = step()
	}
	if err != nil {
		return nil, err.code, true
	}
	if !done {
		return nil, 0, false
	}
	r := &Request{b: buf, p: p}
	pr = &Parsed{Method: string(r.MethodBytes()), Target: string(r.Target()), Proto: string(p.proto.of(buf)),
		Body: append([]byte{}, r.Body()...), Chunked: r.Chunked(), End: p.end()}
	for i := range r.NumHeaders() {
		n, v := r.HeaderAt(i)
		pr.Header = append(pr.Header, [2]string{string(n), string(v)})
	}
	for i := range r.NumTrailers() {
		n, v := r.TrailerAt(i)
		pr.Trailer = append(pr.Trailer, [2]string{string(n), string(v)})
	}
	return pr, 0, true
}

// ViewOf parses raw (one complete request) into a fast-API request view.
func ViewOf(t interface{ Fatalf(string, ...any) }, raw []byte) *Request {
	lim := &limits{maxHeaderBytes: 4096, maxHeaders: 100, maxLine: 2048, maxBody: 64 << 10}
	p := &parser{lim: lim}
	b := append([]byte(nil), raw...)
	if done, err := p.head(b); err != nil || !done || p.limitBody(64<<10) != nil || (p.kind == bodyLength && len(b) < int(p.body.hi)) {
		t.Fatalf("not one complete request: %v", err)
	}
	return &Request{b: b, p: p}
}

// StreamState reports on s's connections whose request body streams: how
// many there are, whether one stopped reading on a full window, and how
// many body bytes the server holds for them (windows and raw input).
func StreamState(s *Server) (streams int, stalled bool, held int) {
	s.loops.Range(func(_, v any) bool {
		ls := v.(*loopState)
		runOnLoop(ls.loop, func() {
			for _, cs := range ls.conns {
				if bs := cs.rb; bs != nil {
					streams++
					bs.mu.Lock()
					held += len(bs.win) - bs.r + len(bs.raw)
					stalled = stalled || bs.stalled && cs.has(flagPaused)
					bs.mu.Unlock()
				}
			}
		})
		return true
	})
	return streams, stalled, held
}

// BodyWindow is the window of a streamed body.
const BodyWindow = bodyWindow

// H2Rested counts s's HTTP/2 connections on l that rest (h2Conn.rest):
// they hold no HPACK encoder and no stream map. On l only.
func H2Rested(s *Server, l *engine.Loop) int {
	n := 0
	if v, ok := s.loops.Load(l); ok {
		for _, cs := range v.(*loopState).conns {
			if hc := cs.h2; hc != nil && hc.enc == nil && hc.streams == nil {
				n++
			}
		}
	}
	return n
}

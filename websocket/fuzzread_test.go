package websocket

import (
	"encoding/binary"
	"errors"
	"io"
	"net"
	"os"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"golang.org/x/sys/unix"

	"github.com/ringloop/ringloop/engine"
	"github.com/ringloop/ringloop/tasks"
)

// fuzzMaxMessage is the message limit of the fuzzed connections: small, so
// that the fuzzer reaches 1009 and reassembly across frames cheaply.
const fuzzMaxMessage = 300

// FuzzReader feeds an arbitrary client byte stream, delivered in pieces cut
// at arbitrary points, through a server connection's whole read path on a
// real loop (the engine's delivery and Keep, frame parsing, reassembly,
// UTF-8 checks, control frames, the close handshake) and checks what comes
// out: no callback panics; the parser never holds more than a partial
// header, a message never passes the limit; every message is whole and
// text is UTF-8; the server's frames are unmasked, a close frame carries a
// sendable code and nothing follows it; and the connection ends either by
// the peer's EOF with no close sent, or with the code the server sent.
func FuzzReader(f *testing.F) {
	hello := frameBytes(0x81, []byte("hello"), [4]byte{1, 2, 3, 4})
	seeds := [][]byte{
		hello,
		append(append(frameBytes(0x01, []byte("hel"), [4]byte{9, 8, 7, 6}), frameBytes(0x89, []byte("p"), [4]byte{})...), frameBytes(0x80, []byte("lo"), [4]byte{5, 5, 5, 5})...),
		frameBytes(0x82, make([]byte, 400), [4]byte{1, 1, 1, 1}),
		frameBytes(0x88, []byte{0x03, 0xE8, 'b', 'y', 'e'}, [4]byte{7, 7, 7, 7}),
		frameBytes(0x88, []byte{0x03}, [4]byte{}),
		frameBytes(0x81, []byte{0xCE, 0xBA, 0xE1}, [4]byte{2, 3, 4, 5}),
		{0x81, 0x05, 'h', 'e', 'l', 'l', 'o'},
		{0xC1, 0x80, 0, 0, 0, 0},
		append(hello, 0x82, 0xFF, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0),
	}
	for _, s := range seeds {
		f.Add(s, uint16(3), uint16(9))
	}
	loop, err := engine.New()
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() { _ = loop.Close() })
	cfg := &config{maxMessage: fuzzMaxMessage, closeTimeout: defaultCloseTimeout}
	f.Fuzz(func(t *testing.T, stream []byte, cut1, cut2 uint16) {
		fuzzRead(t, loop, cfg, stream, []int{int(cut1), int(cut2)})
	})
}

// TestReaderHarness: the fuzz harness sees what a connection does, cut
// anywhere: a message split into fragments around a ping, a message over
// the limit (1009), a close (echoed) and bad UTF-8 (1007).
func TestReaderHarness(t *testing.T) {
	loop, err := engine.New()
	if err != nil {
		t.Fatal(err)
	}
	defer loop.Close()
	cfg := &config{maxMessage: fuzzMaxMessage, closeTimeout: defaultCloseTimeout}
	frag := append(append(frameBytes(0x01, []byte("hel"), [4]byte{9, 8, 7, 6}), frameBytes(0x89, []byte("p"), [4]byte{})...), frameBytes(0x80, []byte("lo"), [4]byte{5, 5, 5, 5})...)
	for cut := 0; cut <= len(frag); cut++ {
		h, sent := fuzzRead(t, loop, cfg, frag, []int{cut, cut + 1})
		if len(h.msgs) != 1 || h.msgs[0] != "hello" || sent != 0 || h.code != CloseAbnormal {
			t.Fatalf("cut %d: messages %q, close sent %d, OnClose %d %v", cut, h.msgs, sent, h.code, h.err)
		}
	}
	cases := []struct {
		stream []byte
		code   int
	}{
		{frameBytes(0x82, make([]byte, fuzzMaxMessage+1), [4]byte{1, 1, 1, 1}), CloseTooBig},
		{frameBytes(0x88, []byte{0x03, 0xE8, 'b', 'y', 'e'}, [4]byte{7, 7, 7, 7}), CloseNormal},
		{frameBytes(0x81, []byte{0xCE, 0xBA, 0xFF}, [4]byte{2, 3, 4, 5}), CloseInvalidPayload},
	}
	for _, tc := range cases {
		for cut := 0; cut <= len(tc.stream); cut += 3 {
			if h, sent := fuzzRead(t, loop, cfg, tc.stream, []int{cut}); sent != tc.code || h.code != tc.code {
				t.Fatalf("cut %d: close sent %d, OnClose %d %v; want %d", cut, sent, h.code, h.err, tc.code)
			}
		}
	}
}

// frameBytes builds a masked client frame.
func frameBytes(b0 byte, p []byte, key [4]byte) []byte {
	out := appendHeader(nil, b0&0x80 != 0, opcode(b0&0x0F), len(p), true, key)
	out[0] = b0
	q := append([]byte(nil), p...)
	maskBytes(key, 0, q)
	return append(out, q...)
}

// fuzzRead runs one stream through a fresh connection on loop and returns
// what the handler saw and the code of the close frame the server sent.
func fuzzRead(t *testing.T, loop *engine.Loop, cfg *config, stream []byte, cuts []int) (*fuzzHandler, int) {
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	cf := os.NewFile(uintptr(fds[1]), "client")
	client, err := net.FileConn(cf) // a dup of the fd
	_ = cf.Close()
	if err != nil {
		_ = unix.Close(fds[0])
		t.Fatal(err)
	}
	defer client.Close()
	rec := &fuzzHandler{closed: make(chan struct{})}
	c := &Conn{h: rec, cfg: cfg}
	sp := &splitter{side: (*engineSide)(c), c: c, cuts: cuts, t: t}
	if _, err := engine.Adopt(loop, fds[0], sp); err != nil {
		_ = unix.Close(fds[0])
		t.Fatal(err)
	}
	_ = client.SetDeadline(time.Now().Add(30 * time.Second))
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		_, _ = client.Write(stream) // fails once the server has closed
		_ = client.(*net.UnixConn).CloseWrite()
	}()
	out, err := io.ReadAll(client)
	wg.Wait()
	<-rec.closed
	if err != nil && !errors.Is(err, unix.ECONNRESET) {
		t.Fatalf("reading the server: %v", err)
	}
	if sp.bad != "" {
		t.Fatal(sp.bad)
	}
	sentClose := checkServerFrames(t, out)
	checkEnd(t, rec, sentClose)
	return rec, sentClose
}

// splitter is the engine handler under test: it hands each delivery to the
// connection's engine side in pieces cut at the stream offsets it was
// given, as separate deliveries would, and checks the read side's bounds
// after each.
type splitter struct {
	side *engineSide
	c    *Conn
	cuts []int
	off  int // stream bytes received so far
	kept int // bytes of the last piece kept, first in the next delivery
	t    *testing.T
	bad  string
}

func (s *splitter) OnOpen(ec *engine.Conn) { s.side.OnOpen(ec) }

func (s *splitter) OnData(ec *engine.Conn, b []byte) {
	// b is what the last piece kept followed by new bytes. The engine's b
	// may be its kept buffer, which Keep rewrites: work on a copy.
	start := s.off - s.kept // b[0]'s offset in the stream
	s.off += len(b) - s.kept
	data := append([]byte(nil), b[s.kept:]...)
	carry := append([]byte(nil), b[:s.kept]...)
	start += s.kept
	for len(data) > 0 {
		n := len(data)
		for _, cut := range s.cuts {
			if at := cut - start; at > 0 && at < n {
				n = at
			}
		}
		piece := append(carry, data[:n]...)
		start += n
		data = data[n:]
		_ = ec.Keep(nil) // from here Kept is what this piece's handler keeps
		s.side.OnData(ec, piece)
		s.checkBounds(ec)
		carry = append([]byte(nil), ec.Kept()...)
		if s.c.closeDone || !ec.Reading() {
			break
		}
	}
	carry = append(carry, data...)
	s.kept = len(carry)
	if len(carry) > 0 {
		if err := ec.Keep(carry); err != nil {
			s.bad = "keeping: " + err.Error()
		}
	}
}

// checkBounds: between deliveries the parser holds at most a partial
// header (the connection never pauses here: nothing fills its output), a
// message in progress is within the limit, a control payload within 125.
func (s *splitter) checkBounds(ec *engine.Conn) {
	c := s.c
	switch {
	case s.bad != "":
	case !c.closeDone && ec.Reading() && len(ec.Kept()) >= maxHeader:
		s.bad = "kept a whole header's worth of bytes"
	case len(c.msg) > fuzzMaxMessage:
		s.bad = "message in progress over the limit"
	case len(c.ctl) > maxControlPayload:
		s.bad = "control payload over 125 bytes"
	}
}

func (s *splitter) OnClose(ec *engine.Conn, err error) { s.side.OnClose(ec, err) }

func (s *splitter) OnWritabilityChanged(ec *engine.Conn, w bool) { s.side.OnWritabilityChanged(ec, w) }

// fuzzHandler records what the connection delivered and checks each
// message as it comes.
type fuzzHandler struct {
	bad    string
	msgs   []string
	code   int
	err    error
	closed chan struct{}
}

func (h *fuzzHandler) OnOpen(*Conn) {}
func (h *fuzzHandler) OnMessage(_ *Conn, kind MessageKind, p []byte) {
	switch {
	case h.bad != "":
	case kind != Text && kind != Binary:
		h.bad = "message of kind " + kind.String()
	case len(p) > fuzzMaxMessage:
		h.bad = "message over the limit"
	case kind == Text && !utf8.Valid(p):
		h.bad = "text message that is not UTF-8"
	default:
		h.msgs = append(h.msgs, string(p))
	}
}
func (h *fuzzHandler) OnClose(_ *Conn, code int, _ string, err error) {
	h.code, h.err = code, err
	close(h.closed)
}

// checkServerFrames parses what the server sent: unmasked frames, only
// pongs and at most one close frame, last, with a sendable code (or none,
// answering an empty one). It returns that code, 0 if no close frame was
// sent.
func checkServerFrames(t *testing.T, out []byte) int {
	for len(out) > 0 {
		h, n, err := parseHeader(out, false, false)
		if err != nil || n == 0 || int64(len(out)-n) < h.length {
			t.Fatalf("server sent a bad or partial frame: %x (%v)", out, err)
		}
		p := out[n : n+int(h.length)]
		out = out[n+int(h.length):]
		switch h.op {
		case opPong:
		case opClose:
			if len(out) > 0 {
				t.Fatalf("%d bytes after the close frame", len(out))
			}
			if len(p) == 0 {
				return CloseNoStatus // the echo of an empty close
			}
			code := int(binary.BigEndian.Uint16(p))
			if !validCloseCode(code) {
				t.Fatalf("close frame with code %d", code)
			}
			return code
		default:
			t.Fatalf("server sent opcode %#x", h.op)
		}
	}
	return 0
}

// checkEnd: no callback panicked; a connection the server closed with a
// code reports that code (with the peer's violation as the error, or the
// peer's own close); one it did not close ended by the peer's EOF.
func checkEnd(t *testing.T, h *fuzzHandler, sent int) {
	switch {
	case h.bad != "":
		t.Fatal(h.bad)
	case errors.Is(h.err, tasks.ErrPanicked):
		t.Fatalf("a callback panicked: %v", h.err)
	case sent == 0 && h.code != CloseAbnormal:
		t.Fatalf("no close frame sent, yet OnClose got %d %v", h.code, h.err)
	case sent == 0 && !errors.Is(h.err, io.EOF) && !errors.Is(h.err, io.ErrUnexpectedEOF):
		t.Fatalf("the peer's EOF reported as %v", h.err)
	case sent != 0 && h.err != nil && !errors.Is(h.err, ErrProtocol):
		t.Fatalf("close %d sent, OnClose err %v", sent, h.err)
	case sent != 0 && h.err != nil && h.code != sent:
		t.Fatalf("close %d sent for a violation, OnClose got %d", sent, h.code)
	}
}

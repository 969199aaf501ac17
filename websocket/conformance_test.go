package websocket_test

import (
	"bytes"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ringloop/ringloop/internal/testenv"
	"github.com/ringloop/ringloop/websocket"
)

// conformCase is one row of the conformance table: what a client sends, in
// separate writes (or byte by byte), and what the server must answer.
type conformCase struct {
	name string
	send [][]byte
	chop bool          // write every byte on its own
	want []serverFrame // frames before any close frame, in order
	// close is the code of the server's close frame, after which it must
	// close the TCP connection; 0 means the connection stays open, which
	// a close handshake (1000) then checks.
	close int
	// echoed: the close code is the client's own, echoed (a clean close).
	echoed bool
	// limited runs the case against a server with a 1000-byte message limit.
	limited bool
}

func txt(s string) []byte        { return frame(finText, []byte(s), true) }
func echoT(s string) serverFrame { return serverFrame{finText, []byte(s)} }

// conformance is the table, by the categories of the Autobahn testsuite,
// from RFC 6455.
func conformance() map[string][]conformCase {
	big := strings.Repeat("x", 65536)
	ping125 := bytes.Repeat([]byte{0xFE}, 125)
	kosme := "\xce\xba\xe1\xbd\xb9\xcf\x83\xce\xbc\xce\xb5"
	var oneByteFrags [][]byte
	for i := range len(kosme) {
		b0 := byte(0x00)
		if i == 0 {
			b0 = fragText
		}
		if i == len(kosme)-1 {
			b0 |= 0x80
		}
		oneByteFrags = append(oneByteFrags, frame(b0, []byte{kosme[i]}, true))
	}
	var thousandFrags [][]byte
	for i := range 1000 {
		b0 := byte(fragCont)
		if i == 0 {
			b0 = fragText
		}
		if i == 999 {
			b0 = finCont
		}
		thousandFrags = append(thousandFrags, frame(b0, []byte{'a' + byte(i%26)}, true))
	}
	var thousandWant []byte
	for i := range 1000 {
		thousandWant = append(thousandWant, 'a'+byte(i%26))
	}
	t := map[string][]conformCase{
		"framing": {
			{name: "empty text", send: [][]byte{txt("")}, want: []serverFrame{echoT("")}},
			{name: "text 125", send: [][]byte{txt(big[:125])}, want: []serverFrame{echoT(big[:125])}},
			{name: "text 126", send: [][]byte{txt(big[:126])}, want: []serverFrame{echoT(big[:126])}},
			{name: "text 65535", send: [][]byte{txt(big[:65535])}, want: []serverFrame{echoT(big[:65535])}},
			{name: "text 65536", send: [][]byte{txt(big)}, want: []serverFrame{echoT(big)}},
			{name: "binary 65536", send: [][]byte{frame(finBinary, []byte(big), true)}, want: []serverFrame{{finBinary, []byte(big)}}},
			{name: "text byte by byte", chop: true, send: [][]byte{txt(big[:300])}, want: []serverFrame{echoT(big[:300])}},
			{name: "two messages in one write", send: [][]byte{append(txt("one"), txt("two")...)}, want: []serverFrame{echoT("one"), echoT("two")}},
			{name: "unmasked text", send: [][]byte{frame(finText, []byte("x"), false)}, close: websocket.CloseProtocolError},
			{name: "64-bit length with the top bit", send: [][]byte{{0x82, 0xFF, 0x80, 0, 0, 0, 0, 0, 0, 0, 1, 2, 3, 4}}, close: websocket.CloseProtocolError},
		},
		"pings and pongs": {
			{name: "empty ping", send: [][]byte{frame(finPing, nil, true)}, want: []serverFrame{{finPong, []byte{}}}},
			{name: "ping 125", send: [][]byte{frame(finPing, ping125, true)}, want: []serverFrame{{finPong, ping125}}},
			{name: "ping 126", send: [][]byte{frame(finPing, append(ping125, 0), true)}, close: websocket.CloseProtocolError},
			{name: "unsolicited pong", send: [][]byte{frame(finPong, []byte("x"), true), txt("after")}, want: []serverFrame{echoT("after")}},
			{name: "ping chopped", chop: true, send: [][]byte{frame(finPing, []byte("chop"), true)}, want: []serverFrame{{finPong, []byte("chop")}}},
			{name: "ten pings", send: [][]byte{bytes.Repeat(frame(finPing, []byte("p"), true), 10)},
				want: []serverFrame{{finPong, []byte("p")}, {finPong, []byte("p")}, {finPong, []byte("p")}, {finPong, []byte("p")}, {finPong, []byte("p")},
					{finPong, []byte("p")}, {finPong, []byte("p")}, {finPong, []byte("p")}, {finPong, []byte("p")}, {finPong, []byte("p")}}},
		},
		"reserved bits": {
			{name: "rsv1", send: [][]byte{frame(0xC1, []byte("x"), true)}, close: websocket.CloseProtocolError},
			{name: "rsv2 after a message", send: [][]byte{txt("ok"), frame(0xA1, []byte("x"), true)}, want: []serverFrame{echoT("ok")}, close: websocket.CloseProtocolError},
			{name: "rsv3", send: [][]byte{frame(0x91, []byte("x"), true)}, close: websocket.CloseProtocolError},
			{name: "rsv1+2+3 binary", send: [][]byte{frame(0xF2, []byte("x"), true)}, close: websocket.CloseProtocolError},
			{name: "rsv on ping", send: [][]byte{frame(0xC9, nil, true)}, close: websocket.CloseProtocolError},
			{name: "rsv on close", send: [][]byte{frame(0xC8, closePayload(1000, ""), true)}, close: websocket.CloseProtocolError},
		},
		"opcodes": {
			{name: "opcode 3", send: [][]byte{frame(0x83, nil, true)}, close: websocket.CloseProtocolError},
			{name: "opcode 4 with payload", send: [][]byte{frame(0x84, []byte("x"), true)}, close: websocket.CloseProtocolError},
			{name: "opcode 5 after a message", send: [][]byte{txt("ok"), frame(0x85, nil, true)}, want: []serverFrame{echoT("ok")}, close: websocket.CloseProtocolError},
			{name: "opcode 7", send: [][]byte{frame(0x87, nil, true)}, close: websocket.CloseProtocolError},
			{name: "opcode 0xB", send: [][]byte{frame(0x8B, nil, true)}, close: websocket.CloseProtocolError},
			{name: "opcode 0xF", send: [][]byte{frame(0x8F, []byte("x"), true)}, close: websocket.CloseProtocolError},
		},
		"fragmentation": {
			{name: "fragmented ping", send: [][]byte{frame(0x09, nil, true), frame(finCont, nil, true)}, close: websocket.CloseProtocolError},
			{name: "fragmented pong", send: [][]byte{frame(0x0A, nil, true), frame(finCont, nil, true)}, close: websocket.CloseProtocolError},
			{name: "two fragments", send: [][]byte{frame(fragText, []byte("frag1"), true), frame(finCont, []byte("frag2"), true)}, want: []serverFrame{echoT("frag1frag2")}},
			{name: "ping between fragments", send: [][]byte{frame(fragText, []byte("a"), true), frame(finPing, []byte("p"), true), frame(finCont, []byte("b"), true)},
				want: []serverFrame{{finPong, []byte("p")}, echoT("ab")}},
			{name: "ping between fragments, chopped", chop: true, send: [][]byte{frame(fragText, []byte("a"), true), frame(finPing, []byte("p"), true), frame(finCont, []byte("b"), true)},
				want: []serverFrame{{finPong, []byte("p")}, echoT("ab")}},
			{name: "continuation with nothing to continue", send: [][]byte{frame(finCont, []byte("x"), true)}, close: websocket.CloseProtocolError},
			{name: "unfinished continuation with nothing to continue", send: [][]byte{frame(fragCont, []byte("x"), true)}, close: websocket.CloseProtocolError},
			{name: "new message inside a fragmented one", send: [][]byte{frame(fragText, []byte("a"), true), txt("b")}, close: websocket.CloseProtocolError},
			{name: "empty fragments", send: [][]byte{frame(fragText, nil, true), frame(fragCont, nil, true), frame(finCont, nil, true)}, want: []serverFrame{echoT("")}},
			{name: "1000 fragments", send: [][]byte{bytes.Join(thousandFrags, nil)}, want: []serverFrame{echoT(string(thousandWant))}},
			{name: "binary fragments", send: [][]byte{frame(0x02, []byte{0, 1}, true), frame(finCont, []byte{2}, true)}, want: []serverFrame{{finBinary, []byte{0, 1, 2}}}},
		},
		"utf-8": {
			{name: "valid", send: [][]byte{txt(kosme)}, want: []serverFrame{echoT(kosme)}},
			{name: "valid, a fragment per byte", send: oneByteFrags, want: []serverFrame{echoT(kosme)}},
			{name: "valid, a fragment per byte, chopped", chop: true, send: oneByteFrags, want: []serverFrame{echoT(kosme)}},
			{name: "invalid", send: [][]byte{txt(kosme + "\xed\xa0\x80edited")}, close: websocket.CloseInvalidPayload},
			{name: "invalid first fragment fails before the last", send: [][]byte{frame(fragText, []byte("ok\xff"), true)}, close: websocket.CloseInvalidPayload},
			{name: "truncated code point", send: [][]byte{txt("\xce")}, close: websocket.CloseInvalidPayload},
			{name: "truncated across fragments", send: [][]byte{frame(fragText, []byte("a"), true), frame(finCont, []byte("\xe2\x82"), true)}, close: websocket.CloseInvalidPayload},
			{name: "overlong", send: [][]byte{txt("\xc0\xaf")}, close: websocket.CloseInvalidPayload},
			{name: "surrogate", send: [][]byte{txt("\xed\xa0\x80")}, close: websocket.CloseInvalidPayload},
			{name: "past U+10FFFF", send: [][]byte{txt("\xf4\x90\x80\x80")}, close: websocket.CloseInvalidPayload},
			{name: "code point split across fragments", send: [][]byte{frame(fragText, []byte("\xce"), true), frame(finCont, []byte("\xba"), true)}, want: []serverFrame{echoT("κ")}},
			{name: "binary is not checked", send: [][]byte{frame(finBinary, []byte("\xff\xfe"), true)}, want: []serverFrame{{finBinary, []byte("\xff\xfe")}}},
		},
		"close handling": {
			{name: "empty close", send: [][]byte{frame(finClose, nil, true)}, close: websocket.CloseNoStatus},
			{name: "1-byte close", send: [][]byte{frame(finClose, []byte{3}, true)}, close: websocket.CloseProtocolError},
			{name: "close with a reason", send: [][]byte{frame(finClose, closePayload(1000, "bye"), true)}, close: 1000},
			{name: "close with 123-byte reason", send: [][]byte{frame(finClose, closePayload(1000, big[:123]), true)}, close: 1000},
			{name: "close of 126 bytes", send: [][]byte{frame(finClose, closePayload(1000, big[:124]), true)}, close: websocket.CloseProtocolError},
			{name: "close reason not UTF-8", send: [][]byte{frame(finClose, closePayload(1000, "\xff"), true)}, close: websocket.CloseInvalidPayload},
			{name: "text after close is ignored", send: [][]byte{append(frame(finClose, closePayload(1000, ""), true), txt("late")...)}, close: 1000},
			{name: "ping after close is ignored", send: [][]byte{append(frame(finClose, closePayload(1000, ""), true), frame(finPing, nil, true)...)}, close: 1000},
			{name: "close between fragments", send: [][]byte{frame(fragText, []byte("a"), true), frame(finClose, closePayload(1000, ""), true)}, close: 1000},
			{name: "close chopped", chop: true, send: [][]byte{frame(finClose, closePayload(1001, "x"), true)}, close: 1001},
		},
		"limits": {
			{name: "message at the limit", limited: true, send: [][]byte{txt(big[:1000])}, want: []serverFrame{echoT(big[:1000])}},
			{name: "message over the limit", limited: true, send: [][]byte{txt(big[:1001])}, close: websocket.CloseTooBig},
			{name: "fragments over the limit", limited: true, send: [][]byte{frame(fragText, []byte(big[:600]), true), frame(finCont, []byte(big[:600]), true)}, close: websocket.CloseTooBig},
			{name: "huge continuation refused before its payload", limited: true, send: [][]byte{frame(fragText, []byte("a"), true),
				{0x80, 0xFF, 0x7F, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 1, 2, 3, 4}}, close: websocket.CloseTooBig},
			{name: "huge length refused before its payload", limited: true, send: [][]byte{{0x82, 0xFF, 0, 0, 1, 0, 0, 0, 0, 0, 1, 2, 3, 4}}, close: websocket.CloseTooBig},
		},
	}
	for _, code := range []int{1000, 1001, 1002, 1003, 1007, 1008, 1009, 1010, 1011, 3000, 3999, 4000, 4999} {
		t["close handling"] = append(t["close handling"], conformCase{name: "close code " + itoa(code), send: [][]byte{frame(finClose, closePayload(code, ""), true)}, close: code, echoed: true})
	}
	for _, code := range []int{0, 999, 1004, 1005, 1006, 1016, 1100, 2000, 2999, 5000, 65535} {
		t["close handling"] = append(t["close handling"], conformCase{name: "invalid close code " + itoa(code), send: [][]byte{frame(finClose, closePayload(code, ""), true)}, close: websocket.CloseProtocolError})
	}
	return t
}

func itoa(n int) string { return strconv.Itoa(n) }

// TestConformance runs the table against the server, each case on a new
// connection: the frames the server answers, its close code and that it
// then closes the TCP connection, and what its OnClose reports.
func TestConformance(t *testing.T) {
	table := conformance()
	testenv.ForEach(t, func(t *testing.T, c testenv.Combo) {
		testenv.CheckLeaks(t)
		e := newEcho()
		addr := serve(t, c, e, nil)
		limited := serve(t, c, e, []websocket.Option{websocket.WithMaxMessageSize(1000)})
		for category, cases := range table {
			for _, tc := range cases {
				t.Run(category+"/"+tc.name, func(t *testing.T) {
					a := addr
					if tc.limited {
						a = limited
					}
					rc := dialRaw(t, a)
					for _, b := range tc.send {
						if !tc.chop {
							_, err := rc.Write(b)
							require.NoError(t, err)
							continue
						}
						for i := range b {
							_, err := rc.Write(b[i : i+1])
							require.NoError(t, err)
						}
					}
					for i, w := range tc.want {
						f, err := rc.read()
						require.NoError(t, err, "frame %d", i)
						require.Equal(t, w.b0, f.b0, "frame %d: %v", i, f)
						require.True(t, bytes.Equal(w.payload, f.payload), "frame %d: %d bytes, want %d", i, len(f.payload), len(w.payload))
					}
					code := tc.close
					if code == 0 {
						_, err := rc.Write(frame(finClose, closePayload(1000, ""), true))
						require.NoError(t, err)
						code = 1000
					}
					f, err := rc.read()
					require.NoError(t, err)
					require.Equal(t, byte(finClose), f.b0, "%v", f)
					require.Equal(t, code, f.closeCode())
					rc.expectEOF(t)
					cl := e.next(t)
					require.Equal(t, code, cl.code, "server OnClose: %v", cl)
					if !tc.echoed && (code == websocket.CloseProtocolError || code == websocket.CloseInvalidPayload || code == websocket.CloseTooBig) {
						require.ErrorIs(t, cl.err, websocket.ErrProtocol)
					} else {
						require.NoError(t, cl.err)
					}
				})
			}
		}
	})
}

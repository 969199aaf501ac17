package frame

import (
	"bufio"
	"encoding/binary"
	"errors"
	"reflect"
)

// A bounded split function (LengthPrefixed, Delimited) tells Split the
// largest unfinished frame it accepts, so that Split can raise the
// connection's keep limit to it: its maximum is then the one that applies,
// not the engine's default keep limit (1 MiB), which used to cut a larger
// frame with an error that named neither.
//
// A bufio.SplitFunc carries no data of its own, so Split recognises these
// functions by their code (every closure LengthPrefixed returns shares it)
// and asks the one it was given for its bound with a probe only it answers:
// an empty slice over probeBuf, at EOF. Split never calls a function it did
// not recognise, and the probe costs the functions one comparison when called
// at EOF, never on a connection (Split calls them with atEOF false).

var (
	probeBuf = make([]byte, 1)
	errProbe = errors.New("frame: bound probe")

	boundedCode = map[uintptr]bool{
		reflect.ValueOf(LengthPrefixed(1, binary.BigEndian, 0)).Pointer(): true,
		reflect.ValueOf(Delimited([]byte{0}, 0)).Pointer():                true,
	}
)

// isProbe reports whether b is Split's probe.
func isProbe(b []byte) bool { return len(b) == 0 && cap(b) > 0 && &b[:1][0] == &probeBuf[0] }

// boundOf returns the largest unfinished frame split accepts, when split is
// one of this package's bounded functions, else 0.
func boundOf(split bufio.SplitFunc) int {
	if split == nil || !boundedCode[reflect.ValueOf(split).Pointer()] {
		return 0
	}
	n, _, err := split(probeBuf[:0], true)
	if err != errProbe {
		return 0
	}
	return n
}

package frame_test

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"io"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ringloop/ringloop/frame"
)

// scan runs split over in through bufio.Scanner, the reference for how a
// split function is driven, reading in pieces of at most chunk bytes.
func scan(split bufio.SplitFunc, in []byte, chunk int) ([][]byte, error) {
	sc := bufio.NewScanner(&chunkReader{b: in, n: chunk})
	sc.Buffer(make([]byte, 16), 1<<20)
	sc.Split(split)
	var out [][]byte
	for sc.Scan() {
		out = append(out, bytes.Clone(sc.Bytes()))
	}
	return out, sc.Err()
}

type chunkReader struct {
	b []byte
	n int
}

func (r *chunkReader) Read(p []byte) (int, error) {
	if len(r.b) == 0 {
		return 0, io.EOF
	}
	n := copy(p[:min(len(p), r.n)], r.b)
	r.b = r.b[n:]
	return n, nil
}

func TestLengthPrefixed(t *testing.T) {
	for _, size := range []int{1, 2, 4, 8} {
		for _, order := range []binary.ByteOrder{binary.BigEndian, binary.LittleEndian} {
			var want [][]byte
			var in []byte
			rng := rand.New(rand.NewPCG(uint64(size), 9))
			for range 40 {
				n := rng.IntN(256)
				p := make([]byte, n)
				for i := range p {
					p[i] = byte(rng.Uint32())
				}
				want = append(want, p)
				var hdr [8]byte
				switch size {
				case 1:
					hdr[0] = byte(n)
				case 2:
					order.PutUint16(hdr[:], uint16(n))
				case 4:
					order.PutUint32(hdr[:], uint32(n))
				case 8:
					order.PutUint64(hdr[:], uint64(n))
				}
				in = append(append(in, hdr[:size]...), p...)
			}
			for _, chunk := range []int{1, 3, 1000} {
				got, err := scan(frame.LengthPrefixed(size, order, 255), in, chunk)
				require.NoError(t, err)
				require.Equal(t, len(want), len(got))
				for i := range want {
					require.True(t, bytes.Equal(want[i], got[i]), "size %d frame %d", size, i)
				}
			}
		}
	}
	// A header over max is refused before its payload arrives.
	_, _, err := frame.LengthPrefixed(2, binary.BigEndian, 10)([]byte{0, 11}, false)
	require.ErrorIs(t, err, frame.ErrTooLong)
	adv, tok, err := frame.LengthPrefixed(2, binary.BigEndian, 10)([]byte{0, 10, 1}, false)
	require.NoError(t, err)
	require.Zero(t, adv)
	require.Nil(t, tok)
	require.Panics(t, func() { frame.LengthPrefixed(3, binary.BigEndian, 10) })
}

func TestDelimited(t *testing.T) {
	in := []byte("a\r\nbb\r\n\r\nccc\r\n")
	for _, chunk := range []int{1, 2, 100} {
		got, err := scan(frame.Delimited([]byte("\r\n"), 3), in, chunk)
		require.NoError(t, err)
		require.Equal(t, [][]byte{[]byte("a"), []byte("bb"), {}, []byte("ccc")}, got)
	}
	// Over max with the delimiter in view, and over max with none yet.
	_, err := scan(frame.Delimited([]byte("\r\n"), 3), []byte("abcd\r\n"), 100)
	require.ErrorIs(t, err, frame.ErrTooLong)
	_, _, err = frame.Delimited([]byte("\r\n"), 3)([]byte("abcd"), false)
	require.ErrorIs(t, err, frame.ErrTooLong)
	// Exactly max bytes, the delimiter's first byte seen: wait for more.
	adv, _, err := frame.Delimited([]byte("\r\n"), 3)([]byte("abc\r"), false)
	require.NoError(t, err)
	require.Zero(t, adv)
	require.Panics(t, func() { frame.Delimited(nil, 3) })
}

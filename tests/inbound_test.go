package tests

// The inbound side of a connection: bytes a handler keeps for the next
// delivery (Conn.Keep), the keep limit, an unfinished frame at the peer's
// close, kept bytes delivered again on ResumeRead, and the frame package on
// top. Each runs on every backend, kernel profile and threading mode.

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"io"
	"math/rand/v2"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ringloop/ringloop/engine"
	"github.com/ringloop/ringloop/frame"
	"github.com/ringloop/ringloop/internal/testenv"
	"github.com/ringloop/ringloop/tasks"
)

// digestFrames answers every frame with its length and SHA-256, so the peer
// can check each frame arrived whole and in order.
type digestFrames struct {
	closed chan error
	kept   chan []byte // a copy of Kept() in OnClose
}

func newDigestFrames() *digestFrames {
	return &digestFrames{closed: make(chan error, 1), kept: make(chan []byte, 1)}
}

func (d *digestFrames) OnOpen(c *engine.Conn) {}
func (d *digestFrames) OnFrame(c *engine.Conn, f []byte) {
	var out [4 + sha256.Size]byte
	binary.BigEndian.PutUint32(out[:], uint32(len(f)))
	sum := sha256.Sum256(f)
	copy(out[4:], sum[:])
	_, _ = c.Write(out[:])
}
func (d *digestFrames) OnClose(c *engine.Conn, err error) {
	d.kept <- bytes.Clone(c.Kept())
	d.closed <- err
}

func lengthPrefixed(p []byte) []byte {
	out := binary.BigEndian.AppendUint32(nil, uint32(len(p)))
	return append(out, p...)
}

// readDigests reads n answers of digestFrames and checks them against frames.
func readDigests(t *testing.T, peer net.Conn, frames [][]byte) {
	t.Helper()
	_ = peer.SetReadDeadline(time.Now().Add(60 * time.Second))
	var ans [4 + sha256.Size]byte
	for i, f := range frames {
		_, err := io.ReadFull(peer, ans[:])
		require.NoError(t, err, "answer %d", i)
		sum := sha256.Sum256(f)
		require.Equal(t, uint32(len(f)), binary.BigEndian.Uint32(ans[:]), "frame %d length", i)
		require.True(t, bytes.Equal(sum[:], ans[4:]), "frame %d digest", i)
	}
}

// TestFramesSpanningReads: length-prefixed frames from 0 bytes to 300 KiB,
// written in random pieces (some of one byte) so that frames span reads and
// reads hold several frames, all arrive whole and in order.
func TestFramesSpanningReads(t *testing.T) {
	testenv.ForEach(t, func(t *testing.T, c testenv.Combo) {
		testenv.CheckLeaks(t)
		l := newLoop(t, c)
		d := newDigestFrames()
		h := frame.Split(frame.LengthPrefixed(4, binary.BigEndian, 512<<10), d)
		_, peer := acceptOne(t, l, h)
		rng := rand.New(rand.NewPCG(1, 2))
		var frames [][]byte
		var stream []byte
		for _, n := range []int{0, 1, 5, 100, 4096, 16 << 10, 100 << 10, 300 << 10, 7, 0, 65535} {
			f := pattern(n, byte(n))
			frames = append(frames, f)
			stream = append(stream, lengthPrefixed(f)...)
		}
		done := make(chan error, 1)
		go func() {
			rest := stream
			for len(rest) > 0 {
				n := 1 + rng.IntN(40<<10)
				if rng.IntN(4) == 0 {
					n = 1
				}
				n = min(n, len(rest))
				if _, err := peer.Write(rest[:n]); err != nil {
					done <- err
					return
				}
				rest = rest[n:]
			}
			done <- nil
		}()
		readDigests(t, peer, frames)
		require.NoError(t, <-done)
		require.NoError(t, peer.Close())
		require.ErrorIs(t, waitErr(t, d.closed), io.EOF)
		require.Empty(t, <-d.kept)
	})
}

// TestKeepLimit: with a split function package frame does not know the
// bound of, a frame over the connection's keep limit ends the connection
// with an error wrapping engine.ErrKeepLimit that names the sizes and the
// limit (and nothing else: no "task rejected"); a length header over the
// split function's max ends it at once with frame.ErrTooLong, its text
// saying "frame:" once.
func TestKeepLimit(t *testing.T) {
	testenv.ForEach(t, func(t *testing.T, c testenv.Combo) {
		testenv.CheckLeaks(t)
		l := newLoop(t, c)
		d := newDigestFrames()
		lp := frame.LengthPrefixed(4, binary.BigEndian, 1<<20)
		own := func(b []byte, atEOF bool) (int, []byte, error) { return lp(b, atEOF) } // a function of the user's
		h := frame.Split(own, d)
		_, peer := acceptOne(t, l, h, engine.WithBufferLimits(engine.BufferLimits{Keep: 8 << 10}))
		// A 16 KiB frame: its first 8 KiB + 5 bytes cannot be kept.
		_, err := peer.Write(lengthPrefixed(pattern(16<<10, 3))[:8<<10+5])
		require.NoError(t, err)
		err = waitErr(t, d.closed)
		require.ErrorIs(t, err, engine.ErrKeepLimit)
		require.NotErrorIs(t, err, tasks.ErrRejected, "a frame over the keep limit is no rejected task")
		require.Equal(t, "frame: an unfinished frame does not fit: engine: bytes kept over the connection's keep limit: 8197 bytes, limit 8192 (BufferLimits.Keep, Conn.SetKeepLimit)", err.Error())

		d2 := newDigestFrames()
		h2 := frame.Split(frame.LengthPrefixed(4, binary.BigEndian, 1000), d2)
		_, peer2 := acceptOne(t, l, h2)
		_, err = peer2.Write(binary.BigEndian.AppendUint32(nil, 1001)) // the header alone
		require.NoError(t, err)
		err = waitErr(t, d2.closed)
		require.ErrorIs(t, err, frame.ErrTooLong)
		require.ErrorIs(t, err, frame.ErrSplit)
		require.Equal(t, "frame: split: too long: length 1001 over 1000", err.Error())
		// The peer sees the connection end.
		_ = peer2.SetReadDeadline(time.Now().Add(30 * time.Second))
		_, err = peer2.Read(make([]byte, 1))
		require.Error(t, err)
	})
}

// TestFrameMaxRaisesKeepLimit: LengthPrefixed's and Delimited's maximum is
// the one that applies. With the default keep limit (1 MiB), a 2.4 MB frame
// under a 4 MiB maximum arrives whole (it used to end the connection with
// ErrKeepLimit), and so does a 1.5 MiB delimited record under a 2 MiB
// maximum; a small maximum under a larger keep limit still delivers its
// frames, split across writes.
func TestFrameMaxRaisesKeepLimit(t *testing.T) {
	testenv.ForEach(t, func(t *testing.T, c testenv.Combo) {
		testenv.CheckLeaks(t)
		l := newLoop(t, c)
		d := newDigestFrames()
		h := frame.Split(frame.LengthPrefixed(4, binary.BigEndian, 4<<20), d)
		_, peer := acceptOne(t, l, h)
		big := pattern(2_400_000, 9)
		go func() { _, _ = peer.Write(lengthPrefixed(big)) }()
		readDigests(t, peer, [][]byte{big})

		d2 := newDigestFrames()
		h2 := frame.Split(frame.Delimited([]byte("\r\n"), 2<<20), d2)
		_, peer2 := acceptOne(t, l, h2)
		rec := bytes.Repeat([]byte("x"), 1_500_000)
		go func() { _, _ = peer2.Write(append(bytes.Clone(rec), "\r\n"...)) }()
		readDigests(t, peer2, [][]byte{rec})

		// A small maximum with a larger keep limit.
		d3 := newDigestFrames()
		h3 := frame.Split(frame.LengthPrefixed(2, binary.BigEndian, 100), d3)
		_, peer3 := acceptOne(t, l, h3, engine.WithBufferLimits(engine.BufferLimits{Keep: 64 << 10}))
		_, err := peer3.Write(binary.BigEndian.AppendUint16(nil, 100)) // an unfinished 100-byte frame
		require.NoError(t, err)
		_, err = peer3.Write(append(bytes.Repeat([]byte{1}, 100), 0, 1, 7))
		require.NoError(t, err)
		readDigests(t, peer3, [][]byte{bytes.Repeat([]byte{1}, 100), {7}})
	})
}

// TestUnfinishedFrameAtEOF: a peer that closes in the middle of a frame
// ends the connection with io.ErrUnexpectedEOF, and OnClose sees the
// unfinished frame's bytes in Kept.
func TestUnfinishedFrameAtEOF(t *testing.T) {
	testenv.ForEach(t, func(t *testing.T, c testenv.Combo) {
		testenv.CheckLeaks(t)
		l := newLoop(t, c)
		d := newDigestFrames()
		h := frame.Split(bufio.ScanLines, d)
		_, peer := acceptOne(t, l, h)
		_, err := peer.Write([]byte("one\r\ntwo\nthr"))
		require.NoError(t, err)
		readDigests(t, peer, [][]byte{[]byte("one"), []byte("two")})
		require.NoError(t, peer.Close())
		require.ErrorIs(t, waitErr(t, d.closed), io.ErrUnexpectedEOF)
		require.Equal(t, []byte("thr"), <-d.kept)
	})
}

// pausingFrames answers each frame from another goroutine: it pauses
// reading in OnFrame and resumes once the answer is queued, the pattern of a
// handler that offloads work and keeps pipelined requests in order.
type pausingFrames struct {
	digestFrames
	wg sync.WaitGroup
}

func (p *pausingFrames) OnFrame(c *engine.Conn, f []byte) {
	c.PauseRead()
	f = bytes.Clone(f)
	p.wg.Go(func() {
		var out [4 + sha256.Size]byte
		binary.BigEndian.PutUint32(out[:], uint32(len(f)))
		sum := sha256.Sum256(f)
		copy(out[4:], sum[:])
		_ = c.AsyncWrite(out[:])
		c.ResumeRead()
	})
}

// TestResumeReadDeliversKept: frames that arrived together while the
// handler paused after the first are delivered on ResumeRead, in order,
// without the peer sending anything more.
func TestResumeReadDeliversKept(t *testing.T) {
	testenv.ForEach(t, func(t *testing.T, c testenv.Combo) {
		testenv.CheckLeaks(t)
		l := newLoop(t, c)
		p := &pausingFrames{digestFrames: *newDigestFrames()}
		h := frame.Split(frame.Delimited([]byte("\r\n"), 1<<10), p)
		_, peer := acceptOne(t, l, h)
		var frames [][]byte
		var stream []byte
		for i := range 50 {
			f := pattern(1+i*13, byte(i))
			f = bytes.ReplaceAll(f, []byte("\r\n"), []byte("xx"))
			frames = append(frames, f)
			stream = append(append(stream, f...), "\r\n"...)
		}
		_, err := peer.Write(stream) // one write: the frames arrive together
		require.NoError(t, err)
		readDigests(t, peer, frames)
		require.NoError(t, peer.Close())
		require.ErrorIs(t, waitErr(t, p.closed), io.EOF)
		p.wg.Wait()
	})
}

// keepProbe checks Keep's rules from a raw handler: b starts with what the
// last call kept, a second Keep replaces the first, bytes not kept are
// consumed, and Keep outside OnData (on the loop or off it) is refused.
type keepProbe struct {
	prev  []byte // what the last OnData kept
	errs  chan error
	lines chan string
	conns chan *engine.Conn
}

func (k *keepProbe) OnOpen(c *engine.Conn) {
	if err := c.Keep([]byte("x")); err == nil {
		k.errs <- errors.New("Keep in OnOpen was accepted")
	}
	k.conns <- c
}

func (k *keepProbe) OnData(c *engine.Conn, b []byte) {
	if !bytes.HasPrefix(b, k.prev) {
		k.errs <- errors.New("b does not start with the kept bytes")
	}
	i := bytes.IndexByte(b, '\n')
	if i < 0 {
		_ = c.Keep(b[:1]) // replaced below
		_ = c.Keep(b)
		k.prev = bytes.Clone(b)
		return
	}
	k.lines <- string(b[:i])
	k.prev = nil // the rest is dropped
}

func (k *keepProbe) OnClose(c *engine.Conn, err error) { k.errs <- err }

func TestKeepRules(t *testing.T) {
	testenv.ForEach(t, func(t *testing.T, c testenv.Combo) {
		testenv.CheckLeaks(t)
		l := newLoop(t, c)
		k := &keepProbe{errs: make(chan error, 4), lines: make(chan string, 4), conns: make(chan *engine.Conn, 1)}
		_, peer := acceptOne(t, l, k)
		conn := <-k.conns
		// Pieces written one at a time, each read before the next is
		// written (the loop's Kept grows), so each is its own delivery.
		kept := 0
		for _, piece := range []string{"he", "ll", "o\ndropped"} {
			_, err := peer.Write([]byte(piece))
			require.NoError(t, err)
			if kept += len(piece); kept < 5 {
				want := kept
				testenv.Eventually(t, 30*time.Second, "bytes kept", func() bool {
					n, err := engine.Submit(l, func() (int, error) { return len(conn.Kept()), nil }).Await(t.Context())
					return err == nil && n == want
				})
			}
		}
		select {
		case line := <-k.lines:
			require.Equal(t, "hello", line)
		case err := <-k.errs:
			t.Fatal(err)
		case <-time.After(30 * time.Second):
			t.Fatal("no line")
		}
		// What followed the newline was consumed: the next line is whole.
		_, err := peer.Write([]byte("next\n"))
		require.NoError(t, err)
		require.Equal(t, "next", <-k.lines)
		require.Error(t, conn.Keep([]byte("off the loop")))
		require.Nil(t, conn.Kept())
		require.False(t, conn.Reading())
		reading, err := engine.Submit(l, func() (bool, error) { return conn.Reading(), nil }).Await(t.Context())
		require.NoError(t, err)
		require.True(t, reading)
		// CloseWithError from another goroutine: OnClose gets the error.
		why := errors.New("protocol violation")
		require.NoError(t, conn.CloseWithError(why))
		require.ErrorIs(t, waitErr(t, k.errs), why)
		_ = peer.SetReadDeadline(time.Now().Add(30 * time.Second))
		_, err = io.ReadAll(peer)
		require.NoError(t, err)
	})
}

// upgradingLines answers lines in upper case until the line UPGRADE, which
// hands the connection to a raw echo handler (SetHandler) in the middle of
// a read: the bytes behind that line reach the new handler, none of them
// the old one.
type upgradingLines struct{ raw *rawEcho }

func (u *upgradingLines) OnOpen(c *engine.Conn) {}
func (u *upgradingLines) OnFrame(c *engine.Conn, line []byte) {
	if string(line) == "UPGRADE" {
		if err := c.SetHandler(u.raw, nil); err != nil {
			_ = c.CloseWithError(err)
		}
		return
	}
	_, _ = c.Write(append(bytes.ToUpper(line), '\n'))
}
func (u *upgradingLines) OnClose(c *engine.Conn, err error) {}

type rawEcho struct{ closed chan error }

func (r *rawEcho) OnOpen(c *engine.Conn)             { _, _ = c.Write([]byte("raw:")) }
func (r *rawEcho) OnData(c *engine.Conn, b []byte)   { _, _ = c.Write(b) }
func (r *rawEcho) OnClose(c *engine.Conn, err error) { r.closed <- err }

func TestSetHandlerFromFrames(t *testing.T) {
	testenv.ForEach(t, func(t *testing.T, c testenv.Combo) {
		testenv.CheckLeaks(t)
		l := newLoop(t, c)
		raw := &rawEcho{closed: make(chan error, 1)}
		_, peer := acceptOne(t, l, frame.Split(bufio.ScanLines, &upgradingLines{raw: raw}))
		_, err := peer.Write([]byte("one\nUPGRADE\nline\nbytes"))
		require.NoError(t, err)
		want := "ONE\nraw:line\nbytes"
		got := make([]byte, len(want))
		_ = peer.SetReadDeadline(time.Now().Add(30 * time.Second))
		_, err = io.ReadFull(peer, got)
		require.NoError(t, err)
		require.Equal(t, want, string(got))
		_, err = peer.Write([]byte("more\n"))
		require.NoError(t, err)
		got = make([]byte, 5)
		_, err = io.ReadFull(peer, got)
		require.NoError(t, err)
		require.Equal(t, "more\n", string(got))
		require.NoError(t, peer.Close())
		require.ErrorIs(t, waitErr(t, raw.closed), io.EOF)
	})
}

// Package frame turns a connection's byte stream into whole frames for an
// engine handler: lines, delimited records, length-prefixed messages, or any
// bufio.SplitFunc.
//
//	h := frame.Split(frame.LengthPrefixed(4, binary.BigEndian, 1<<20), myFrames{})
//	ln, err := engine.Listen(loop, "tcp", addr, h)
//
// The handler's OnFrame gets each frame as a slice of the received bytes:
// frames that arrived whole are never copied, and a frame that spans reads
// is assembled once in the connection's kept bytes (engine.Conn.Keep) rather
// than re-parsed from the start on every read. The connection's keep limit
// (engine.WithKeepLimit) bounds a frame; a larger one ends the connection
// with an error wrapping engine.ErrKeepLimit.
//
// A handler that calls PauseRead in OnFrame gets no further frame until
// ResumeRead, which delivers the frames already received at once: pipelined
// requests are served in order with backpressure.
package frame

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
// than re-parsed from the start on every read. LengthPrefixed's and
// Delimited's maximum bounds a frame: Split raises the connection's keep
// limit (engine.BufferLimits.Keep, 1 MiB by default) to hold it. With another
// split function the keep limit bounds a frame, and a larger one ends the
// connection with an error wrapping engine.ErrKeepLimit, naming the sizes.
//
// A handler that calls PauseRead in OnFrame gets no further frame until
// ResumeRead, which delivers the frames already received at once: pipelined
// requests are served in order with backpressure.
package frame

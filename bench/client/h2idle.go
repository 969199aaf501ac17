package client

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"

	"golang.org/x/net/http2"
	"golang.org/x/net/http2/hpack"
)

// h2Conn is an HTTP/2 connection over TLS (ALPN h2) that makes one GET at
// a time, with no goroutine of its own: the idle holder keeps thousands.
type h2Conn struct {
	*tls.Conn
	fr     *http2.Framer
	hbuf   bytes.Buffer
	enc    *hpack.Encoder
	stream uint32 // the last stream opened
	host   string
}

// h2Client completes a full TLS 1.3 handshake on raw, dialed to addr,
// that must negotiate h2, and sends the client preface and an empty
// SETTINGS. It closes raw on failure.
func h2Client(ctx context.Context, raw net.Conn, addr string) (*h2Conn, error) {
	cfg := freshClientConfig()
	cfg.NextProtos = []string{"h2"}
	tc := tls.Client(raw, cfg)
	if err := tc.HandshakeContext(ctx); err != nil {
		raw.Close()
		return nil, fmt.Errorf("TLS handshake: %w", err)
	}
	if p := tc.ConnectionState().NegotiatedProtocol; p != "h2" {
		tc.Close()
		return nil, fmt.Errorf("ALPN gave %q, not h2", p)
	}
	c := &h2Conn{Conn: tc, fr: http2.NewFramer(tc, tc), host: addr}
	c.fr.ReadMetaHeaders = hpack.NewDecoder(4096, nil)
	c.enc = hpack.NewEncoder(&c.hbuf)
	if _, err := tc.Write([]byte(http2.ClientPreface)); err != nil {
		tc.Close()
		return nil, err
	}
	if err := c.fr.WriteSettings(); err != nil {
		tc.Close()
		return nil, err
	}
	return c, nil
}

// get sends GET /plaintext on a new stream and reads frames until its
// response (a 200) has ended, answering the server's SETTINGS and PINGs on
// the way and giving the connection's window back as DATA arrives (the
// warm-up's thousands of answers would drain it).
func (c *h2Conn) get() error {
	c.stream += 2
	if c.stream == 2 {
		c.stream = 1
	}
	c.hbuf.Reset()
	for _, f := range [...]hpack.HeaderField{{Name: ":method", Value: "GET"}, {Name: ":scheme", Value: "https"},
		{Name: ":authority", Value: c.host}, {Name: ":path", Value: "/plaintext"}} {
		if err := c.enc.WriteField(f); err != nil {
			return err
		}
	}
	if err := c.fr.WriteHeaders(http2.HeadersFrameParam{StreamID: c.stream, BlockFragment: c.hbuf.Bytes(), EndStream: true, EndHeaders: true}); err != nil {
		return err
	}
	for {
		f, err := c.fr.ReadFrame()
		if err != nil {
			return err
		}
		switch f := f.(type) {
		case *http2.SettingsFrame:
			if !f.IsAck() {
				if err := c.fr.WriteSettingsAck(); err != nil {
					return err
				}
			}
		case *http2.PingFrame:
			if !f.IsAck() {
				if err := c.fr.WritePing(true, f.Data); err != nil {
					return err
				}
			}
		case *http2.GoAwayFrame:
			return fmt.Errorf("GOAWAY %v", f.ErrCode)
		case *http2.RSTStreamFrame:
			return fmt.Errorf("RST_STREAM %v on stream %d", f.ErrCode, f.StreamID)
		case *http2.MetaHeadersFrame:
			if f.StreamID != c.stream {
				continue
			}
			if st := f.PseudoValue("status"); st != "200" {
				return fmt.Errorf("status %q", st)
			}
			if f.StreamEnded() {
				return errors.New("a response without a body")
			}
		case *http2.DataFrame:
			if n := len(f.Data()); n > 0 {
				if err := c.fr.WriteWindowUpdate(0, uint32(n)); err != nil {
					return err
				}
			}
			if f.StreamID == c.stream && f.StreamEnded() {
				return nil
			}
		}
	}
}

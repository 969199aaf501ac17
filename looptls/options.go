package looptls

import "time"

// Defaults.
const (
	// DefaultHandshakeTimeout bounds a handshake (a peer that stalls).
	DefaultHandshakeTimeout = 10 * time.Second
	// DefaultMaxHandshakeBytes bounds the ciphertext a connection buffers
	// during its handshake: past it reading pauses until the handshake
	// has consumed them. Enough for a client's certificate chain and its
	// first records.
	DefaultMaxHandshakeBytes = 64 << 10
)

// Option configures Server and Client. What is not TLS's is the engine
// connection's, set with engine's ConnOptions as for a plain connection:
// the keep limit bounds plaintext kept, the watermarks and the async write
// limit count plaintext waiting to be encrypted and ciphertext waiting for
// the socket.
type Option func(*options)

type options struct {
	handshakeTimeout time.Duration
	maxHandshake     int
}

func newOptions(opts []Option) options {
	o := options{handshakeTimeout: DefaultHandshakeTimeout, maxHandshake: DefaultMaxHandshakeBytes}
	for _, f := range opts {
		f(&o)
	}
	return o
}

// WithHandshakeTimeout bounds the handshake (default
// DefaultHandshakeTimeout); past it the connection is closed and
// OnHandshakeError told ErrHandshakeTimeout.
func WithHandshakeTimeout(d time.Duration) Option {
	return func(o *options) {
		if d > 0 {
			o.handshakeTimeout = d
		}
	}
}

// WithMaxHandshakeBytes bounds the ciphertext buffered during the handshake
// (default DefaultMaxHandshakeBytes).
func WithMaxHandshakeBytes(n int) Option {
	return func(o *options) {
		if n > 0 {
			o.maxHandshake = n
		}
	}
}

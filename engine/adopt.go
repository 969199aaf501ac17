package engine

import (
	"fmt"
	"os"

	"golang.org/x/sys/unix"
)

// Adopting sockets the process did not open itself: a listening socket
// inherited from systemd (socket activation) or from the process it
// replaces (a hot restart), and a connection accepted or dialed elsewhere.
//
// Ownership: on success the loop owns fd. Listener.Close and the
// connection's close close it, and so does the loop's shutdown; the caller
// must not use or close it any more (dup it first to keep a copy). On error
// fd is still the caller's and stays open. The fd is switched to
// non-blocking and close-on-exec. An *os.File's descriptor must be
// duplicated before adoption (package netconn's FileListener and FileConn
// do), since the File closes its own when collected.

// ListenFD serves an already listening stream socket (TCP or Unix) on loop l,
// as Listen does for a socket it opens. The socket's options and backlog are
// kept; opts set those of the accepted connections. Closing the listener
// never removes a Unix socket's path: it belongs to whoever bound it.
func ListenFD(l *Loop, fd int, h Handler, opts ...ConnOption) (*Listener, error) {
	family, cfg, err := adoptable(fd, h, opts, isListening)
	if err != nil {
		return nil, err
	}
	if err := ownFD(fd, "ListenFD"); err != nil {
		return nil, err
	}
	return serveListener(l, fd, family, h, cfg, true)
}

// Adopt serves an already connected stream socket (TCP or Unix) on loop l:
// OnOpen runs on the loop before Adopt returns. opts set TCP_NODELAY and
// keep-alive as for accepted connections, watermarks and idle timeouts.
func Adopt(l *Loop, fd int, h Handler, opts ...ConnOption) (*Conn, error) {
	family, cfg, err := adoptable(fd, h, opts, isConnected)
	if err != nil {
		return nil, err
	}
	if err := applyConnOptions(fd, family, cfg, false); err != nil {
		return nil, err
	}
	if err := ownFD(fd, "Adopt"); err != nil {
		return nil, err
	}
	var c *Conn
	err = l.onLoop(func() error {
		if l.State() >= ShuttingDown {
			return ErrShutdown
		}
		c = newConn(l, fd, h, cfg)
		c.open()
		return nil
	})
	return c, err
}

// adoptable checks what ListenFD and Adopt take, without changing fd: a
// handler, a stream socket of a supported family that passes state (listening,
// or connected), and opts for its network. It returns the family and the
// connection options.
func adoptable(fd int, h Handler, opts []ConnOption, state func(fd int) error) (int, *connConfig, error) {
	if h == nil {
		return 0, nil, errNilHandler
	}
	family, err := streamSocket(fd)
	if err != nil {
		return 0, nil, err
	}
	if err := state(fd); err != nil {
		return 0, nil, err
	}
	cfg, err := newConnConfig(networkOf(family), opts)
	if err != nil {
		return 0, nil, err
	}
	return family, cfg, nil
}

func isListening(fd int) error {
	if on, err := unix.GetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_ACCEPTCONN); err != nil || on == 0 {
		return fmt.Errorf("engine: ListenFD: fd %d is not a listening socket", fd)
	}
	return nil
}

func isConnected(fd int) error {
	if _, err := unix.Getpeername(fd); err != nil {
		return fmt.Errorf("engine: Adopt: fd %d is not a connected socket: %w", fd, err)
	}
	return nil
}

// ownFD switches an adopted fd to non-blocking and close-on-exec, as the
// loop's own sockets are; op names the caller in the error.
func ownFD(fd int, op string) error {
	if err := unix.SetNonblock(fd, true); err != nil {
		return os.NewSyscallError(op+": fcntl", err)
	}
	unix.CloseOnExec(fd)
	return nil
}

// streamSocket returns the family of a stream socket, or why fd is not one.
func streamSocket(fd int) (int, error) {
	typ, err := unix.GetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_TYPE)
	if err != nil {
		return 0, fmt.Errorf("engine: fd %d is not a socket: %w", fd, err)
	}
	if typ != unix.SOCK_STREAM {
		return 0, fmt.Errorf("engine: fd %d is not a stream socket (type %d)", fd, typ)
	}
	family, err := unix.GetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_DOMAIN)
	if err != nil {
		return 0, os.NewSyscallError("getsockopt SO_DOMAIN", err)
	}
	switch family {
	case unix.AF_INET, unix.AF_INET6, unix.AF_UNIX:
		return family, nil
	}
	return 0, fmt.Errorf("engine: fd %d: unsupported socket family %d", fd, family)
}

func networkOf(family int) string {
	if family == unix.AF_UNIX {
		return "unix"
	}
	return "tcp"
}

// Dup returns a close-on-exec duplicate of the listening socket's descriptor,
// for handing it to another process (a hot restart); the caller owns it. The
// socket is shared from then on, so Close no longer shuts it down: it closes
// only the listener's own descriptor and the socket keeps accepting for the
// other holders. Safe from any goroutine.
func (ln *Listener) Dup() (int, error) {
	ln.shared.Store(true)
	fd, err := unix.FcntlInt(uintptr(ln.fd), unix.F_DUPFD_CLOEXEC, 0)
	if err != nil {
		return -1, os.NewSyscallError("fcntl", err)
	}
	return fd, nil
}

package netconn

import (
	"fmt"
	"net"
	"os"
	"strconv"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/ringloop/ringloop/engine"
)

// FileListener serves the listening socket behind f (inherited from systemd,
// see ActivationFiles, or from the process this one replaces) on loops, as
// Listen does. It duplicates the descriptor, as net.FileListener does: f
// stays the caller's to close, and the Listener owns its copy.
func FileListener(loops engine.Loops, f *os.File, opts ...Option) (*Listener, error) {
	cfg, fd, err := fileConfig(f, opts)
	if err != nil {
		return nil, err
	}
	l, err := listen(loops, cfg, func(lp *engine.Loop, h engine.Handler, copts []engine.ConnOption) (*engine.Listener, error) {
		return engine.ListenFD(lp, fd, h, copts...)
	})
	if err != nil {
		unix.Close(fd)
		return nil, err
	}
	return l, nil
}

// FileConn serves the connected socket behind f on loops.Next(). Like
// FileListener it duplicates the descriptor: f stays the caller's.
func FileConn(loops engine.Loops, f *os.File, opts ...Option) (*Conn, error) {
	cfg, fd, err := fileConfig(f, opts)
	if err != nil {
		return nil, err
	}
	loop := loops.Next()
	nc := newConn(loop, cfg, "")
	c, err := engine.Adopt(loop, fd, &handler{nc: nc, cfg: cfg}, cfg.conn...)
	if err != nil {
		unix.Close(fd)
		return nil, err
	}
	// The loop never reads these.
	nc.laddr, nc.raddr = c.LocalAddr(), c.RemoteAddr()
	if nc.laddr != nil {
		nc.network = nc.laddr.Network()
	}
	return nc, nil
}

// File returns a duplicate of the listening socket, for handing it to
// another process (exec.Cmd.ExtraFiles) in a hot restart; the listener
// keeps serving until closed, and its Close then leaves the socket
// listening for the other process (see engine.Listener.Dup).
func (l *Listener) File() (*os.File, error) {
	fd, err := l.ln.Dup()
	if err != nil {
		return nil, err
	}
	return os.NewFile(uintptr(fd), "ringloop-listener:"+l.Addr().String()), nil
}

// fileConfig reads opts, then duplicates f's descriptor: FileListener's and
// FileConn's start (the copy is theirs to close from then on).
func fileConfig(f *os.File, opts []Option) (*config, int, error) {
	cfg, err := newConfig(opts)
	if err != nil {
		return nil, -1, err
	}
	fd, err := dupFile(f)
	if err != nil {
		return nil, -1, err
	}
	return cfg, fd, nil
}

// dupFile duplicates f's descriptor (close-on-exec) without putting f into
// blocking mode, as f.Fd would.
func dupFile(f *os.File) (int, error) {
	rc, err := f.SyscallConn()
	if err != nil {
		return -1, err
	}
	dup, derr := -1, error(nil)
	if err := rc.Control(func(fd uintptr) {
		dup, derr = unix.FcntlInt(fd, unix.F_DUPFD_CLOEXEC, 0)
	}); err != nil {
		return -1, err
	}
	if derr != nil {
		return -1, os.NewSyscallError("fcntl", derr)
	}
	return dup, nil
}

// Socket activation (sd_listen_fds): systemd, and anything that speaks its
// protocol, passes listening sockets from fd 3 on, with LISTEN_FDS their
// count, LISTEN_PID the pid they are meant for and LISTEN_FDNAMES their
// colon-separated names.
const listenFDsStart = 3

// ActivationFiles returns the sockets passed to this process by socket
// activation, named after LISTEN_FDNAMES (else "LISTEN_FD_<n>"), and unsets
// the variables so child processes do not take them for theirs. It returns
// nothing when LISTEN_PID names another process or LISTEN_FDS is unset. The
// files are close-on-exec; serve them with FileListener, then close them.
func ActivationFiles() ([]*os.File, error) {
	pid, fds, names := os.Getenv("LISTEN_PID"), os.Getenv("LISTEN_FDS"), os.Getenv("LISTEN_FDNAMES")
	if pid == "" || fds == "" {
		return nil, nil
	}
	if p, err := strconv.Atoi(pid); err != nil || p != os.Getpid() {
		return nil, nil
	}
	defer func() {
		for _, v := range []string{"LISTEN_PID", "LISTEN_FDS", "LISTEN_FDNAMES"} {
			os.Unsetenv(v)
		}
	}()
	n, err := strconv.Atoi(fds)
	if err != nil || n < 0 || n > 1<<16 {
		return nil, fmt.Errorf("netconn: LISTEN_FDS=%q (expected a count)", fds)
	}
	var nameList []string
	if names != "" {
		nameList = strings.Split(names, ":")
	}
	files := make([]*os.File, 0, n)
	for i := range n {
		fd := listenFDsStart + i
		if _, err := unix.FcntlInt(uintptr(fd), unix.F_GETFD, 0); err != nil {
			for _, f := range files {
				f.Close()
			}
			return nil, fmt.Errorf("netconn: LISTEN_FDS=%d but fd %d is not open: %w", n, fd, err)
		}
		syscall.CloseOnExec(fd)
		name := "LISTEN_FD_" + strconv.Itoa(fd)
		if i < len(nameList) && nameList[i] != "" {
			name = nameList[i]
		}
		files = append(files, os.NewFile(uintptr(fd), name))
	}
	return files, nil
}

var _ net.Listener = (*Listener)(nil)
var _ net.Conn = (*Conn)(nil)

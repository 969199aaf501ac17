package peers

import (
	"context"
	"fmt"
	"net"
	"os"
	"time"

	"github.com/panjf2000/gnet/v2"
	"github.com/panjf2000/gnet/v2/pkg/logging"
)

// gnetServer runs one gnet engine with one event loop.
type gnetServer struct {
	eng    gnet.Engine
	addr   string
	detail string
	done   chan error
}

func (s *gnetServer) Addr() string { return s.addr }
func (s *gnetServer) Info() Info {
	return Info{Backend: "epoll", Threading: "event-loop", Detail: s.detail}
}

func (s *gnetServer) Close() error {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := s.eng.Stop(ctx); err != nil {
		return err
	}
	return <-s.done
}

// booter hands the engine over once gnet has bound its listener.
type booter struct {
	gnet.EventHandler
	booted chan gnet.Engine
}

func (b booter) OnBoot(e gnet.Engine) gnet.Action {
	b.booted <- e
	return b.EventHandler.OnBoot(e)
}

// startGnet serves h over TCP on one gnet event loop.
func startGnet(c Config, h gnet.EventHandler) (Server, error) { return startGnetOn("tcp", c, h) }

// startGnetOn serves h on one gnet event loop, network "tcp" or "udp".
// gnet cannot listen on port 0 and say which port it got without a
// duplicate of its fd: it is asked for.
func startGnetOn(network string, c Config, h gnet.EventHandler, opts ...gnet.Option) (Server, error) {
	b := booter{h, make(chan gnet.Engine, 1)}
	s := &gnetServer{done: make(chan error, 1), detail: "gnet v2.10.0, one loop"}
	opts = append([]gnet.Option{gnet.WithMulticore(false), gnet.WithNumEventLoop(1),
		gnet.WithReuseAddr(true), gnet.WithLogger(quietLogger{}), gnet.WithLogLevel(logging.ErrorLevel)}, opts...)
	go func() { s.done <- gnet.Run(b, network+"://"+c.Addr, opts...) }()
	select {
	case s.eng = <-b.booted:
	case err := <-s.done:
		return nil, fmt.Errorf("gnet: %v", err)
	}
	fd, err := s.eng.Dup()
	if err != nil {
		return nil, err
	}
	f := os.NewFile(uintptr(fd), "gnet-listener")
	defer f.Close()
	if network == "udp" {
		s.detail += "; " + fdBuffers(fd)
		pc, err := net.FilePacketConn(f)
		if err != nil {
			return nil, err
		}
		s.addr = pc.LocalAddr().String()
		pc.Close()
		return s, nil
	}
	ln, err := net.FileListener(f)
	if err != nil {
		return nil, err
	}
	s.addr = ln.Addr().String()
	ln.Close()
	return s, nil
}

// quietLogger keeps gnet's start-up chatter off stdout, where the banner
// must be the first line; errors go to stderr.
type quietLogger struct{}

func (quietLogger) Debugf(string, ...any) {}
func (quietLogger) Infof(string, ...any)  {}
func (quietLogger) Warnf(f string, a ...any) {
	fmt.Fprintf(os.Stderr, "gnet: "+f+"\n", a...)
}
func (quietLogger) Errorf(f string, a ...any) { fmt.Fprintf(os.Stderr, "gnet: "+f+"\n", a...) }
func (quietLogger) Fatalf(f string, a ...any) {
	fmt.Fprintf(os.Stderr, "gnet: "+f+"\n", a...)
	os.Exit(1)
}

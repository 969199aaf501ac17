package peers

import (
	"context"
	"net"
	"net/http"

	"google.golang.org/grpc"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/wrapperspb"

	"github.com/ringloop/ringloop/engine"
	"github.com/ringloop/ringloop/httpserver"
)

// The gRPC peers serve one unary method, GRPCMethod (a BytesValue back as
// it came), over h2c with prior knowledge, which is what grpc-go's client
// speaks with insecure credentials: grpc-go's own server on net's listener
// (its HTTP/2 transport, a goroutine per connection and per RPC) and on
// ringloop's (netconn), and grpc-go's Server.ServeHTTP mounted on
// httpserver's adapter as examples/grpc does, and on net/http's own h2c
// server (what ServeHTTP costs there: the adapter's share is the
// difference). Each ringloop row runs its backend's default threading mode.
func init() {
	Register(Peer{Name: "grpc-go", Kind: GRPC, Doc: "grpc-go's own server (Server.Serve) on net.Listen, h2c", Start: startGRPCGo})
	Register(Peer{Name: "grpc-go-servehttp", Kind: GRPC, Doc: "grpc-go's Server.ServeHTTP on net/http's HTTP/2 in clear (Protocols: UnencryptedHTTP2)", Start: startGRPCServeHTTP})
	for _, b := range Backends {
		modes := func() []string { return []string{DefaultThreading(b)} }
		Register(Peer{
			Name:       "grpc-go-on-ringloop-" + rowSuffix(b),
			Kind:       GRPC,
			Doc:        "grpc-go's own server (Server.Serve) on ringloop's net.Listener (package netconn), one loop, h2c; " + b.String() + " backend forced, its default threading mode",
			Start:      func(c Config) (Server, error) { return startGRPCOnNetconn(b, c) },
			Modes:      modes,
			NeedsURing: b == engine.BackendUring,
		})
		Register(Peer{
			Name:       "ringloop-grpc-adapter-" + rowSuffix(b),
			Kind:       GRPC,
			Doc:        "grpc-go's Server.ServeHTTP on ringloop httpserver's adapter (WithH2C), one loop; " + b.String() + " backend forced, its default threading mode",
			Start:      func(c Config) (Server, error) { return startRingloopGRPC(b, c) },
			Modes:      modes,
			NeedsURing: b == engine.BackendUring,
		})
	}
}

// GRPCMethod is the path of the one method every gRPC peer serves.
const GRPCMethod = "/ringloop.bench.Echo/Echo"

// GRPCRequest is a whole gRPC request body for GRPCMethod: an uncompressed
// message (flag 0, 4-byte big-endian length) holding a BytesValue of the
// plaintext answer; the response's body is the same bytes.
func GRPCRequest() []byte {
	msg, err := proto.Marshal(wrapperspb.Bytes([]byte(PlaintextBody)))
	if err != nil {
		panic(err) // a well-known type always marshals
	}
	n := len(msg)
	return append([]byte{0, byte(n >> 24), byte(n >> 16), byte(n >> 8), byte(n)}, msg...)
}

// grpcEcho describes the service to grpc-go, as generated code would.
var grpcEcho = grpc.ServiceDesc{
	ServiceName: "ringloop.bench.Echo",
	HandlerType: (*any)(nil),
	Methods: []grpc.MethodDesc{{
		MethodName: "Echo",
		Handler: func(_ any, ctx context.Context, dec func(any) error, icpt grpc.UnaryServerInterceptor) (any, error) {
			in := new(wrapperspb.BytesValue)
			if err := dec(in); err != nil {
				return nil, err
			}
			if icpt == nil {
				return in, nil
			}
			return icpt(ctx, in, &grpc.UnaryServerInfo{FullMethod: GRPCMethod}, func(_ context.Context, req any) (any, error) { return req, nil })
		},
	}},
	Metadata: "ringloop/bench/grpc",
}

func newGRPCServer() *grpc.Server {
	gs := grpc.NewServer()
	gs.RegisterService(&grpcEcho, nil)
	return gs
}

func startGRPCGo(c Config) (Server, error) {
	ln, err := net.Listen("tcp", c.Addr)
	if err != nil {
		return nil, err
	}
	gs := newGRPCServer()
	go func() { _ = gs.Serve(ln) }()
	return &closer{addr: ln.Addr().String(), info: Info{Backend: "netpoll", Threading: "goroutines"}, close: func() error { gs.Stop(); return nil }}, nil
}

func startGRPCServeHTTP(c Config) (Server, error) {
	ln, err := net.Listen("tcp", c.Addr)
	if err != nil {
		return nil, err
	}
	var p http.Protocols
	p.SetUnencryptedHTTP2(true)
	srv := &http.Server{Handler: newGRPCServer(), Protocols: &p}
	go func() { _ = srv.Serve(ln) }()
	return &closer{addr: ln.Addr().String(), info: Info{Backend: "netpoll", Threading: "goroutines"}, close: srv.Close}, nil
}

func startGRPCOnNetconn(b engine.Backend, c Config) (Server, error) {
	return startOnNetconn(b, c, "grpc-go", func(ln net.Listener) func() error {
		gs := newGRPCServer()
		go func() { _ = gs.Serve(ln) }()
		return func() error { gs.Stop(); return nil }
	})
}

// startRingloopGRPC mounts grpc-go's ServeHTTP on the adapter over h2c,
// with no read timeout (gRPC has deadlines of its own), as examples/grpc.
func startRingloopGRPC(b engine.Backend, c Config) (Server, error) {
	loop, err := benchLoop(c, engine.WithBackend(b))
	if err != nil {
		return nil, err
	}
	srv, err := httpserver.New(newGRPCServer(), httpserver.WithH2C(), httpserver.WithTimeouts(httpserver.Timeouts{Read: httpserver.NoTimeout}))
	if err != nil {
		_ = loop.Close()
		return nil, err
	}
	a, err := srv.Listen(loop, "tcp", c.Addr)
	if err != nil {
		_ = loop.Close()
		return nil, err
	}
	bi := loop.Backend()
	return &ringloopHTTP{loop, srv, a.String(), Info{Backend: bi.Name.String(), Threading: bi.Threading.String(), Detail: bi.Features.String()}}, nil
}

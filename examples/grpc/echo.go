package main

import (
	"context"
	"errors"
	"io"
	"sync/atomic"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/durationpb"
	"google.golang.org/protobuf/types/known/emptypb"
	"google.golang.org/protobuf/types/known/wrapperspb"
)

// ringloop.example.Echo, a service with one RPC of each kind, its
// messages protobuf's well-known types (so it needs no generated code):
//
//	Echo(BytesValue) BytesValue                 unary: the same bytes back
//	Fail(StringValue) Empty                     unary: status INVALID_ARGUMENT, message the request's
//	Sleep(Duration) Empty                       unary: returns after the duration, or when the RPC ends
//	Count(Int64Value) stream Int64Value         server streaming: 1..n (n < 0: until cancelled)
//	Sum(stream Int64Value) Int64Value           client streaming: the sum of the values
//	Chat(stream BytesValue) stream BytesValue   bidi: each message back as it comes
//	Cancelled(Empty) Int64Value                 how many RPCs saw their context cancelled by their client
//
// Every RPC sends the request's "x-echo" metadata back in its header
// metadata and as "x-echo-trailer" in its trailer; a streaming RPC sends
// its header at once then.
const echoService = "ringloop.example.Echo"

type echoServer struct {
	cancelled atomic.Int64
}

// echoMetadata sends the request's x-echo values back in the header and
// trailer.
func echoMetadata(ctx context.Context, setHeader func(metadata.MD) error, setTrailer func(metadata.MD)) error {
	md, _ := metadata.FromIncomingContext(ctx)
	v := md.Get("x-echo")
	if len(v) == 0 {
		return nil
	}
	setTrailer(metadata.Pairs("x-echo-trailer", v[0]))
	return setHeader(metadata.Pairs("x-echo", v[0]))
}

// sawCancel counts an RPC whose client cancelled it, as its context told.
func (s *echoServer) sawCancel(ctx context.Context) {
	if errors.Is(ctx.Err(), context.Canceled) {
		s.cancelled.Add(1)
	}
}

func (s *echoServer) echo(ctx context.Context, in *wrapperspb.BytesValue) (*wrapperspb.BytesValue, error) {
	return in, nil
}

func (s *echoServer) fail(ctx context.Context, in *wrapperspb.StringValue) (*emptypb.Empty, error) {
	return nil, status.Error(codes.InvalidArgument, in.Value)
}

func (s *echoServer) sleep(ctx context.Context, in *durationpb.Duration) (*emptypb.Empty, error) {
	t := time.NewTimer(in.AsDuration())
	defer t.Stop()
	select {
	case <-t.C:
		return &emptypb.Empty{}, nil
	case <-ctx.Done():
		s.sawCancel(ctx)
		return nil, status.FromContextError(ctx.Err()).Err()
	}
}

func (s *echoServer) count(in *wrapperspb.Int64Value, st grpc.ServerStream) error {
	for i := int64(1); in.Value < 0 || i <= in.Value; i++ {
		if err := st.SendMsg(wrapperspb.Int64(i)); err != nil {
			s.sawCancel(st.Context())
			return err
		}
	}
	return nil
}

func (s *echoServer) sum(st grpc.ServerStream) error {
	var sum int64
	for {
		var in wrapperspb.Int64Value
		if err := st.RecvMsg(&in); err == io.EOF {
			return st.SendMsg(wrapperspb.Int64(sum))
		} else if err != nil {
			s.sawCancel(st.Context())
			return err
		}
		sum += in.Value
	}
}

func (s *echoServer) chat(st grpc.ServerStream) error {
	for {
		var in wrapperspb.BytesValue
		if err := st.RecvMsg(&in); err == io.EOF {
			return nil
		} else if err != nil {
			s.sawCancel(st.Context())
			return err
		}
		if err := st.SendMsg(&in); err != nil {
			s.sawCancel(st.Context())
			return err
		}
	}
}

func (s *echoServer) cancelledCount(ctx context.Context, _ *emptypb.Empty) (*wrapperspb.Int64Value, error) {
	return wrapperspb.Int64(s.cancelled.Load()), nil
}

// unary makes a unary method's handler of a method taking Req.
func unary[Req any, PReq interface {
	*Req
	any
}, Resp any](name string, f func(*echoServer, context.Context, PReq) (Resp, error)) grpc.MethodDesc {
	return grpc.MethodDesc{
		MethodName: name,
		Handler: func(srv any, ctx context.Context, dec func(any) error, icpt grpc.UnaryServerInterceptor) (any, error) {
			in := PReq(new(Req))
			if err := dec(in); err != nil {
				return nil, err
			}
			if err := echoMetadata(ctx, func(md metadata.MD) error { return grpc.SetHeader(ctx, md) }, func(md metadata.MD) { _ = grpc.SetTrailer(ctx, md) }); err != nil {
				return nil, err
			}
			call := func(ctx context.Context, req any) (any, error) { return f(srv.(*echoServer), ctx, req.(PReq)) }
			if icpt == nil {
				return call(ctx, in)
			}
			return icpt(ctx, in, &grpc.UnaryServerInfo{Server: srv, FullMethod: "/" + echoService + "/" + name}, call)
		},
	}
}

// streaming makes a streaming method's handler.
func streaming(name string, client, server bool, f func(*echoServer, grpc.ServerStream) error) grpc.StreamDesc {
	return grpc.StreamDesc{
		StreamName:    name,
		ClientStreams: client,
		ServerStreams: server,
		Handler: func(srv any, st grpc.ServerStream) error {
			if err := echoMetadata(st.Context(), st.SendHeader, st.SetTrailer); err != nil {
				return err
			}
			return f(srv.(*echoServer), st)
		},
	}
}

// echoDesc describes the service to grpc-go, as generated code would.
var echoDesc = grpc.ServiceDesc{
	ServiceName: echoService,
	HandlerType: (*any)(nil),
	Methods: []grpc.MethodDesc{
		unary("Echo", (*echoServer).echo),
		unary("Fail", (*echoServer).fail),
		unary("Sleep", (*echoServer).sleep),
		unary("Cancelled", (*echoServer).cancelledCount),
	},
	Streams: []grpc.StreamDesc{
		streaming("Count", false, true, func(s *echoServer, st grpc.ServerStream) error {
			var in wrapperspb.Int64Value
			if err := st.RecvMsg(&in); err != nil {
				return err
			}
			return s.count(&in, st)
		}),
		streaming("Sum", true, false, (*echoServer).sum),
		streaming("Chat", true, true, (*echoServer).chat),
	},
	Metadata: "ringloop/example/echo",
}

func registerEcho(s *grpc.Server, srv *echoServer) { s.RegisterService(&echoDesc, srv) }

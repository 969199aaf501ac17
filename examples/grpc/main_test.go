package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"errors"
	"io"
	"os"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/durationpb"
	"google.golang.org/protobuf/types/known/emptypb"
	"google.golang.org/protobuf/types/known/wrapperspb"

	"github.com/ringloop/ringloop/internal/testenv"
)

func TestMain(m *testing.M) {
	testenv.RunMain(main)
	runInteropCase() // when started as an interop client case (interop_test.go)
	os.Exit(m.Run())
}

// server is the command running in a child process, and how to reach it.
type server struct {
	addr  string
	creds credentials.TransportCredentials
	ca    string // the CA file over TLS
}

// startServer runs the command over h2c or TLS (with a certificate for
// localhost and 127.0.0.1).
func startServer(t *testing.T, c testenv.Combo, tls bool) (*testenv.MainProcess, server) {
	t.Helper()
	if !tls {
		p := testenv.StartMain(t, c, "-addr", "127.0.0.1:0", "-h2c")
		return p, server{addr: p.Addr, creds: insecure.NewCredentials()}
	}
	pki := testenv.NewPKI(t)
	cert, key := pki.LeafFiles(t, "localhost", "localhost", "127.0.0.1")
	p := testenv.StartMain(t, c, "-addr", "127.0.0.1:0", "-cert", cert, "-key", key)
	creds, err := credentials.NewClientTLSFromFile(pki.CAFile, "localhost")
	if err != nil {
		t.Fatal(err)
	}
	return p, server{addr: p.Addr, creds: creds, ca: pki.CAFile}
}

func dial(t *testing.T, s server) *grpc.ClientConn {
	t.Helper()
	cc, err := grpc.NewClient("passthrough:///"+s.addr, grpc.WithTransportCredentials(s.creds),
		grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(maxMsg), grpc.MaxCallSendMsgSize(maxMsg)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cc.Close() })
	return cc
}

const echoPrefix = "/" + echoService + "/"

// testContext bounds an RPC (and its checks) at a minute.
func testContext(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	t.Cleanup(cancel)
	return ctx
}

// TestGRPC runs the command over h2c and TLS and calls the Echo service
// with grpc-go's client: every kind of RPC, metadata and trailers, status
// errors, an 8 MiB message each way (flow control), a deadline the
// server passes, and cancellations the server's handler sees (its
// context, from the client's RST_STREAM). SIGINT stops it with exit 0.
func TestGRPC(t *testing.T) {
	testenv.ForEach(t, func(t *testing.T, c testenv.Combo) {
		for _, mode := range []string{"h2c", "tls"} {
			t.Run(mode, func(t *testing.T) {
				p, s := startServer(t, c, mode == "tls")
				cc := dial(t, s)
				t.Run("unary", func(t *testing.T) { testUnary(t, cc) })
				t.Run("large", func(t *testing.T) { testLarge(t, cc) })
				t.Run("status", func(t *testing.T) { testStatus(t, cc) })
				t.Run("deadline", func(t *testing.T) { testDeadline(t, cc) })
				t.Run("serverStreaming", func(t *testing.T) { testServerStreaming(t, cc) })
				t.Run("clientStreaming", func(t *testing.T) { testClientStreaming(t, cc) })
				t.Run("bidi", func(t *testing.T) { testBidi(t, cc) })
				t.Run("cancel", func(t *testing.T) { testCancel(t, cc) })
				t.Run("concurrent", func(t *testing.T) { testConcurrent(t, cc) })
				_ = cc.Close()
				p.Interrupt(t)
			})
		}
	})
}

// testUnary: the same bytes back, with the request's metadata in the
// response's header and trailer, 50 KB of it too.
func testUnary(t *testing.T, cc *grpc.ClientConn) {
	ctx := metadata.AppendToOutgoingContext(testContext(t), "x-echo", "hello metadata")
	var hdr, trl metadata.MD
	out := new(wrapperspb.BytesValue)
	if err := cc.Invoke(ctx, echoPrefix+"Echo", wrapperspb.Bytes([]byte("ping")), out, grpc.Header(&hdr), grpc.Trailer(&trl)); err != nil {
		t.Fatal(err)
	}
	if string(out.Value) != "ping" {
		t.Fatalf("Echo: %q", out.Value)
	}
	if got := hdr.Get("x-echo"); len(got) != 1 || got[0] != "hello metadata" {
		t.Fatalf("header metadata %v", hdr)
	}
	if got := trl.Get("x-echo-trailer"); len(got) != 1 || got[0] != "hello metadata" {
		t.Fatalf("trailer metadata %v", trl)
	}
	// An empty message, and a method the server does not have.
	if err := cc.Invoke(ctx, echoPrefix+"Echo", &wrapperspb.BytesValue{}, out); err != nil || len(out.Value) != 0 {
		t.Fatalf("empty Echo: %q, %v", out.Value, err)
	}
	if err := cc.Invoke(ctx, echoPrefix+"Nope", &emptypb.Empty{}, new(emptypb.Empty)); status.Code(err) != codes.Unimplemented {
		t.Fatalf("unknown method: %v", err)
	}
	// Metadata larger than a frame: header and trailer blocks go on in
	// CONTINUATION frames.
	big := strings.Repeat("0123456789", 5000)
	ctx = metadata.AppendToOutgoingContext(testContext(t), "x-echo", big)
	if err := cc.Invoke(ctx, echoPrefix+"Echo", wrapperspb.Bytes([]byte("big")), out, grpc.Header(&hdr), grpc.Trailer(&trl)); err != nil {
		t.Fatal(err)
	}
	if got := hdr.Get("x-echo"); len(got) != 1 || got[0] != big {
		t.Fatalf("50 KB header metadata: %d values", len(got))
	}
	if got := trl.Get("x-echo-trailer"); len(got) != 1 || got[0] != big {
		t.Fatalf("50 KB trailer metadata: %d values", len(got))
	}
}

// testLarge: 8 MiB each way, over windows far smaller (the request's body
// streams to the handler while the client sends, the response to the
// client as its windows grow).
func testLarge(t *testing.T, cc *grpc.ClientConn) {
	in := make([]byte, 8<<20)
	_, _ = rand.Read(in)
	out := new(wrapperspb.BytesValue)
	if err := cc.Invoke(testContext(t), echoPrefix+"Echo", wrapperspb.Bytes(in), out); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(out.Value, in) {
		t.Fatalf("8 MiB Echo: %d bytes back, not the same", len(out.Value))
	}
}

// testStatus: a status error's code and message (with characters
// grpc-message percent-encodes) arrive as sent, in the trailers.
func testStatus(t *testing.T, cc *grpc.ClientConn) {
	const msg = "bad input: 100% ünïcode\r\n\ttabs"
	var trl metadata.MD
	ctx := metadata.AppendToOutgoingContext(testContext(t), "x-echo", "with an error")
	err := cc.Invoke(ctx, echoPrefix+"Fail", wrapperspb.String(msg), new(emptypb.Empty), grpc.Trailer(&trl))
	st, _ := status.FromError(err)
	if st.Code() != codes.InvalidArgument || st.Message() != msg {
		t.Fatalf("Fail: %v (code %v, message %q)", err, st.Code(), st.Message())
	}
	if got := trl.Get("x-echo-trailer"); len(got) != 1 || got[0] != "with an error" {
		t.Fatalf("trailer metadata with an error %v", trl)
	}
}

// testDeadline: an RPC whose deadline passes while the server sleeps ends
// DEADLINE_EXCEEDED, soon after the deadline (the grpc-timeout header
// reached the server's handler: its context ends then too).
func testDeadline(t *testing.T, cc *grpc.ClientConn) {
	ctx, cancel := context.WithTimeout(testContext(t), 200*time.Millisecond)
	defer cancel()
	start := time.Now()
	err := cc.Invoke(ctx, echoPrefix+"Sleep", durationpb.New(time.Minute), new(emptypb.Empty))
	if status.Code(err) != codes.DeadlineExceeded {
		t.Fatalf("Sleep past the deadline: %v", err)
	}
	if d := time.Since(start); d > 20*time.Second {
		t.Fatalf("deadline exceeded after %v", d)
	}
	// A sleep within its deadline returns.
	if err := cc.Invoke(testContext(t), echoPrefix+"Sleep", durationpb.New(10*time.Millisecond), new(emptypb.Empty)); err != nil {
		t.Fatal(err)
	}
}

func testServerStreaming(t *testing.T, cc *grpc.ClientConn) {
	ctx := metadata.AppendToOutgoingContext(testContext(t), "x-echo", "streamed")
	st, err := cc.NewStream(ctx, &grpc.StreamDesc{ServerStreams: true}, echoPrefix+"Count")
	if err != nil {
		t.Fatal(err)
	}
	if err := st.SendMsg(wrapperspb.Int64(5000)); err != nil {
		t.Fatal(err)
	}
	if err := st.CloseSend(); err != nil {
		t.Fatal(err)
	}
	hdr, err := st.Header()
	if err != nil || len(hdr.Get("x-echo")) != 1 {
		t.Fatalf("header %v, %v", hdr, err)
	}
	for want := int64(1); ; want++ {
		var v wrapperspb.Int64Value
		err := st.RecvMsg(&v)
		if err == io.EOF {
			if want != 5001 {
				t.Fatalf("stream ended after %d messages", want-1)
			}
			break
		}
		if err != nil || v.Value != want {
			t.Fatalf("message %d: %v, %v", want, v.Value, err)
		}
	}
	if got := st.Trailer().Get("x-echo-trailer"); len(got) != 1 || got[0] != "streamed" {
		t.Fatalf("trailer %v", st.Trailer())
	}
}

func testClientStreaming(t *testing.T, cc *grpc.ClientConn) {
	st, err := cc.NewStream(testContext(t), &grpc.StreamDesc{ClientStreams: true}, echoPrefix+"Sum")
	if err != nil {
		t.Fatal(err)
	}
	var want int64
	for i := int64(1); i <= 5000; i++ {
		want += i
		if err := st.SendMsg(wrapperspb.Int64(i)); err != nil {
			t.Fatal(err)
		}
	}
	if err := st.CloseSend(); err != nil {
		t.Fatal(err)
	}
	var sum wrapperspb.Int64Value
	if err := st.RecvMsg(&sum); err != nil || sum.Value != want {
		t.Fatalf("Sum: %d, %v (want %d)", sum.Value, err, want)
	}
}

// testBidi: each message comes back before the next is sent (the response
// flows while the request is still open), some larger than a frame.
func testBidi(t *testing.T, cc *grpc.ClientConn) {
	st, err := cc.NewStream(testContext(t), &grpc.StreamDesc{ClientStreams: true, ServerStreams: true}, echoPrefix+"Chat")
	if err != nil {
		t.Fatal(err)
	}
	for i := range 200 {
		msg := bytes.Repeat([]byte{byte(i)}, 1+i*397)
		if err := st.SendMsg(wrapperspb.Bytes(msg)); err != nil {
			t.Fatal(err)
		}
		var got wrapperspb.BytesValue
		if err := st.RecvMsg(&got); err != nil || !bytes.Equal(got.Value, msg) {
			t.Fatalf("message %d: %d bytes, %v", i, len(got.Value), err)
		}
	}
	if err := st.CloseSend(); err != nil {
		t.Fatal(err)
	}
	if err := st.RecvMsg(new(wrapperspb.BytesValue)); err != io.EOF {
		t.Fatalf("after CloseSend: %v", err)
	}
}

// testCancel: a client cancelling its RPC (RST_STREAM CANCEL) ends the
// handler's context: a server stream blocked on flow control, a client
// stream waiting for a message, a bidi stream waiting for the next. The
// server counts the cancellations its handlers saw.
func testCancel(t *testing.T, cc *grpc.ClientConn) {
	before := cancelled(t, cc)
	ctx, cancel := context.WithCancel(testContext(t))
	st, err := cc.NewStream(ctx, &grpc.StreamDesc{ServerStreams: true}, echoPrefix+"Count")
	if err != nil {
		t.Fatal(err)
	}
	if err := st.SendMsg(wrapperspb.Int64(-1)); err != nil {
		t.Fatal(err)
	}
	for range 10 {
		if err := st.RecvMsg(new(wrapperspb.Int64Value)); err != nil {
			t.Fatal(err)
		}
	}
	cancel()
	if err := drain(st); status.Code(err) != codes.Canceled {
		t.Fatalf("cancelled Count: %v", err)
	}
	waitCancelled(t, cc, before+1)

	for _, method := range []string{"Sum", "Chat"} {
		ctx, cancel := context.WithCancel(metadata.AppendToOutgoingContext(testContext(t), "x-echo", method))
		st, err := cc.NewStream(ctx, &grpc.StreamDesc{ClientStreams: true, ServerStreams: method == "Chat"}, echoPrefix+method)
		if err != nil {
			t.Fatal(err)
		}
		if err := st.SendMsg(wrapperspb.Int64(1)); err != nil {
			t.Fatal(err)
		}
		if method == "Chat" { // the handler runs: its answer came
			if err := st.RecvMsg(new(wrapperspb.BytesValue)); err != nil {
				t.Fatal(err)
			}
		} else if _, err := st.Header(); err != nil { // the handler runs: it sent the header
			t.Fatal(err)
		}
		before = cancelled(t, cc)
		cancel()
		waitCancelled(t, cc, before+1)
	}
}

// cancelled asks the server how many handlers saw their RPC cancelled.
func cancelled(t *testing.T, cc *grpc.ClientConn) int64 {
	t.Helper()
	var n wrapperspb.Int64Value
	if err := cc.Invoke(testContext(t), echoPrefix+"Cancelled", &emptypb.Empty{}, &n); err != nil {
		t.Fatal(err)
	}
	return n.Value
}

// waitCancelled waits until the server counts want cancellations.
func waitCancelled(t *testing.T, cc *grpc.ClientConn, want int64) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		n := cancelled(t, cc)
		if n >= want {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the server saw %d cancellations, want %d", n, want)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// drain reads a stream to its end.
func drain(st grpc.ClientStream) error {
	for {
		if err := st.RecvMsg(new(wrapperspb.Int64Value)); err != nil {
			return err
		}
	}
}

// testConcurrent: RPCs at once on the connection, streams interleaved.
func testConcurrent(t *testing.T, cc *grpc.ClientConn) {
	ctx := testContext(t)
	errs := make(chan error, 50)
	for i := range 50 {
		go func() {
			msg := bytes.Repeat([]byte{byte(i)}, 1000*i)
			out := new(wrapperspb.BytesValue)
			err := cc.Invoke(ctx, echoPrefix+"Echo", wrapperspb.Bytes(msg), out)
			if err == nil && !bytes.Equal(out.Value, msg) {
				err = errors.New("not the same bytes back")
			}
			errs <- err
		}()
	}
	for range 50 {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
}

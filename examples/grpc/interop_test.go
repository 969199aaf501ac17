package main

import (
	"context"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/interop"
	testgrpc "google.golang.org/grpc/interop/grpc_testing"

	"github.com/ringloop/ringloop/internal/testenv"
)

// grpc-go's interop client cases (google.golang.org/grpc/interop) against
// its interop TestService, served by the command. A case that fails ends
// its process (grpclog's Fatal): each runs in a child process of the
// test, this binary again, which the environment tells what to run.
const (
	interopCaseEnv = "RINGLOOP_GRPC_INTEROP_CASE"
	interopAddrEnv = "RINGLOOP_GRPC_INTEROP_ADDR"
	interopCAEnv   = "RINGLOOP_GRPC_INTEROP_CA" // over TLS
)

// interopCases are grpc-go's interop client cases that need no
// credentials, compression or more than one server, by the names its
// interop client gives them.
var interopCases = map[string]func(context.Context, *grpc.ClientConn, testgrpc.TestServiceClient){
	"empty_unary": func(ctx context.Context, _ *grpc.ClientConn, tc testgrpc.TestServiceClient) {
		interop.DoEmptyUnaryCall(ctx, tc)
	},
	"large_unary": func(ctx context.Context, _ *grpc.ClientConn, tc testgrpc.TestServiceClient) {
		interop.DoLargeUnaryCall(ctx, tc)
	},
	"client_streaming": func(ctx context.Context, _ *grpc.ClientConn, tc testgrpc.TestServiceClient) {
		interop.DoClientStreaming(ctx, tc)
	},
	"server_streaming": func(ctx context.Context, _ *grpc.ClientConn, tc testgrpc.TestServiceClient) {
		interop.DoServerStreaming(ctx, tc)
	},
	"ping_pong": func(ctx context.Context, _ *grpc.ClientConn, tc testgrpc.TestServiceClient) {
		interop.DoPingPong(ctx, tc)
	},
	"empty_stream": func(ctx context.Context, _ *grpc.ClientConn, tc testgrpc.TestServiceClient) {
		interop.DoEmptyStream(ctx, tc)
	},
	"timeout_on_sleeping_server": func(ctx context.Context, _ *grpc.ClientConn, tc testgrpc.TestServiceClient) {
		interop.DoTimeoutOnSleepingServer(ctx, tc)
	},
	"cancel_after_begin": func(ctx context.Context, _ *grpc.ClientConn, tc testgrpc.TestServiceClient) {
		interop.DoCancelAfterBegin(ctx, tc)
	},
	"cancel_after_first_response": func(ctx context.Context, _ *grpc.ClientConn, tc testgrpc.TestServiceClient) {
		interop.DoCancelAfterFirstResponse(ctx, tc)
	},
	"custom_metadata": func(ctx context.Context, _ *grpc.ClientConn, tc testgrpc.TestServiceClient) {
		interop.DoCustomMetadata(ctx, tc)
	},
	"status_code_and_message": func(ctx context.Context, _ *grpc.ClientConn, tc testgrpc.TestServiceClient) {
		interop.DoStatusCodeAndMessage(ctx, tc)
	},
	"special_status_message": func(ctx context.Context, _ *grpc.ClientConn, tc testgrpc.TestServiceClient) {
		interop.DoSpecialStatusMessage(ctx, tc)
	},
	"unimplemented_method": func(ctx context.Context, cc *grpc.ClientConn, _ testgrpc.TestServiceClient) {
		interop.DoUnimplementedMethod(ctx, cc)
	},
	"unimplemented_service": func(ctx context.Context, cc *grpc.ClientConn, _ testgrpc.TestServiceClient) {
		interop.DoUnimplementedService(ctx, testgrpc.NewUnimplementedServiceClient(cc))
	},
}

// interopPassed begins the line a case's process prints once it passed.
const interopPassed = "interop case passed: "

// runInteropCase runs the case the environment names, if it names one,
// and exits: 0 when it passed.
func runInteropCase() {
	name := os.Getenv(interopCaseEnv)
	if name == "" {
		return
	}
	creds := insecure.NewCredentials()
	if ca := os.Getenv(interopCAEnv); ca != "" {
		var err error
		if creds, err = credentials.NewClientTLSFromFile(ca, "localhost"); err != nil {
			panic(err)
		}
	}
	cc, err := grpc.NewClient("passthrough:///"+os.Getenv(interopAddrEnv), grpc.WithTransportCredentials(creds))
	if err != nil {
		panic(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	interopCases[name](ctx, cc, testgrpc.NewTestServiceClient(cc))
	cancel()
	_ = cc.Close()
	fmt.Println(interopPassed + name)
	os.Exit(0)
}

// TestInterop runs grpc-go's interop client cases against the command,
// over h2c and TLS, on each backend and threading mode.
func TestInterop(t *testing.T) {
	testenv.ForEachBackend(t, func(t *testing.T, c testenv.Combo) {
		for _, mode := range []string{"h2c", "tls"} {
			t.Run(mode, func(t *testing.T) {
				p, s := startServer(t, c, mode == "tls")
				for _, name := range slices.Sorted(maps.Keys(interopCases)) {
					t.Run(name, func(t *testing.T) {
						ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
						defer cancel()
						cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^$")
						cmd.Env = append(os.Environ(), interopCaseEnv+"="+name, interopAddrEnv+"="+s.addr, interopCAEnv+"="+s.ca)
						out, err := cmd.CombinedOutput()
						if err != nil || !strings.Contains(string(out), interopPassed+name+"\n") {
							t.Fatalf("%s: %v\n%s", name, err, out)
						}
					})
				}
				p.Interrupt(t)
			})
		}
	})
}

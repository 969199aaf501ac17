package peers

import (
	"net"

	"github.com/valyala/fasthttp"
)

func init() {
	Register(Peer{Name: "fasthttp", Kind: HTTP, Doc: "fasthttp v1.77.0 server (adds Date and Server itself)", Start: startFastHTTP})
}

func startFastHTTP(c Config) (Server, error) {
	ln, err := net.Listen("tcp", c.Addr)
	if err != nil {
		return nil, err
	}
	srv := &fasthttp.Server{
		Name: "fasthttp",
		Handler: func(ctx *fasthttp.RequestCtx) {
			ctx.SetContentType("text/plain")
			ctx.SetBodyString(PlaintextBody)
		},
	}
	go func() { _ = srv.Serve(ln) }()
	return &closer{addr: ln.Addr().String(), info: Info{Backend: "netpoll", Threading: "goroutines (worker pool)"}, close: srv.Shutdown}, nil
}

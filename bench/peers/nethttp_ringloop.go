package peers

import (
	"net"
	"net/http"

	"github.com/ringloop/ringloop/engine"
)

func init() {
	registerFamily("net/http-on-ringloop", HTTP, FamilyNetHTTP,
		"net/http server (the net/http peer's handler) on ringloop's net.Listener (package netconn), one loop",
		func(b engine.Backend, c Config) (Server, error) {
			return startOnNetconn(b, c, "net/http", func(ln net.Listener) func() error {
				srv := &http.Server{Handler: plaintextHandler("net/http")}
				go func() { _ = srv.Serve(ln) }()
				return srv.Close
			})
		})
}

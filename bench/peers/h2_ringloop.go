package peers

import (
	"github.com/ringloop/ringloop/engine"
	"github.com/ringloop/ringloop/httpserver"
)

// The HTTP/2 rows of ringloop's httpserver: the fast API and the adapter
// (the net/http peer's handler), each over TLS on the loop (ALPN "h2") and
// in clear with prior knowledge (WithH2C), one loop, each backend forced.
// Each backend runs in its default threading mode only (one row, not one
// per mode: h2load's 10 s rounds make every row cost half a minute of
// sweep); they form no family, like the HTTPS rows.
func init() {
	for _, b := range Backends {
		modes := func() []string { return []string{DefaultThreading(b)} }
		for _, h2c := range []bool{false, true} {
			for _, adapter := range []bool{false, true} {
				name, kind, over := "ringloop-h2", H2, "over TLS on the loop (ListenTLS, ALPN h2)"
				if h2c {
					name, kind, over = "ringloop-h2c", H2C, "in clear with prior knowledge (WithH2C)"
				}
				api := "fast API"
				if adapter {
					name, api = name+"-adapter", "adapter (the net/http peer's handler)"
				}
				Register(Peer{
					Name:       name + "-" + rowSuffix(b),
					Kind:       kind,
					Doc:        "ringloop httpserver " + api + ", HTTP/2 " + over + ", one loop; " + b.String() + " backend forced, its default threading mode",
					Start:      func(c Config) (Server, error) { return startRingloopH2(b, c, adapter, h2c) },
					Modes:      modes,
					NeedsURing: b == engine.BackendUring,
				})
			}
		}
	}
}

func startRingloopH2(b engine.Backend, c Config, adapter, h2c bool) (Server, error) {
	if h2c {
		return startRingloopHTTP(b, c, adapter, nil, httpserver.WithH2C())
	}
	cfg, err := h2Config()
	if err != nil {
		return nil, err
	}
	return startRingloopHTTP(b, c, adapter, cfg)
}

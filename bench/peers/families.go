package peers

import "github.com/ringloop/ringloop/engine"

// The ringloop families: each is one server registered once per backend
// ("PREFIX-uring", "PREFIX-epoll"), and the runner makes a row of each in
// each threading mode. Every configuration a user could pick by hand is
// then a row, and the automatic one (engine.New with no options) is one of
// them: the report marks it and sets it against the best of its family.
const (
	FamilyEcho      = "echo"                    // ringloop-{uring,epoll}
	FamilyHTTP      = "HTTP fast API"           // ringloop-http-{uring,epoll}
	FamilyAdapter   = "http.Handler adapter"    // ringloop-http-adapter-{uring,epoll}
	FamilyNetHTTP   = "net/http on netconn"     // net/http-on-ringloop-{uring,epoll}
	FamilyTLS       = "crypto/tls over netconn" // netconn+tls-{uring,epoll}
	FamilyLoopTLS   = "TLS on the loop"         // looptls-{uring,epoll}
	FamilyWebSocket = "WebSocket"               // ringloop-ws-{uring,epoll}
	FamilyUDP       = "UDP echo"                // ringloop-udp-{uring,epoll}
	FamilyDNS       = "DNS server"              // ringloop-dns-{uring,epoll}
)

// Families lists the families in report order.
var Families = []string{FamilyEcho, FamilyHTTP, FamilyAdapter, FamilyNetHTTP, FamilyTLS, FamilyLoopTLS, FamilyWebSocket, FamilyUDP, FamilyDNS}

// Backends are the backends every family has a row for, in report order.
var Backends = []engine.Backend{engine.BackendUring, engine.BackendEpoll}

// DriverName is the name a loop on backend b reports (Loop.Backend().Name,
// the banner's backend=), which the report matches rows by.
func DriverName(b engine.Backend) string { return b.String() }

// rowSuffix ends a peer's name: "uring" or "epoll", as the rows of every
// earlier report name them.
func rowSuffix(b engine.Backend) string {
	if b == engine.BackendEpoll {
		return "epoll"
	}
	return "uring"
}

// registerFamily registers family's peer on each backend: named prefix-
// and rowSuffix, serving in every
// threading mode; start builds the server on the backend it is given.
func registerFamily(prefix string, kind Kind, family, doc string, start func(engine.Backend, Config) (Server, error)) {
	for _, b := range Backends {
		Register(Peer{
			Name:       prefix + "-" + rowSuffix(b),
			Kind:       kind,
			Family:     family,
			Backend:    DriverName(b),
			Doc:        doc + "; " + b.String() + " backend forced",
			Start:      func(c Config) (Server, error) { return start(b, c) },
			Modes:      RingloopModes,
			NeedsURing: b == engine.BackendUring,
		})
	}
}

// Automatic is what engine.New picks in this process with no options: its
// backend, its threading mode and why (in Detail). The runner asks a
// benchserver started without any RINGLOOP_ variable, so the answer is the
// library's own choice on this machine, not an operator's override.
func Automatic() (Info, error) {
	l, err := engine.New()
	if err != nil {
		return Info{}, err
	}
	bi := l.Backend()
	info := Info{Backend: bi.Name.String(), Threading: bi.Threading.String(), Detail: bi.Reason}
	return info, l.Close()
}

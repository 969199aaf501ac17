// Package peers holds every server the harness measures, each in a small
// file of its own that registers it. A peer serves the echo protocol (write
// back every byte), the same behind TLS, or HTTP plaintext (TechEmpower
// rules).
//
// To add a peer: write one file here whose init calls Register, and add its
// name to Order (the column order of every report). Runner, reports and the
// smoke test pick it up from the registry.
package peers

import (
	"fmt"
	"slices"
)

// Kind is the protocol a peer serves.
type Kind string

// The protocols the harness drives. TLSEcho is echo inside TLS 1.3: its
// own kind, so its cases drive only TLS peers, with the TLS client; HTTPS
// is HTTP plaintext inside TLS 1.3 (wrk over https), likewise. WebSocket
// is RFC 6455: echo of each message, and broadcast on BroadcastPath.
// UDPEcho sends every datagram back to its source, whole. H2 is HTTP
// plaintext over HTTP/2 inside TLS 1.3 (ALPN "h2"), H2C the same in clear
// with prior knowledge; h2load drives both. GRPC is one unary gRPC method
// over h2c (h2load posting a prepared request). DNS answers queries over
// UDP from the zone in Config.Zone, as examples/dns does (dnsperf drives
// it).
const (
	Echo      Kind = "echo"
	TLSEcho   Kind = "tls-echo"
	HTTP      Kind = "http"
	HTTPS     Kind = "https"
	WebSocket Kind = "websocket"
	UDPEcho   Kind = "udp-echo"
	H2        Kind = "h2"
	H2C       Kind = "h2c"
	GRPC      Kind = "grpc"
	DNS       Kind = "dns"
)

// Order lists the peers in report order; registered peers missing from it
// come last, in name order.
var Order = []string{
	"ringloop-uring", "ringloop-epoll", "c-liburing", "net", "gnet", // echo
	"net+tls", "netconn+tls-uring", "netconn+tls-epoll", "looptls-uring", "looptls-epoll", // echo over TLS
	"ringloop-http-uring", "ringloop-http-epoll", "ringloop-http-adapter-uring", "ringloop-http-adapter-epoll", // http: ringloop's server
	"net/http", "net/http-on-ringloop-uring", "net/http-on-ringloop-epoll", "fasthttp", "gnet-http", // http: the others
	"net/http+tls", "ringloop-http-tls-uring", "ringloop-http-tls-epoll", "ringloop-http-adapter-tls-uring", "ringloop-http-adapter-tls-epoll", // https
	"ringloop-ws-uring", "ringloop-ws-epoll", "gorilla", // websocket
	"ringloop-udp-uring", "ringloop-udp-epoll", "c-mmsg", "net-udp", "gnet-udp", // udp echo
	"net/http+h2", "ringloop-h2-uring", "ringloop-h2-epoll", "ringloop-h2-adapter-uring", "ringloop-h2-adapter-epoll", // h2 over TLS
	"net/http-h2c", "ringloop-h2c-uring", "ringloop-h2c-epoll", "ringloop-h2c-adapter-uring", "ringloop-h2c-adapter-epoll", // h2c
	"grpc-go", "grpc-go-servehttp", "grpc-go-on-ringloop-uring", "grpc-go-on-ringloop-epoll", "ringloop-grpc-adapter-uring", "ringloop-grpc-adapter-epoll", // grpc
	"ringloop-dns-uring", "ringloop-dns-epoll", "miekg-dns", // dns
}

// Config is what a server is started with.
type Config struct {
	Addr      string // where to listen, e.g. 127.0.0.1:0
	Threading string // ringloop threading mode; "" takes RINGLOOP_THREADING or the default
	Zone      string // DNS peers: the zone's master file (DNSZoneFile)
}

// Info describes a running server: its first line reports it.
type Info struct {
	Backend   string // io_uring, epoll, netpoll (Go's runtime poller)...
	Threading string // the threading mode in use ("goroutines" for net, "event-loop" for gnet)
	Detail    string // free text: why this backend, which features
}

// Server is a peer serving in this process.
type Server interface {
	Addr() string
	Info() Info
	Close() error
}

// Peer is one server the harness can run.
type Peer struct {
	Name string
	Kind Kind
	Doc  string // one line: what it is
	// Start serves in this process. Nil for peers that are programs of
	// their own (Program is set instead).
	Start func(Config) (Server, error)
	// Program names a peer built outside Go (the C server): the runner
	// builds and starts it.
	Program *Program
	// Modes lists the threading modes the peer offers, each its own row;
	// nil means the peer has one way of running.
	Modes func() []string
	// NeedsURing marks a peer that runs only on io_uring: where the
	// kernel refuses it, its rows say why instead of giving figures.
	NeedsURing bool
	// Family is the ringloop family the peer belongs to (FamilyEcho...),
	// "" for every other peer; Backend is the backend it forces, as its
	// loop reports it ("io_uring" or "epoll"). The report finds the
	// automatic default's row of each family by them.
	Family  string
	Backend string
}

// Program is how to build and run a peer written in another language.
type Program struct {
	Source string   // path relative to the bench module
	Build  []string // argv building it; "$OUT" is the binary, "$SRC" the source
}

var registry = map[string]Peer{}

// Register adds p; a duplicate name is a programming error.
func Register(p Peer) {
	if _, dup := registry[p.Name]; dup {
		panic("peers: duplicate peer " + p.Name)
	}
	if (p.Start == nil) == (p.Program == nil) {
		panic("peers: " + p.Name + " needs exactly one of Start and Program")
	}
	registry[p.Name] = p
}

// Lookup finds a peer by name.
func Lookup(name string) (Peer, error) {
	p, ok := registry[name]
	if !ok {
		return Peer{}, fmt.Errorf("peers: no peer %q (have %v)", name, Names(""))
	}
	return p, nil
}

// All returns the peers of kind k ("" for every kind) in report order.
func All(k Kind) []Peer {
	var out []Peer
	for _, n := range Names(k) {
		out = append(out, registry[n])
	}
	return out
}

// Names returns the names of the peers of kind k ("" for all) in report order.
func Names(k Kind) []string {
	var rest, out []string
	for n, p := range registry {
		if (k == "" || p.Kind == k) && !slices.Contains(Order, n) {
			rest = append(rest, n)
		}
	}
	slices.Sort(rest)
	for _, n := range Order {
		if p, ok := registry[n]; ok && (k == "" || p.Kind == k) {
			out = append(out, n)
		}
	}
	return append(out, rest...)
}

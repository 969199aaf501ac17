package peers

import (
	"errors"
	"fmt"
	"os"

	"github.com/ringloop/ringloop/engine"
	"github.com/ringloop/ringloop/examples/dns/dnsserver"
	"github.com/ringloop/ringloop/packet"
)

// The DNS rows' inputs, relative to the bench module: examples/dns's test
// zone, which every DNS peer serves, and the queries dnsperf sends (one
// "name type" a line: A, AAAA and TXT records, and names the zone does not
// hold).
const (
	DNSZoneFile  = "../examples/dns/testdata/example.zone"
	DNSQueryFile = "scripts/dns-queries.txt"
)

func init() {
	registerFamily("ringloop-dns", DNS, FamilyDNS,
		"examples/dns's server (package dnsserver: its zone, answers, and UDP socket and TCP listener on one port) on one loop", startRingloopDNS)
}

// readDNSZone reads the zone c names.
func readDNSZone(c Config) (*dnsserver.Zone, error) {
	if c.Zone == "" {
		return nil, errors.New("a DNS peer needs a zone file (benchserver -zone)")
	}
	f, err := os.Open(c.Zone)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return dnsserver.ReadZone(f, c.Zone)
}

// ringloopDNSServer is examples/dns's server on one loop: what the command
// runs, with the bench's choice of backend and threading mode.
type ringloopDNSServer struct {
	loop *engine.Loop
	pc   *packet.Conn
	ln   *engine.Listener
	info Info
}

func startRingloopDNS(b engine.Backend, c Config) (Server, error) {
	z, err := readDNSZone(c)
	if err != nil {
		return nil, err
	}
	loop, err := benchLoop(c, engine.WithBackend(b))
	if err != nil {
		return nil, err
	}
	pc, ln, err := dnsserver.Listen(loop, c.Addr, z)
	if err != nil {
		_ = loop.Close()
		return nil, err
	}
	bi := loop.Backend()
	detail := fmt.Sprintf("%s; zone %v; default socket buffers", bi.Features, z)
	return &ringloopDNSServer{loop, pc, ln, Info{Backend: bi.Name.String(), Threading: bi.Threading.String(), Detail: detail}}, nil
}

func (s *ringloopDNSServer) Addr() string { return s.pc.LocalAddr().String() }
func (s *ringloopDNSServer) Info() Info   { return s.info }

func (s *ringloopDNSServer) Close() error {
	_ = s.ln.Close()
	_ = s.pc.Close()
	return s.loop.Close()
}

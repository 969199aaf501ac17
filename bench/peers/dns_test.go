package peers

import (
	"bufio"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/miekg/dns"
	"github.com/stretchr/testify/require"

	"github.com/ringloop/ringloop/internal/uringcheck"
)

// dnsTestQueries are the queries the answers are compared on: every line
// of the query file dnsperf sends, with and without EDNS, and more that
// reach the answer's other paths: a name in any case, NODATA, an empty
// non-terminal, a name outside the zone, and an answer over 512 bytes (cut
// with TC without EDNS, whole with EDNS), and ANY (its records by type).
func dnsTestQueries(t *testing.T) []*dns.Msg {
	f, err := os.Open(filepath.Join("..", DNSQueryFile))
	require.NoError(t, err)
	defer f.Close()
	var qs []*dns.Msg
	add := func(name string, qtype uint16, edns uint16) {
		m := new(dns.Msg)
		m.SetQuestion(dns.Fqdn(name), qtype)
		m.Id = uint16(0x1000 + len(qs))
		if edns > 0 {
			m.SetEdns0(edns, false)
		}
		qs = append(qs, m)
	}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		name, typ, ok := strings.Cut(strings.TrimSpace(sc.Text()), " ")
		qtype, known := dns.StringToType[typ]
		require.True(t, ok && known, "query file line %q", sc.Text())
		add(name, qtype, 0)
		add(name, qtype, 1232)
	}
	require.NoError(t, sc.Err())
	require.GreaterOrEqual(t, len(qs), 8)
	add("WWW.Example.TEST", dns.TypeA, 0)
	add("www.example.test", dns.TypeMX, 0)
	add("lab.example.test", dns.TypeA, 0)
	add("example.org", dns.TypeA, 0)
	add("big.example.test", dns.TypeTXT, 0)
	add("big.example.test", dns.TypeTXT, 4096)
	add("www.example.test", dns.TypeANY, 0)
	add("example.test", dns.TypeANY, 1232)
	return qs
}

// ask sends q to addr over UDP and returns the reply's bytes.
func ask(t *testing.T, addr string, q *dns.Msg) []byte {
	t.Helper()
	b, err := q.Pack()
	require.NoError(t, err)
	c, err := net.Dial("udp", addr)
	require.NoError(t, err)
	defer c.Close()
	require.NoError(t, c.SetDeadline(time.Now().Add(30*time.Second)))
	_, err = c.Write(b)
	require.NoError(t, err)
	buf := make([]byte, 65535)
	n, err := c.Read(buf)
	require.NoError(t, err)
	return buf[:n]
}

// The goal's second half (issue 42): ringloop's DNS server answers the
// same bytes as miekg/dns's own server for the same zone and queries, on
// every backend and threading mode (each reply's ID the query's).
func TestDNSAnswersMatchMiekg(t *testing.T) {
	zone := filepath.Join("..", DNSZoneFile)
	miekg, err := Lookup("miekg-dns")
	require.NoError(t, err)
	ref, err := miekg.Start(Config{Addr: "127.0.0.1:0", Zone: zone})
	require.NoError(t, err)
	defer func() { require.NoError(t, ref.Close()) }()
	qs := dnsTestQueries(t)
	want := make([][]byte, len(qs))
	for i, q := range qs {
		want[i] = ask(t, ref.Addr(), q)
		var r dns.Msg
		require.NoError(t, r.Unpack(want[i]))
		require.True(t, r.Response, "%v", q.Question)
		require.Equal(t, q.Id, r.Id, "%v", q.Question)
	}
	for _, p := range All(DNS) {
		if p.Family == "" {
			continue
		}
		for _, m := range p.Modes() {
			t.Run(p.Name+"/"+m, func(t *testing.T) {
				if p.NeedsURing && uringcheck.Unavailable() != "" && !uringcheck.Required() {
					t.Skip(uringcheck.Unavailable())
				}
				srv, err := p.Start(Config{Addr: "127.0.0.1:0", Threading: m, Zone: zone})
				require.NoError(t, err)
				defer func() { require.NoError(t, srv.Close()) }()
				require.Equal(t, m, srv.Info().Threading)
				for i, q := range qs {
					got := ask(t, srv.Addr(), q)
					require.Equal(t, want[i][:2], got[:2], "%v: the query's ID", q.Question)
					require.Equal(t, want[i][2:], got[2:], "%v (EDNS %v): the bytes after the ID", q.Question, q.IsEdns0() != nil)
				}
			})
		}
	}
}

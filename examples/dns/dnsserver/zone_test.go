package dnsserver

import (
	"os"
	"strings"
	"testing"

	"github.com/miekg/dns"
)

func testZone(t testing.TB) *Zone {
	t.Helper()
	f, err := os.Open("../testdata/example.zone")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	z, err := ReadZone(f, "example.zone")
	if err != nil {
		t.Fatal(err)
	}
	return z
}

func query(name string, qtype uint16) *dns.Msg {
	m := new(dns.Msg)
	m.SetQuestion(name, qtype)
	return m
}

// TestAnswerANYOrder: an ANY query gets every record of the name, by type
// number, the same bytes each time (a map's order would change them).
func TestAnswerANYOrder(t *testing.T) {
	z := testZone(t)
	q := query("www.example.test.", dns.TypeANY)
	first := z.Reply(q, false)
	if len(first.Answer) != 3 {
		t.Fatalf("ANY www: %d records, want 3 (two A, one AAAA): %v", len(first.Answer), first.Answer)
	}
	for i := 1; i < len(first.Answer); i++ {
		if first.Answer[i-1].Header().Rrtype > first.Answer[i].Header().Rrtype {
			t.Fatalf("ANY www not by type: %v", first.Answer)
		}
	}
	want, err := first.Pack()
	if err != nil {
		t.Fatal(err)
	}
	for range 20 {
		got, err := z.Reply(q, false).Pack()
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != string(want) {
			t.Fatal("two ANY queries for www got different answers")
		}
	}
}

// TestReadZoneRefuses: a zone without SOA, with two, or with a name
// outside it is refused with the file's name.
func TestReadZoneRefuses(t *testing.T) {
	for _, src := range []string{
		"$ORIGIN a.test.\nwww IN A 192.0.2.1\n",
		"$ORIGIN a.test.\n@ IN SOA ns h 1 2 3 4 5\n@ IN SOA ns h 1 2 3 4 5\n",
		"$ORIGIN a.test.\n@ IN SOA ns h 1 2 3 4 5\nwww.b.test. IN A 192.0.2.1\n",
		"$ORIGIN a.test.\n@ IN SOA ns h 1 2 3 4 5\nwww IN A not-an-address\n",
	} {
		if _, err := ReadZone(strings.NewReader(src), "bad.zone"); err == nil || !strings.Contains(err.Error(), "bad.zone") {
			t.Errorf("%q: %v", src, err)
		}
	}
}

// FuzzAnswer: whatever bytes arrive, Answer does not panic, and what it
// returns is a response to them: it parses, carries the query's ID, and
// over UDP fits 512 bytes unless the query's EDNS allows more. No reply
// only for input without a whole header, or a response.
func FuzzAnswer(f *testing.F) {
	z := testZone(f)
	for _, q := range []*dns.Msg{
		query("www.example.test.", dns.TypeA),
		query("big.example.test.", dns.TypeTXT),
		query("nope.example.test.", dns.TypeAAAA),
		query("example.org.", dns.TypeA),
		query("example.test.", dns.TypeANY),
	} {
		b, _ := q.Pack()
		f.Add(b)
		q.SetEdns0(1232, true)
		b, _ = q.Pack()
		f.Add(b)
	}
	f.Add([]byte{0xbe, 0xef, 0x01, 0x00, 0, 1, 0, 0, 0, 0, 0, 0, 3, 'w', 'w'})
	f.Add([]byte{1, 2, 3})
	f.Fuzz(func(t *testing.T, q []byte) {
		out := z.Answer(q, nil, true)
		if out == nil {
			if len(q) >= 12 && q[2]&0x80 == 0 {
				var m dns.Msg
				if m.Unpack(q) == nil && !m.Response {
					t.Fatalf("no reply to a query that parses: %v", m)
				}
				if m.Unpack(q) != nil {
					t.Fatal("no reply (FORMERR) to a header that does not parse")
				}
			}
			return
		}
		var r dns.Msg
		if err := r.Unpack(out); err != nil {
			t.Fatalf("reply does not parse: %v", err)
		}
		if len(q) < 2 || r.Id != uint16(q[0])<<8|uint16(q[1]) || !r.Response {
			t.Fatalf("reply id %d, response %v, to %x", r.Id, r.Response, q)
		}
		limit := minUDPReply
		var m dns.Msg
		if m.Unpack(q) == nil {
			if opt := m.IsEdns0(); opt != nil {
				limit = min(max(int(opt.UDPSize()), minUDPReply), maxUDPReply)
			}
		}
		if len(out) > limit {
			t.Fatalf("%d bytes over UDP, limit %d", len(out), limit)
		}
	})
}

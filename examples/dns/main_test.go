package main

import (
	"net"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/miekg/dns"

	"github.com/ringloop/ringloop/internal/testenv"
)

func TestMain(m *testing.M) {
	testenv.RunMain(main)
	os.Exit(m.Run())
}

// exchange asks the server q over network ("udp" or "tcp") with
// miekg/dns's client.
func exchange(t *testing.T, network, addr string, q *dns.Msg) *dns.Msg {
	t.Helper()
	c := &dns.Client{Net: network, Timeout: 30 * time.Second, UDPSize: 65535}
	r, _, err := c.Exchange(q, addr)
	if err != nil {
		t.Fatalf("%s %v: %v", network, q.Question, err)
	}
	if r.Id != q.Id || !r.Response {
		t.Fatalf("reply id %d (query %d), response %v", r.Id, q.Id, r.Response)
	}
	return r
}

func query(name string, qtype uint16) *dns.Msg {
	m := new(dns.Msg)
	m.SetQuestion(name, qtype)
	return m
}

// TestDNS runs the command on the test zone and queries it as a resolver
// would, with miekg/dns's client over UDP and TCP: A, AAAA and TXT records,
// NODATA, NXDOMAIN (an empty non-terminal is not one), REFUSED outside
// the zone, names in any case; an answer over 512 bytes comes cut with TC
// set over UDP without EDNS, whole with EDNS's 4096 bytes and over TCP;
// a query that does not parse gets FORMERR with its ID. SIGINT stops it
// with exit 0.
func TestDNS(t *testing.T) {
	testenv.ForEach(t, func(t *testing.T, c testenv.Combo) {
		p := testenv.StartMain(t, c, "-addr", "127.0.0.1:0", "-zone", "testdata/example.zone")
		for _, network := range []string{"udp", "tcp"} {
			r := exchange(t, network, p.Addr, query("www.example.test.", dns.TypeA))
			if r.Rcode != dns.RcodeSuccess || !r.Authoritative || r.Truncated {
				t.Fatalf("%s A: %v", network, r)
			}
			if got := answers(r); !slices.Equal(got, []string{"192.0.2.10", "192.0.2.11"}) {
				t.Fatalf("%s A: %v", network, got)
			}
			if got := answers(exchange(t, network, p.Addr, query("WWW.Example.TEST.", dns.TypeAAAA))); !slices.Equal(got, []string{"2001:db8::10"}) {
				t.Fatalf("%s AAAA: %v", network, got)
			}
			if got := answers(exchange(t, network, p.Addr, query("txt.example.test.", dns.TypeTXT))); !slices.Equal(got, []string{"hello from ringloop|second string"}) {
				t.Fatalf("%s TXT: %v", network, got)
			}
			for _, c := range []struct {
				name  string
				qtype uint16
				rcode int
				soa   bool
			}{
				{"nope.example.test.", dns.TypeA, dns.RcodeNameError, true},
				{"www.example.test.", dns.TypeMX, dns.RcodeSuccess, true}, // NODATA
				{"lab.example.test.", dns.TypeA, dns.RcodeSuccess, true},  // an empty non-terminal
				{"example.org.", dns.TypeA, dns.RcodeRefused, false},
			} {
				r := exchange(t, network, p.Addr, query(c.name, c.qtype))
				if r.Rcode != c.rcode || len(r.Answer) != 0 || (len(r.Ns) == 1 && r.Ns[0].Header().Rrtype == dns.TypeSOA) != c.soa {
					t.Fatalf("%s %s %s: %v", network, c.name, dns.TypeToString[c.qtype], r)
				}
			}
		}

		big := query("big.example.test.", dns.TypeTXT)
		r := exchange(t, "udp", p.Addr, big)
		if !r.Truncated || len(r.Answer) == 12 {
			t.Fatalf("UDP without EDNS: TC %v, %d answers", r.Truncated, len(r.Answer))
		}
		if b, _ := r.Pack(); len(b) > 512 {
			t.Fatalf("UDP without EDNS: %d bytes", len(b))
		}
		big.SetEdns0(4096, false)
		if r := exchange(t, "udp", p.Addr, big); r.Truncated || len(r.Answer) != 12 || r.IsEdns0() == nil {
			t.Fatalf("UDP with EDNS: TC %v, %d answers", r.Truncated, len(r.Answer))
		}
		if r := exchange(t, "tcp", p.Addr, query("big.example.test.", dns.TypeTXT)); r.Truncated || len(r.Answer) != 12 {
			t.Fatalf("TCP: TC %v, %d answers", r.Truncated, len(r.Answer))
		}

		// A header that claims a question the message does not hold.
		conn, err := net.Dial("udp", p.Addr)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		if _, err := conn.Write([]byte{0xbe, 0xef, 0x01, 0x00, 0, 1, 0, 0, 0, 0, 0, 0, 3, 'w', 'w'}); err != nil {
			t.Fatal(err)
		}
		_ = conn.SetReadDeadline(time.Now().Add(30 * time.Second))
		buf := make([]byte, 512)
		n, err := conn.Read(buf)
		if err != nil {
			t.Fatal(err)
		}
		var fe dns.Msg
		if err := fe.Unpack(buf[:n]); err != nil || fe.Id != 0xbeef || fe.Rcode != dns.RcodeFormatError || !fe.Response {
			t.Fatalf("malformed query: %v (%v)", fe, err)
		}
		p.Interrupt(t)
	})
}

// answers renders an answer section's data in order: addresses, or a
// TXT record's strings joined by "|".
func answers(r *dns.Msg) []string {
	var out []string
	for _, rr := range r.Answer {
		switch rr := rr.(type) {
		case *dns.A:
			out = append(out, rr.A.String())
		case *dns.AAAA:
			out = append(out, rr.AAAA.String())
		case *dns.TXT:
			out = append(out, strings.Join(rr.Txt, "|"))
		}
	}
	return out
}

// TestDig asks the server with dig (Debian's bind9-dnsutils, which make
// deps installs): the answers, and over UDP without EDNS the TC flag of
// the large answer (+ignore keeps dig from retrying over TCP; without it
// dig retries over TCP and gets all of it).
func TestDig(t *testing.T) {
	dig := testenv.NeedTool(t, "dig")
	testenv.ForEachBackend(t, func(t *testing.T, c testenv.Combo) {
		p := testenv.StartMain(t, c, "-addr", "127.0.0.1:0", "-zone", "testdata/example.zone")
		host, port, _ := net.SplitHostPort(p.Addr)
		run := func(args ...string) string {
			t.Helper()
			out, err := exec.Command(dig, append([]string{"@" + host, "-p", port, "+time=10", "+tries=1"}, args...)...).CombinedOutput()
			if err != nil {
				t.Fatalf("dig %v: %v\n%s", args, err, out)
			}
			return string(out)
		}
		for _, c := range []struct {
			args []string
			want string
		}{
			{[]string{"+short", "www.example.test", "A"}, "192.0.2.10\n192.0.2.11\n"},
			{[]string{"+short", "www.example.test", "AAAA"}, "2001:db8::10\n"},
			{[]string{"+short", "txt.example.test", "TXT"}, "\"hello from ringloop\" \"second string\"\n"},
			{[]string{"+short", "+tcp", "www.example.test", "A"}, "192.0.2.10\n192.0.2.11\n"},
		} {
			if got := run(c.args...); got != c.want {
				t.Fatalf("dig %v: %q, want %q", c.args, got, c.want)
			}
		}
		if out := run("nope.example.test", "A"); !strings.Contains(out, "status: NXDOMAIN") || !strings.Contains(out, "flags: qr aa rd") {
			t.Fatalf("dig NXDOMAIN:\n%s", out)
		}
		if out := run("+noedns", "+ignore", "big.example.test", "TXT"); !strings.Contains(out, "flags: qr aa tc rd") {
			t.Fatalf("dig without EDNS, large answer:\n%s", out)
		}
		if out := run("+noedns", "big.example.test", "TXT"); !strings.Contains(out, "ANSWER: 12") {
			t.Fatalf("dig retrying over TCP:\n%s", out)
		}
		p.Interrupt(t)
	})
}

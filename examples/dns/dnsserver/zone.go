// Package dnsserver is the DNS example's server: an authoritative zone
// read from an RFC 1035 master file, its answers, and a loop's UDP socket
// and TCP listener serving them on one port. It is a package, not part of
// the command, so that other programs can serve a zone the same way: the
// bench serves this zone with miekg/dns's own server through Reply, to
// compare the two servers on the same answers.
package dnsserver

import (
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"

	"github.com/miekg/dns"
)

// Zone is one authoritative zone, read from an RFC 1035 master file.
type Zone struct {
	origin string
	soa    *dns.SOA // for negative answers, its TTL lowered to its minimum (RFC 2308)
	// names maps each name of the zone (lower case, fully qualified) to
	// its records by type; a name with no records of its own but names
	// below it (an empty non-terminal) maps to an empty map, so that it
	// answers NODATA, not NXDOMAIN.
	names map[string]map[uint16][]dns.RR
}

// ReadZone parses a master file; file names it in errors and resolves
// $INCLUDE. The zone's origin is its SOA record's owner.
func ReadZone(r io.Reader, file string) (*Zone, error) {
	z := &Zone{names: map[string]map[uint16][]dns.RR{}}
	zp := dns.NewZoneParser(r, "", file)
	var rrs []dns.RR
	for rr, ok := zp.Next(); ok; rr, ok = zp.Next() {
		if soa, isSOA := rr.(*dns.SOA); isSOA {
			if z.soa != nil {
				return nil, fmt.Errorf("%s: a second SOA record (%s)", file, soa.Hdr.Name)
			}
			neg := *soa
			neg.Hdr.Ttl = min(soa.Hdr.Ttl, soa.Minttl)
			z.soa, z.origin = &neg, dns.CanonicalName(soa.Hdr.Name)
		}
		rrs = append(rrs, rr)
	}
	if err := zp.Err(); err != nil {
		return nil, err
	}
	if z.soa == nil {
		return nil, errors.New(file + ": no SOA record")
	}
	for _, rr := range rrs {
		name := dns.CanonicalName(rr.Header().Name)
		if !dns.IsSubDomain(z.origin, name) {
			return nil, fmt.Errorf("%s: %s is outside the zone %s", file, name, z.origin)
		}
		for n := name; ; {
			if z.names[n] == nil {
				z.names[n] = map[uint16][]dns.RR{}
			}
			if n == z.origin {
				break
			}
			i, _ := dns.NextLabel(n, 0)
			n = n[i:]
		}
		t := rr.Header().Rrtype
		z.names[name][t] = append(z.names[name][t], rr)
	}
	return z, nil
}

// Limits of a reply's size over UDP: 512 bytes without EDNS (RFC 1035);
// with EDNS what the query offers, within [512, maxUDPReply].
const (
	minUDPReply = 512
	maxUDPReply = 4096
)

// Answer packs the reply to query q into buf (reusing its memory) and
// returns it, or nil when q deserves none (a response, or not even a
// header). Over UDP (udp) a reply larger than the query allows is cut
// with TC set, for the client to ask again over TCP.
func (z *Zone) Answer(q []byte, buf []byte, udp bool) []byte {
	var req dns.Msg
	if err := req.Unpack(q); err != nil {
		return formErr(q, buf)
	}
	if req.Response {
		return nil
	}
	out, err := z.Reply(&req, udp).PackBuffer(buf)
	if err != nil {
		return formErr(q, buf)
	}
	return out
}

// Reply is the reply to the query req, before packing: what Answer packs,
// and what a dns.Handler on miekg/dns's own server writes back. Over UDP
// (udp) it is cut to the size the query allows, with TC set.
func (z *Zone) Reply(req *dns.Msg, udp bool) *dns.Msg {
	resp := new(dns.Msg)
	resp.SetReply(req)
	resp.Authoritative = true
	resp.Compress = true
	switch {
	case req.Opcode != dns.OpcodeQuery:
		resp.Rcode = dns.RcodeNotImplemented
	case len(req.Question) != 1:
		resp.Rcode = dns.RcodeFormatError
	default:
		z.lookup(resp, req.Question[0])
	}
	size := minUDPReply
	if opt := req.IsEdns0(); opt != nil {
		size = min(max(int(opt.UDPSize()), minUDPReply), maxUDPReply)
		resp.SetEdns0(maxUDPReply, false)
		if opt.Version() != 0 {
			resp.Rcode = dns.RcodeBadVers
			resp.Answer, resp.Ns = nil, nil
		}
	}
	if udp {
		resp.Truncate(size)
	}
	return resp
}

// lookup fills resp with the answer to question q: the records of its
// type, NODATA or NXDOMAIN (with the SOA for negative caching), REFUSED
// for a name outside the zone.
func (z *Zone) lookup(resp *dns.Msg, q dns.Question) {
	name := dns.CanonicalName(q.Name)
	if q.Qclass != dns.ClassINET || !dns.IsSubDomain(z.origin, name) {
		resp.Rcode, resp.Authoritative = dns.RcodeRefused, false
		return
	}
	types, ok := z.names[name]
	if !ok {
		resp.Rcode = dns.RcodeNameError
		resp.Ns = []dns.RR{z.soa}
		return
	}
	resp.Answer = types[q.Qtype]
	if q.Qtype == dns.TypeANY { // RFC 8482 allows less; a test zone is small
		// By type number, so that the same query gets the same bytes.
		for _, t := range slices.Sorted(maps.Keys(types)) {
			resp.Answer = append(resp.Answer, types[t]...)
		}
	}
	if len(resp.Answer) == 0 {
		resp.Ns = []dns.RR{z.soa}
	}
}

// formErr is the FORMERR reply to a query that does not parse: its header's
// ID, opcode and RD bit, no sections. Nil for one without a whole header,
// or a response.
func formErr(q []byte, buf []byte) []byte {
	const qr, rdMask, opcodeMask = 0x80, 0x01, 0x78
	if len(q) < 12 || q[2]&qr != 0 {
		return nil
	}
	buf = append(buf[:0], make([]byte, 12)...)
	buf[0], buf[1] = q[0], q[1]
	buf[2] = qr | q[2]&(opcodeMask|rdMask)
	buf[3] = dns.RcodeFormatError
	return buf
}

// String names the zone and its size, for the log.
func (z *Zone) String() string {
	n := 0
	for _, types := range z.names {
		for _, rrs := range types {
			n += len(rrs)
		}
	}
	return fmt.Sprintf("%s (%d records, %d names)", strings.TrimSuffix(z.origin, "."), n, len(z.names))
}

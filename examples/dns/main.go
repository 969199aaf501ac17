// Command dns is an authoritative DNS server on one ringloop loop for the
// zone in an RFC 1035 master file: A, AAAA, TXT and the zone's other
// records, NODATA and NXDOMAIN with the SOA, REFUSED outside the zone,
// FORMERR for a query that does not parse. Over UDP a reply larger than
// 512 bytes, or than the query's EDNS buffer size, is cut with TC set; the
// client then asks over TCP, served on the same port. Messages are parsed
// and packed by github.com/miekg/dns; the sockets are the loop's.
//
//	go run . -addr 127.0.0.1:5353 -zone testdata/example.zone
//	dig @127.0.0.1 -p 5353 www.example.test A
//
// It is a module of its own, so that ringloop's module does not depend on
// miekg/dns; the zone, its answers and the sockets are package dnsserver.
package main

import (
	"context"
	"flag"
	"log"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/ringloop/ringloop/engine"
	"github.com/ringloop/ringloop/examples/dns/dnsserver"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:5353", "address to serve, over UDP and TCP")
	file := flag.String("zone", "", "the zone's master file (RFC 1035)")
	flag.Parse()
	if err := run(*addr, *file); err != nil {
		log.Fatal(err)
	}
}

func run(addr, file string) error {
	f, err := os.Open(file)
	if err != nil {
		return err
	}
	z, err := dnsserver.ReadZone(f, file)
	f.Close()
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	loop, err := engine.New()
	if err != nil {
		return err
	}
	defer func() {
		shutdown, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		loop.Shutdown(shutdown)
	}()
	pc, ln, err := dnsserver.Listen(loop, addr, z)
	if err != nil {
		return err
	}
	defer ln.Close()
	log.Printf("serving %v", z)
	log.Printf("listening on %s (%s)", pc.LocalAddr(), loop.Backend().Name)
	<-ctx.Done()
	return nil
}

// Command udpecho is a UDP echo server on one ringloop loop: a
// packet.Handler whose callbacks run on the loop. The loop receives a batch
// of datagrams per system call (recvmmsg) and sends an iteration's replies
// together (sendmmsg), where net.UDPConn makes one call per datagram.
package main

import (
	"context"
	"flag"
	"log"
	"net/netip"
	"os"
	"os/signal"
	"time"

	"github.com/ringloop/ringloop/engine"
	"github.com/ringloop/ringloop/packet"
)

// echo sends each datagram back to its sender.
type echo struct{}

// OnPacket's b is valid during the call; WriteTo copies it into the
// socket's send queue, sent at the end of the loop iteration. Should the
// queue be full, the datagram is dropped, as the kernel would.
func (echo) OnPacket(pc *packet.Conn, b []byte, from netip.AddrPort) { pc.WriteTo(b, from) }

// OnPacketError hears of datagrams lost: one longer than the socket takes
// whole, one the kernel refused to send.
func (echo) OnPacketError(pc *packet.Conn, err error) { log.Print(err) }

func (echo) OnPacketClose(pc *packet.Conn, err error) {}

func main() {
	addr := flag.String("addr", "127.0.0.1:7000", "UDP address to serve")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt) // before serving: Ctrl-C shuts down
	defer stop()

	loop, err := engine.New() // io_uring where the kernel allows it, else epoll (the reason is logged)
	if err != nil {
		log.Fatal(err)
	}
	pc, err := packet.Listen(loop, "udp", *addr, echo{}, nil)
	if err != nil {
		log.Fatal(err)
	}
	log.Printf("listening on %s (%s)", pc.LocalAddr(), loop.Backend().Name)

	<-ctx.Done()
	shutdown, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	loop.Shutdown(shutdown) // close the socket, wait for the loop to end
}

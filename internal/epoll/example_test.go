package epoll_test

import (
	"fmt"
	"net"

	"github.com/ringloop/ringloop/internal/driver"
	"github.com/ringloop/ringloop/internal/epoll"
	"golang.org/x/sys/unix"
)

// A loop accepts one connection and echoes what it receives, all through
// completions: each op is armed by a method call and acted on in the next
// Wait.
func Example() {
	d, err := epoll.New(driver.Config{})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer d.Close()

	lfd, _ := unix.Socket(unix.AF_INET, unix.SOCK_STREAM|unix.SOCK_NONBLOCK|unix.SOCK_CLOEXEC, 0)
	unix.Bind(lfd, &unix.SockaddrInet4{Addr: [4]byte{127, 0, 0, 1}})
	unix.Listen(lfd, 16)
	sa, _ := unix.Getsockname(lfd)
	port := sa.(*unix.SockaddrInet4).Port

	const (
		acceptTag driver.Tag = iota + 1
		recvTag
		sendTag
		closeTag
	)
	d.Accept(lfd, acceptTag)
	client, _ := net.Dial("tcp4", fmt.Sprintf("127.0.0.1:%d", port))
	defer client.Close()
	client.Write([]byte("hello"))

	var conn int
	var echo []byte
	done := false
	for !done {
		d.Wait(driver.WaitForever, func(c *driver.Completion) {
			switch c.Tag {
			case acceptTag:
				if !c.More {
					return // the accept's final completion: -ECANCELED
				}
				conn = int(c.Res)
				d.Cancel(lfd, acceptTag)
				d.Recv(conn, recvTag)
			case recvTag:
				if c.Res > 0 {
					echo = append(echo[:0], c.Data...) // Data is valid only here
					d.Send(conn, sendTag, echo)
				}
			case sendTag:
				fmt.Println("sent", c.Res, "bytes")
				d.Cancel(conn, recvTag)
				d.CloseFD(conn, closeTag)
			case closeTag:
				done = true
			}
		})
	}
	buf := make([]byte, 16)
	n, _ := client.Read(buf)
	fmt.Printf("client got %q\n", buf[:n])
	unix.Close(lfd)
	// Output:
	// sent 5 bytes
	// client got "hello"
}

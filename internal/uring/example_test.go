//go:build linux && cgo && !ringloop_nouring

package uring_test

import (
	"errors"
	"fmt"
	"runtime"
	"time"

	"github.com/ringloop/ringloop/internal/driver"
	"github.com/ringloop/ringloop/internal/uring"
	"golang.org/x/sys/unix"
)

// A loop locks its goroutine to a thread, enables the ring there, queues
// ops and reaps their completions with Wait.
func Example() {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()

	d, err := uring.New(driver.Config{})
	if errors.Is(err, driver.ErrUringUnavailable) {
		fmt.Println("io_uring unavailable:", err) // fall back to epoll
		return
	}
	defer d.Close()
	if err := d.Enable(); err != nil {
		panic(err)
	}

	fds, _ := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_NONBLOCK|unix.SOCK_CLOEXEC, 0)
	defer unix.Close(fds[0])
	defer unix.Close(fds[1])

	d.Recv(fds[1], 1)
	d.Send(fds[0], 2, []byte("hello"))
	for done := 0; done < 2; {
		d.Wait(time.Second, func(c *driver.Completion) {
			switch c.Tag {
			case 1:
				if c.More {
					fmt.Printf("received %q\n", c.Data) // valid only in the callback
					d.Cancel(fds[1], 1)
				} else {
					fmt.Println("receive ended:", c.Err())
					done++
				}
			case 2:
				fmt.Println("sent", c.Res)
				done++
			}
		})
	}
	// Output:
	// sent 5
	// received "hello"
	// receive ended: operation canceled
}

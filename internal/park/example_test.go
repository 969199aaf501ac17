package park_test

import (
	"fmt"
	"os"
	"time"

	"golang.org/x/sys/unix"

	"github.com/ringloop/ringloop/internal/park"
)

func readDir() (int, error) {
	ents, err := os.ReadDir("/proc/self/fd")
	return len(ents), err
}

// A driver parks its loop on an fd that turns readable when there is work;
// poll consumes that readiness and reports what it found.
func Example() {
	efd, _ := unix.Eventfd(0, unix.EFD_NONBLOCK|unix.EFD_CLOEXEC)
	defer unix.Close(efd)
	w := park.New(func() (int, error) {
		var b [8]byte
		if _, err := unix.Read(efd, b[:]); err != nil {
			return 0, nil // EAGAIN: nothing yet, park
		}
		return int(b[0]), nil
	})
	defer w.Close()
	if err := w.Use(efd); err != nil { // when the driver creates efd
		fmt.Println(err)
		return
	}

	go func() { unix.Write(efd, []byte{1, 0, 0, 0, 0, 0, 0, 0}) }()
	n, err := w.Wait(time.Minute)
	fmt.Println(n, err)
	// Output: 1 <nil>
}

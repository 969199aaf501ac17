//go:build linux && cgo && !ringloop_nouring

package liburing_test

import (
	"fmt"

	"github.com/ringloop/ringloop/internal/liburing"
)

// Write SQEs into the batch (no cgo call), then Run once: it copies them into the ring,
// submits, waits and copies the completions out.
func Example() {
	r, err := liburing.Setup(8, 0, 0)
	if err != nil {
		fmt.Println("no io_uring:", err)
		return
	}
	defer r.Close()
	b := liburing.NewBatch(8, 1, 8)
	defer b.Free()
	ops := b.SQEs()
	for i := 0; i < 3; i++ {
		ops[i] = liburing.SQE{Opcode: liburing.IORingOpNop, UserData: uint64(i + 1)}
	}
	n, _, err := r.Run(b, 3, 0, -1, 8)
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, c := range b.CQEs()[:n] {
		fmt.Println("completed", c.UserData, c.Res)
	}
	fmt.Println("enters:", r.Stats().Enters)
	// Output:
	// completed 1 0
	// completed 2 0
	// completed 3 0
	// enters: 1
}

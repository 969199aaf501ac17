package drivertest

import (
	"fmt"
	"testing"
	"time"

	"github.com/ringloop/ringloop/internal/driver"
	"golang.org/x/sys/unix"
)

// OpKind names the op behind a tag, so the Harness can check each
// completion against what that op may report.
type OpKind int

// The op kinds of driver.Driver.
const (
	OpAccept OpKind = iota
	OpRecv
	OpSend
	OpConnect
	OpPoll
	OpClose
)

// String names the kind in failure messages.
func (k OpKind) String() string {
	switch k {
	case OpAccept:
		return "accept"
	case OpRecv:
		return "recv"
	case OpSend:
		return "send"
	case OpConnect:
		return "connect"
	case OpPoll:
		return "poll"
	case OpClose:
		return "close"
	}
	return fmt.Sprintf("OpKind(%d)", int(k))
}

// multishot reports whether the kind may report More == true.
func (k OpKind) multishot() bool { return k == OpAccept || k == OpRecv || k == OpPoll }

// Op is one op armed through a Harness and what it has reported so far.
type Op struct {
	// Tag, Kind and FD say which op this is and where it was armed.
	Tag  driver.Tag
	Kind OpKind
	FD   int
	// Len is the length of a Send's buffer.
	Len int
	// More holds the Res of each intermediate completion: accepted fds,
	// received byte counts, poll masks.
	More []int32
	// Bytes counts the bytes a Recv has received.
	Bytes int64
	// Done is set by the final completion, whose result is Res.
	Done bool
	Res  int32
	// OnData, if set, sees each Recv chunk while it is valid.
	OnData func(p []byte)
	// OnFinal, if set, runs at the final completion, inside the callback.
	OnFinal func(op *Op)
}

// Err returns the final result as an error (nil when Res >= 0).
func (op *Op) Err() error {
	c := driver.Completion{Res: op.Res}
	return c.Err()
}

// Harness drives one driver from a test's goroutine and checks the contract
// on every completion: the tag is armed, nothing follows a final completion,
// More comes only from multishot ops, Data matches Res, and each kind's final
// result is in its range. Violations fail the test.
type Harness struct {
	// T receives the failures; D is the driver under test.
	T testing.TB
	D driver.Driver
	// Completions counts every completion handed over.
	Completions int

	ops   map[driver.Tag]*Op
	owned map[int]bool
	next  driver.Tag
	cb    func(*driver.Completion)
}

// NewHarness wraps d; at cleanup it closes the fds it owns, then d.
func NewHarness(t testing.TB, d driver.Driver) *Harness {
	h := &Harness{T: t, D: d, ops: map[driver.Tag]*Op{}, owned: map[int]bool{}, next: 1}
	h.cb = h.dispatch
	t.Cleanup(func() {
		h.CloseOwned()
		d.Close()
	})
	return h
}

// Own makes the Harness close fd at cleanup (unless a CloseFD or Disown
// comes first).
func (h *Harness) Own(fd int) int {
	h.owned[fd] = true
	return fd
}

// Disown stops the Harness from closing fd.
func (h *Harness) Disown(fd int) { delete(h.owned, fd) }

// CloseNow closes an owned fd directly (not through the driver).
func (h *Harness) CloseNow(fd int) {
	if h.owned[fd] {
		delete(h.owned, fd)
		unix.Close(fd)
	}
}

// CloseOwned closes every fd the Harness owns.
func (h *Harness) CloseOwned() {
	for fd := range h.owned {
		unix.Close(fd)
	}
	clear(h.owned)
}

func (h *Harness) add(kind OpKind, fd int) *Op {
	op := &Op{Tag: h.next, Kind: kind, FD: fd}
	h.next++
	h.ops[op.Tag] = op
	return op
}

// Accept arms an accept on the listening fd; accepted fds become owned.
func (h *Harness) Accept(fd int) *Op {
	op := h.add(OpAccept, fd)
	h.D.Accept(fd, op.Tag)
	return op
}

// Recv arms a receive on fd; onData (may be nil) sees each chunk.
func (h *Harness) Recv(fd int, onData func(p []byte)) *Op {
	op := h.add(OpRecv, fd)
	op.OnData = onData
	h.D.Recv(fd, op.Tag)
	return op
}

// Send sends p on fd.
func (h *Harness) Send(fd int, p []byte) *Op {
	op := h.add(OpSend, fd)
	op.Len = len(p)
	h.D.Send(fd, op.Tag, p)
	return op
}

// Connect connects fd to sa.
func (h *Harness) Connect(fd int, sa unix.Sockaddr) *Op {
	op := h.add(OpConnect, fd)
	h.D.Connect(fd, op.Tag, sa)
	return op
}

// Poll polls fd for events.
func (h *Harness) Poll(fd int, events uint32) *Op {
	op := h.add(OpPoll, fd)
	h.D.Poll(fd, op.Tag, events)
	return op
}

// Cancel cancels op.
func (h *Harness) Cancel(op *Op) { h.D.Cancel(op.FD, op.Tag) }

// CloseFD closes fd through the driver; the fd is no longer owned.
func (h *Harness) CloseFD(fd int) *Op {
	delete(h.owned, fd)
	op := h.add(OpClose, fd)
	h.D.CloseFD(fd, op.Tag)
	return op
}

// Wait runs one driver Wait, checking each completion.
func (h *Harness) Wait(timeout time.Duration) int {
	h.T.Helper()
	n, err := h.D.Wait(timeout, h.cb)
	if err != nil {
		h.T.Fatalf("Wait(%v): %v", timeout, err)
	}
	return n
}

// Until waits (in short slices) until cond holds; it fails the test after
// within (0: 20 s).
func (h *Harness) Until(within time.Duration, what string, cond func() bool) {
	h.T.Helper()
	if within <= 0 {
		within = 20 * time.Second
	}
	deadline := time.Now().Add(within)
	for !cond() {
		if time.Now().After(deadline) {
			h.T.Fatalf("timed out after %v waiting for %s", within, what)
		}
		h.Wait(10 * time.Millisecond)
	}
}

// Quiet runs Waits for about d and fails if any completion arrives.
func (h *Harness) Quiet(d time.Duration, what string) {
	h.T.Helper()
	before := h.Completions
	deadline := time.Now().Add(d)
	for time.Now().Before(deadline) {
		h.Wait(5 * time.Millisecond)
	}
	if n := h.Completions - before; n > 0 {
		h.T.Errorf("%s: %d unexpected completions", what, n)
	}
}

// AllDone reports whether every op in ops has its final completion.
func AllDone(ops ...*Op) bool {
	for _, op := range ops {
		if !op.Done {
			return false
		}
	}
	return true
}

func (h *Harness) dispatch(c *driver.Completion) {
	h.Completions++
	t := h.T
	if c.Tag&driver.Reserved != 0 {
		t.Errorf("completion with a reserved tag %#x reached the caller", uint64(c.Tag))
		return
	}
	op := h.ops[c.Tag]
	if op == nil {
		t.Errorf("completion for unknown tag %d (res %d)", c.Tag, c.Res)
		return
	}
	if op.Done {
		t.Errorf("stale completion for %s tag %d after its final one (res %d, more %v)", op.Kind, op.Tag, c.Res, c.More)
		return
	}
	if op.Kind != OpRecv && len(c.Data) != 0 {
		t.Errorf("%s completion carries %d bytes of Data", op.Kind, len(c.Data))
	}
	if c.More {
		if !op.Kind.multishot() {
			t.Errorf("%s completion with More set", op.Kind)
		}
		switch op.Kind {
		case OpRecv:
			if c.Res <= 0 || int(c.Res) != len(c.Data) {
				t.Errorf("recv completion: Res %d with %d bytes of Data", c.Res, len(c.Data))
				return
			}
			op.Bytes += int64(c.Res)
			if op.OnData != nil {
				op.OnData(c.Data)
			}
		case OpAccept:
			if c.Res < 0 {
				t.Errorf("accept: intermediate completion with error %d", c.Res)
			} else {
				h.owned[int(c.Res)] = true
			}
		case OpPoll:
			if c.Res <= 0 {
				t.Errorf("poll: intermediate completion with mask %d", c.Res)
			}
		}
		op.More = append(op.More, c.Res)
		return
	}
	op.Done = true
	op.Res = c.Res
	switch op.Kind {
	case OpRecv:
		if c.Res > 0 {
			t.Errorf("recv: final completion carries %d bytes (finals are EOF or an error)", c.Res)
		}
	case OpAccept, OpPoll:
		if c.Res >= 0 {
			t.Errorf("%s: final completion with Res %d (multishot ops end with an error)", op.Kind, c.Res)
		}
	case OpSend:
		if c.Res >= 0 && int(c.Res) != op.Len {
			t.Errorf("send: Res %d, want the whole %d bytes", c.Res, op.Len)
		}
	case OpConnect, OpClose:
		if c.Res > 0 {
			t.Errorf("%s: Res %d, want 0 or -errno", op.Kind, c.Res)
		}
	}
	if op.OnFinal != nil {
		op.OnFinal(op)
	}
}

// ErrnoRes renders a Res for messages: "-ECANCELED", "0", "42".
func ErrnoRes(res int32) string {
	if res >= 0 {
		return fmt.Sprint(res)
	}
	if n := unix.ErrnoName(unix.Errno(-res)); n != "" {
		return "-" + n
	}
	return fmt.Sprint(res)
}

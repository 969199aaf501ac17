package driver

import (
	"fmt"
	"strings"
)

// Features says what a driver does on this kernel (after the profile's mask)
// and why each choice was made.
type Features struct {
	Backend string  // the driver: "io_uring", "epoll" or "epoll+io_uring" (NameURing...)
	Profile Profile // the kernel profile in force

	// io_uring
	SingleIssuer    bool // IORING_SETUP_SINGLE_ISSUER
	DeferTaskrun    bool // IORING_SETUP_DEFER_TASKRUN
	CoopTaskrun     bool // IORING_SETUP_COOP_TASKRUN | TASKRUN_FLAG
	ExtArg          bool // IORING_FEAT_EXT_ARG: submit_and_wait_timeout
	NoDrop          bool // IORING_FEAT_NODROP
	FastPoll        bool // IORING_FEAT_FAST_POLL
	MultishotAccept bool
	MultishotRecv   bool
	MultishotPoll   bool
	BufRing         bool // registered provided-buffer ring
	// PolledRecv: receives wait on a poll, then read into a buffer the
	// driver lends (kernels before 5.19, whose buffer-select receive would
	// hold a provided buffer while it waits).
	PolledRecv bool
	MsgRing    bool // IORING_OP_MSG_RING
	CancelFD   bool // IORING_ASYNC_CANCEL_FD

	// epoll
	EpollPwait2 bool // nanosecond wait timeouts

	// Reasons explains each choice, one line each ("recv: multishot with
	// buffer ring", "fallback: io_uring_setup: EPERM ...").
	Reasons []string
}

// String renders the features on one line for logs.
func (f Features) String() string {
	var on []string
	add := func(b bool, name string) {
		if b {
			on = append(on, name)
		}
	}
	add(f.SingleIssuer, "single_issuer")
	add(f.DeferTaskrun, "defer_taskrun")
	add(f.CoopTaskrun, "coop_taskrun")
	add(f.ExtArg, "ext_arg")
	add(f.NoDrop, "nodrop")
	add(f.FastPoll, "fast_poll")
	add(f.MultishotAccept, "multishot_accept")
	add(f.MultishotRecv, "multishot_recv")
	add(f.MultishotPoll, "multishot_poll")
	add(f.BufRing, "buf_ring")
	add(f.PolledRecv, "polled_recv")
	add(f.MsgRing, "msg_ring")
	add(f.CancelFD, "cancel_fd")
	add(f.EpollPwait2, "epoll_pwait2")
	s := fmt.Sprintf("%s profile=%s [%s]", f.Backend, f.Profile, strings.Join(on, " "))
	if len(f.Reasons) > 0 {
		s += " (" + strings.Join(f.Reasons, "; ") + ")"
	}
	return s
}

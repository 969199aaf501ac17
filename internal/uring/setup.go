//go:build linux && cgo && !ringloop_nouring

package uring

import (
	"errors"
	"fmt"
	"strings"

	"github.com/ringloop/ringloop/internal/driver"
	"github.com/ringloop/ringloop/internal/liburing"
	"golang.org/x/sys/unix"
)

// setupRing creates a ring; tests replace it to simulate refusals.
var setupRing = liburing.Setup

// forceRecv, when set by a test, picks the receive variant regardless of the
// probe (to cover the fallbacks on this kernel).
var forceRecv *recvMode

// setupAttempt is one rung of the setup-flag ladder.
type setupAttempt struct {
	flags        uint32
	major, minor int
	name         string
}

var setupLadder = []setupAttempt{
	{liburing.SetupSingleIssuer | liburing.SetupDeferTaskrun | liburing.SetupTaskrunFlag, 6, 1, "SINGLE_ISSUER|DEFER_TASKRUN|TASKRUN_FLAG"},
	{liburing.SetupSingleIssuer | liburing.SetupDeferTaskrun, 6, 1, "SINGLE_ISSUER|DEFER_TASKRUN"},
	{liburing.SetupSingleIssuer | liburing.SetupCoopTaskrun | liburing.SetupTaskrunFlag, 6, 0, "SINGLE_ISSUER|COOP_TASKRUN|TASKRUN_FLAG"},
	{liburing.SetupCoopTaskrun | liburing.SetupTaskrunFlag, 5, 19, "COOP_TASKRUN|TASKRUN_FLAG"},
	{0, 0, 0, "no taskrun flags"},
}

// createRing walks the setup ladder from the best flags the profile allows
// down; EINVAL means "this kernel lacks a flag", anything else is fatal.
func (d *Driver) createRing() (*liburing.Ring, string, error) {
	p := d.profile
	var rdis uint32
	ladder := setupLadder
	if p.AtLeast(5, 10) {
		rdis = liburing.SetupRDisabled
	}
	var last error
	for _, a := range ladder {
		if a.major > 0 && !p.AtLeast(a.major, a.minor) {
			continue
		}
		for _, extra := range []uint32{rdis, 0} {
			r, err := setupRing(d.entries, d.cqEntries, a.flags|extra)
			if err == nil {
				d.setupFlags = a.flags | extra
				name := a.name
				if extra != 0 {
					name += "|R_DISABLED"
				}
				return r, name, nil
			}
			last = err
			if !errors.Is(err, unix.EINVAL) {
				return nil, "", setupError(err)
			}
			if extra == 0 {
				break
			}
		}
	}
	return nil, "", setupError(last)
}

// setup creates the ring, probes it and decides how each op runs.
func (d *Driver) setup() error {
	cfg := d.cfg
	d.entries = cfg.Entries
	if d.entries == 0 {
		d.entries = defaultEntries
	}
	d.cqEntries = cfg.CQEntries
	if d.cqEntries != 0 && d.cqEntries < d.entries {
		d.entries = d.cqEntries // the kernel wants CQ >= SQ
	}
	r, setupName, err := d.createRing()
	if err != nil {
		return err
	}
	d.ring = r
	d.ringFD.Store(int32(r.FD()))

	probe, err := r.Probe()
	if err != nil {
		return fmt.Errorf("%w: IORING_REGISTER_PROBE: %w", driver.ErrUringUnavailable, err)
	}
	var missing []string
	for _, need := range []struct {
		op   int
		name string
	}{
		{liburing.IORingOpNop, "NOP"}, {liburing.IORingOpAccept, "ACCEPT"},
		{liburing.IORingOpRecv, "RECV"}, {liburing.IORingOpSend, "SEND"},
		{liburing.IORingOpConnect, "CONNECT"}, {liburing.IORingOpClose, "CLOSE"},
		{liburing.IORingOpAsyncCancel, "ASYNC_CANCEL"}, {liburing.IORingOpPollAdd, "POLL_ADD"},
		{liburing.IORingOpRead, "READ"}, {liburing.IORingOpTimeout, "TIMEOUT"},
	} {
		if !probe[need.op] {
			missing = append(missing, need.name)
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("%w: kernel lacks io_uring ops %s", driver.ErrUringUnavailable, strings.Join(missing, ", "))
	}

	p := d.profile
	params := r.Params()
	f := &d.feat
	f.Backend = "io_uring"
	f.Profile = p
	f.SingleIssuer = d.setupFlags&liburing.SetupSingleIssuer != 0
	f.DeferTaskrun = d.setupFlags&liburing.SetupDeferTaskrun != 0
	f.CoopTaskrun = d.setupFlags&liburing.SetupCoopTaskrun != 0
	f.ExtArg = params.Features&liburing.FeatExtArg != 0 && p.AtLeast(5, 11)
	f.NoDrop = params.Features&liburing.FeatNoDrop != 0
	f.FastPoll = params.Features&liburing.FeatFastPoll != 0 && p.AtLeast(5, 7)
	// Multishot poll came with 5.13, as did IORING_FEAT_RSRC_TAGS.
	f.MultishotPoll = params.Features&liburing.FeatRsrcTags != 0 && p.AtLeast(5, 13)
	f.MsgRing = probe[liburing.IORingOpMsgRing] && p.AtLeast(5, 18)
	// Multishot accept and IORING_ASYNC_CANCEL_FD came with 5.19, as did
	// IORING_OP_SOCKET; multishot recv with 6.0, as did IORING_OP_SEND_ZC.
	f.MultishotAccept = probe[liburing.IORingOpSocket] && p.AtLeast(5, 19)
	f.CancelFD = probe[liburing.IORingOpSocket] && p.AtLeast(5, 19)
	multiRecv := probe[liburing.IORingOpSendZC] && p.AtLeast(6, 0)
	r.SetExtArg(f.ExtArg)

	reasons := []string{"setup: " + setupName + fmt.Sprintf(" (sq %d, cq %d)", params.SQEntries, params.CQEntries)}
	if f.ExtArg {
		reasons = append(reasons, "wait: io_uring_enter with EXT_ARG timeout")
	} else {
		reasons = append(reasons, "wait: timeout SQE (EXT_ARG needs 5.11)")
	}
	if f.NoDrop {
		reasons = append(reasons, "overflow: FEAT_NODROP, overflow list flushed when the CQ empties")
	} else {
		reasons = append(reasons, "overflow: kernel without FEAT_NODROP may drop CQEs on overflow; size the CQ generously")
	}
	d.acceptMulti = f.MultishotAccept
	switch {
	case d.acceptMulti:
		reasons = append(reasons, "accept: multishot")
	default:
		reasons = append(reasons, "accept: re-armed single-shot (multishot accept needs 5.19)")
	}
	d.pollMulti = f.MultishotPoll
	switch {
	case d.pollMulti:
		reasons = append(reasons, "poll: multishot")
	default:
		reasons = append(reasons, "poll: re-armed single-shot (multishot poll needs 5.13)")
	}
	f.MultishotAccept, f.MultishotPoll = d.acceptMulti, d.pollMulti

	// Receive: a buffer ring where the kernel takes one, else provided
	// buffers, else a buffer per op.
	d.bufs.size = cfg.BufferSize
	if d.bufs.size <= 0 {
		d.bufs.size = defaultBufferSize
	}
	d.bufs.count = cfg.BufferCount
	if d.bufs.count <= 0 {
		d.bufs.count = defaultBufferCount
	}
	d.bufs.count = min(d.bufs.count, maxBufferCount)
	// Before 5.19 a buffer-select receive takes its buffer when it starts
	// and keeps it while it waits for data (and loses it when cancelled,
	// before 5.18), so idle connections would drain a provided-buffer pool:
	// there receives wait on a poll and read into a buffer the driver lends.
	mode := recvPolled
	if p.AtLeast(5, 19) {
		mode = recvSingleRing
		if multiRecv {
			mode = recvMultiRing
		}
	}
	if forceRecv != nil {
		mode = *forceRecv
	}
	var ringErr error
	if mode <= recvSingleRing {
		if ringErr = d.bufs.registerRing(d.ring); ringErr != nil {
			mode = recvPolled
		}
	}
	d.recv = mode
	f.BufRing = mode <= recvSingleRing
	f.MultishotRecv = mode == recvMultiRing
	f.PolledRecv = mode == recvPolled
	switch mode {
	case recvMultiRing:
		reasons = append(reasons, fmt.Sprintf("recv: multishot with a registered buffer ring (%d x %d B)", d.bufs.count, d.bufs.size))
	case recvSingleRing:
		why := "multishot recv needs 6.0"
		if multiRecv {
			why = "single-shot forced"
		}
		reasons = append(reasons, fmt.Sprintf("recv: re-armed single-shot, buffer select from a registered buffer ring (%d x %d B; %s)", d.bufs.count, d.bufs.size, why))
	case recvPolled:
		why := "buffer rings need 5.19; a provided buffer would be held by each waiting receive"
		if ringErr != nil {
			why = "buffer ring registration: " + ringErr.Error()
		}
		reasons = append(reasons, fmt.Sprintf("recv: readiness poll, then a MSG_DONTWAIT recv into one of %d x %d B the driver lends (%s)", d.bufs.count, d.bufs.size, why))
	case recvPlain:
		reasons = append(reasons, fmt.Sprintf("recv: re-armed single-shot into a %d B buffer per op (no provided buffers)", d.bufs.size))
	}
	if f.CancelFD {
		reasons = append(reasons, "cancel: by user_data; by fd with IORING_ASYNC_CANCEL_FD")
	} else {
		reasons = append(reasons, "cancel: by user_data, one per op (IORING_ASYNC_CANCEL_FD needs 5.19)")
	}
	if f.MsgRing {
		reasons = append(reasons, "msg_ring: loop-to-loop completions with IORING_OP_MSG_RING")
	} else {
		reasons = append(reasons, "msg_ring: unavailable (needs 5.18), use a task ring and Wake")
	}
	reasons = append(reasons, "wake: eventfd with a pending read")
	f.Reasons = reasons
	return nil
}

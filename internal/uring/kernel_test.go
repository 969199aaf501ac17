//go:build linux && cgo && !ringloop_nouring

package uring

import (
	"errors"
	"sync"
	"testing"

	"github.com/ringloop/ringloop/internal/driver"
	"github.com/ringloop/ringloop/internal/liburing"
	"golang.org/x/sys/unix"
)

// kernelCaps is what the running kernel's io_uring has, asked directly
// (setup flags tried, opcodes probed, a buffer ring registered), apart from
// the driver's own choices: tests expect a feature where both the profile
// and the kernel have it, so they hold on any real kernel (Debian's 5.10
// has backports a plain 5.10 lacks and lacks buffer rings).
type kernelCaps struct {
	single, deferTR, coop bool // setup flags accepted
	extArg, multiPoll     bool // FEAT_EXT_ARG, FEAT_RSRC_TAGS (5.13: multishot poll)
	msgRing, socket, zc   bool // opcodes (SOCKET came with multishot accept and cancel by fd, SEND_ZC with multishot recv)
	bufRing               bool // PBUF_RING registration
}

var (
	capsOnce sync.Once
	caps     kernelCaps
	capsErr  error
)

// kernel returns the running kernel's io_uring capabilities.
func kernel(t testing.TB) kernelCaps {
	t.Helper()
	capsOnce.Do(func() { caps, capsErr = probeKernel() })
	if capsErr != nil {
		t.Fatalf("probing the kernel: %v", capsErr)
	}
	return caps
}

func probeKernel() (kernelCaps, error) {
	var k kernelCaps
	accepts := func(flags uint32) (bool, error) {
		r, err := liburing.Setup(8, 0, flags)
		if errors.Is(err, unix.EINVAL) {
			return false, nil
		}
		if err != nil {
			return false, err
		}
		r.Close()
		return true, nil
	}
	var err error
	if k.single, err = accepts(liburing.SetupSingleIssuer); err != nil {
		return k, err
	}
	if k.deferTR, err = accepts(liburing.SetupSingleIssuer | liburing.SetupDeferTaskrun); err != nil {
		return k, err
	}
	if k.coop, err = accepts(liburing.SetupCoopTaskrun | liburing.SetupTaskrunFlag); err != nil {
		return k, err
	}
	r, err := liburing.Setup(8, 0, 0)
	if err != nil {
		return k, err
	}
	defer r.Close()
	feat := r.Params().Features
	k.extArg = feat&liburing.FeatExtArg != 0
	k.multiPoll = feat&liburing.FeatRsrcTags != 0
	probe, err := r.Probe()
	if err != nil {
		return k, err
	}
	k.msgRing = probe[liburing.IORingOpMsgRing]
	k.socket = probe[liburing.IORingOpSocket]
	k.zc = probe[liburing.IORingOpSendZC]
	b := bufPool{count: 2}
	k.bufRing = b.registerRing(r) == nil
	b.unregisterRing(r)
	return k, nil
}

// recvFallback is the receive variant a driver asked for mode runs on this
// kernel: buffer rings fall back to polled receives.
func (k kernelCaps) recvFallback(mode recvMode) recvMode {
	if mode <= recvSingleRing && !k.bufRing {
		mode = recvPolled
	}
	return mode
}

// msgRingUnder reports whether both profile p and the kernel have MSG_RING.
func (k kernelCaps) msgRingUnder(p driver.Profile) bool { return k.msgRing && p.AtLeast(5, 18) }

// featureSet is the driver's feature choices a test compares.
type featureSet struct {
	extArg, multiAccept, multiRecv, multiPoll, bufRing, polled, msgRing, cancelFD bool
	single, deferTR, coop                                                         bool
}

// on turns what a profile allows on a kernel that has everything into what
// the driver must choose on this kernel: each feature needs the kernel's
// support, and refused ones fall back as the driver's setup does.
func (k kernelCaps) on(w featureSet) featureSet {
	w.extArg = w.extArg && k.extArg
	w.multiPoll = w.multiPoll && k.multiPoll
	w.multiAccept = w.multiAccept && k.socket
	w.cancelFD = w.cancelFD && k.socket
	w.msgRing = w.msgRing && k.msgRing
	if w.bufRing && !k.bufRing {
		w.bufRing, w.multiRecv, w.polled = false, false, true
	}
	w.multiRecv = w.multiRecv && k.zc
	if w.deferTR && !k.deferTR {
		// The setup ladder's next rungs: SINGLE_ISSUER|COOP_TASKRUN, then
		// COOP_TASKRUN alone, then no taskrun flags.
		w.deferTR = false
		w.single = k.single && k.coop
		w.coop = k.coop
	}
	w.coop = w.coop && k.coop
	return w
}

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

// setup creates the ring, probes it and applies, family by family, the
// variant the table (variants.go) picks for this kernel and profile.
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
	for _, need := range required {
		if !probe[need.op] {
			missing = append(missing, need.name)
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("%w: kernel lacks io_uring ops %s", driver.ErrUringUnavailable, strings.Join(missing, ", "))
	}

	params := r.Params()
	k := &probed{profile: d.profile, features: params.Features, ops: probe}
	f := &d.feat
	f.Backend = driver.NameURing
	f.Profile = d.profile
	f.SingleIssuer = d.setupFlags&liburing.SetupSingleIssuer != 0
	f.DeferTaskrun = d.setupFlags&liburing.SetupDeferTaskrun != 0
	f.CoopTaskrun = d.setupFlags&liburing.SetupCoopTaskrun != 0
	f.FastPoll = params.Features&liburing.FeatFastPoll != 0 && d.profile.AtLeast(5, 7)
	f.Reasons = []string{"setup: " + setupName + fmt.Sprintf(" (sq %d, cq %d)", params.SQEntries, params.CQEntries)}
	for _, fam := range ringFamilies {
		v := k.pick(formRing, fam.op)
		if fam.best != nil {
			*fam.best(f) = v.best()
		}
		line := v.line()
		if fam.use != nil {
			line = fam.use(d, v)
		}
		f.Reasons = append(f.Reasons, line)
	}
	r.SetExtArg(f.ExtArg) // else the shim adds a timeout SQE to a wait
	return nil
}

package runner

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"time"

	"github.com/ringloop/ringloop/bench/peers"
	"github.com/ringloop/ringloop/engine"
)

// Auto is what engine.New() runs on this machine with no options and no
// environment: the backend the probe picks and the threading mode the
// library gives it. Every ringloop family has a row in that configuration;
// the report marks it "[default]" and sets it against the best row of its
// family (DefaultVsBest).
type Auto struct {
	Backend   string `json:"backend,omitempty"`   // io_uring or epoll, as the loop reports it
	Threading string `json:"threading,omitempty"` // parked or locked
	Reason    string `json:"reason,omitempty"`    // why this backend
	Err       string `json:"error,omitempty"`     // why the choice could not be read
}

// Known reports whether the choice was read.
func (a Auto) Known() bool { return a.Backend != "" && a.Threading != "" }

// Picks reports whether a loop on backend in mode threading is the
// automatic choice.
func (a Auto) Picks(backend, threading string) bool {
	return a.Known() && backend == a.Backend && threading == a.Threading
}

// String renders the choice for a report: "io_uring, locked (auto: io_uring
// available)".
func (a Auto) String() string {
	if !a.Known() {
		return "unknown: " + a.Err
	}
	return fmt.Sprintf("%s, %s (%s)", a.Backend, a.Threading, a.Reason)
}

// BackendDefault reports whether a ringloop row runs its backend's default
// threading mode: what a program that forces the backend and nothing else
// gets (peers.DefaultThreading).
func BackendDefault(r Row) bool {
	var b engine.Backend
	if err := b.UnmarshalText([]byte(r.Backend)); err != nil || b == engine.BackendAuto || r.Family == "" {
		return false
	}
	return r.Threading == peers.DefaultThreading(b)
}

// probeAuto asks the built benchserver, started without any RINGLOOP_
// variable (those are an operator's overrides, not the library's choice),
// which configuration engine.New() picks.
func (r *Runner) probeAuto(ctx context.Context) Auto {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, r.bin("benchserver"), "-auto")
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "RINGLOOP_") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	out, err := cmd.Output()
	if err != nil {
		if ee, ok := err.(*exec.ExitError); ok {
			err = fmt.Errorf("%v: %s", err, strings.TrimSpace(string(ee.Stderr)))
		}
		return Auto{Err: "benchserver -auto: " + err.Error()}
	}
	var a Auto
	if err := json.Unmarshal(out, &a); err != nil || !a.Known() {
		return Auto{Err: fmt.Sprintf("benchserver -auto: bad answer %q", strings.TrimSpace(string(out)))}
	}
	return a
}

// Package proc reads what a server process cost from /proc: CPU time,
// context switches, resident memory and threads.
package proc

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// clockTick is USER_HZ, the unit of utime and stime: 100 on every Linux
// architecture Go supports.
const clockTick = 100

// Sample is a process's counters at one moment.
type Sample struct {
	CPU         time.Duration // utime + stime, all threads
	Voluntary   int64         // context switches, summed over live threads
	Involuntary int64
	RSS         int64 // bytes
	Threads     int64 // entries of /proc/PID/task: the threads alive now
}

// Read samples process pid.
func Read(pid int) (Sample, error) {
	var s Sample
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return s, err
	}
	if s.CPU, err = ParseStatCPU(b); err != nil {
		return s, err
	}
	b, err = os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return s, err
	}
	if s.RSS, err = statusField(b, "VmRSS:"); err != nil {
		return s, err
	}
	s.RSS *= 1024
	// Each thread's switches live in its own status file: the process's
	// file shows only the main thread's.
	dir := fmt.Sprintf("/proc/%d/task", pid)
	tids, err := Tasks(dir)
	if err != nil {
		return s, err
	}
	s.Threads = int64(len(tids))
	for _, tid := range tids {
		t := filepath.Join(dir, tid, "status")
		b, err := os.ReadFile(t)
		if err != nil {
			continue // the thread exited
		}
		v, err1 := statusField(b, "voluntary_ctxt_switches:")
		n, err2 := statusField(b, "nonvoluntary_ctxt_switches:")
		if err1 != nil || err2 != nil {
			return s, fmt.Errorf("proc: %s: no context switch counts", t)
		}
		s.Voluntary += v
		s.Involuntary += n
	}
	return s, nil
}

// Sub is the difference s - o.
func (s Sample) Sub(o Sample) Sample {
	return Sample{CPU: s.CPU - o.CPU, Voluntary: s.Voluntary - o.Voluntary, Involuntary: s.Involuntary - o.Involuntary,
		RSS: s.RSS - o.RSS, Threads: s.Threads - o.Threads}
}

// Tasks lists the thread ids in dir, a /proc/PID/task directory: the
// entries whose names are decimal numbers (anything else is not a thread).
func Tasks(dir string) ([]string, error) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var tids []string
	for _, e := range ents {
		if _, err := strconv.ParseUint(e.Name(), 10, 64); err == nil {
			tids = append(tids, e.Name())
		}
	}
	if len(tids) == 0 {
		return nil, fmt.Errorf("proc: no threads in %s", dir)
	}
	return tids, nil
}

// ParseStatCPU reads utime + stime from the text of /proc/PID/stat. The
// command name (field 2) may hold spaces and parentheses: fields are counted
// after its last ')'.
func ParseStatCPU(b []byte) (time.Duration, error) {
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0, fmt.Errorf("proc: bad stat %q", b)
	}
	f := strings.Fields(string(b[i+1:]))
	// After the name: state(3) ... utime(14) stime(15), so index 11 and 12.
	if len(f) < 13 {
		return 0, fmt.Errorf("proc: short stat %q", b)
	}
	ut, err1 := strconv.ParseInt(f[11], 10, 64)
	st, err2 := strconv.ParseInt(f[12], 10, 64)
	if err1 != nil || err2 != nil {
		return 0, fmt.Errorf("proc: bad utime/stime in %q", b)
	}
	return time.Duration(ut+st) * time.Second / clockTick, nil
}

// statusField reads the number after name in a /proc status file.
func statusField(b []byte, name string) (int64, error) {
	for line := range strings.Lines(string(b)) {
		if rest, ok := strings.CutPrefix(line, name); ok {
			f := strings.Fields(rest)
			if len(f) == 0 {
				break
			}
			return strconv.ParseInt(f[0], 10, 64)
		}
	}
	return 0, fmt.Errorf("proc: no %s in status", name)
}

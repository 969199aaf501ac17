package proc

import (
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestParseStatCPUNameWithSpacesAndParens(t *testing.T) {
	// utime 250 and stime 50 ticks: 3 s at USER_HZ 100.
	stat := "4242 (a (weird) name) S 1 4242 4242 0 -1 4194560 100 0 0 0 250 50 0 0 20 0 3 0 99 1000 200 18446744073709551615\n"
	cpu, err := ParseStatCPU([]byte(stat))
	require.NoError(t, err)
	require.Equal(t, 3*time.Second, cpu)

	_, err = ParseStatCPU([]byte("4242 (x) S 1 2"))
	require.Error(t, err)
	_, err = ParseStatCPU([]byte("no parens"))
	require.Error(t, err)
}

func TestStatusField(t *testing.T) {
	status := "Name:\tserver\nVmRSS:\t   10240 kB\nvoluntary_ctxt_switches:\t17\nnonvoluntary_ctxt_switches:\t3\n"
	v, err := statusField([]byte(status), "VmRSS:")
	require.NoError(t, err)
	require.EqualValues(t, 10240, v)
	v, err = statusField([]byte(status), "nonvoluntary_ctxt_switches:")
	require.NoError(t, err)
	require.EqualValues(t, 3, v)
	_, err = statusField([]byte(status), "VmSwap:")
	require.Error(t, err)
}

func TestReadSelfCountsWork(t *testing.T) {
	before, err := Read(os.Getpid())
	require.NoError(t, err)
	require.Positive(t, before.RSS)
	// Burn CPU until the tick-granular counter moves (no time assumption:
	// loop until it does, the test deadline bounds it).
	x := 0
	for {
		for i := range 1_000_000 {
			x += i
		}
		after, err := Read(os.Getpid())
		require.NoError(t, err)
		if d := after.Sub(before); d.CPU > 0 {
			require.GreaterOrEqual(t, after.Voluntary+after.Involuntary, int64(0))
			break
		}
	}
	_ = x
}

// Tasks counts only the numeric entries of a task directory, and a process
// always has at least its main thread.
func TestTasksCountsThreadIDs(t *testing.T) {
	dir := t.TempDir()
	for _, n := range []string{"4242", "4243", "17", "self", "4x", "-1"} {
		require.NoError(t, os.Mkdir(filepath.Join(dir, n), 0o755))
	}
	tids, err := Tasks(dir)
	require.NoError(t, err)
	require.ElementsMatch(t, []string{"4242", "4243", "17"}, tids)

	_, err = Tasks(t.TempDir())
	require.Error(t, err, "an empty task directory is no process")
	_, err = Tasks(filepath.Join(dir, "missing"))
	require.Error(t, err)
}

// Read counts every thread: k goroutines locked to their threads and
// parked each hold one, and the goroutine calling Read runs on another.
func TestReadCountsThreads(t *testing.T) {
	const k = 8
	release := make(chan struct{})
	var locked sync.WaitGroup
	var done sync.WaitGroup
	for range k {
		locked.Add(1)
		done.Add(1)
		go func() {
			defer done.Done()
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			locked.Done()
			<-release
		}()
	}
	locked.Wait()
	s, err := Read(os.Getpid())
	close(release)
	done.Wait()
	require.NoError(t, err)
	require.GreaterOrEqual(t, s.Threads, int64(k+1))
	before := Sample{Threads: 3}
	require.Equal(t, s.Threads-3, s.Sub(before).Threads, "Sub gives the threads added")
}

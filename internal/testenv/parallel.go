package testenv

import (
	"flag"
	"runtime"
	"strconv"
	"testing"
)

// waitParallel is how many parallel subtests RunWaiting lets run at once
// per core.
const waitParallel = 4

// RunWaiting runs a package's tests (call it from TestMain) with
// -test.parallel's default raised to four per core, unless the flag is
// given: the package's parallel tests (ForEachParallel) spend their time
// waiting out timeouts and deadlines, not computing, so one per core would
// leave the cores idle. It returns m.Run's code for os.Exit.
func RunWaiting(m *testing.M) int {
	flag.Parse()
	set := false
	flag.Visit(func(f *flag.Flag) { set = set || f.Name == "test.parallel" })
	if !set {
		if err := flag.Set("test.parallel", strconv.Itoa(waitParallel*runtime.GOMAXPROCS(0))); err != nil {
			panic(err)
		}
	}
	return m.Run()
}

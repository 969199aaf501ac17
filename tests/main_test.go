package tests

import (
	"flag"
	"os"
	"runtime"
	"strconv"
	"testing"
)

// waitParallel is how many parallel subtests run at once per core unless
// -test.parallel says otherwise: those of this package (testenv's
// ForEachParallel) spend their time waiting out timeouts and deadlines, not
// computing, so one per core would leave the cores idle.
const waitParallel = 4

func TestMain(m *testing.M) {
	flag.Parse()
	set := false
	flag.Visit(func(f *flag.Flag) { set = set || f.Name == "test.parallel" })
	if !set {
		if err := flag.Set("test.parallel", strconv.Itoa(waitParallel*runtime.GOMAXPROCS(0))); err != nil {
			panic(err)
		}
	}
	os.Exit(m.Run())
}

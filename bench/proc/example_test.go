package proc_test

import (
	"fmt"

	"github.com/ringloop/ringloop/bench/proc"
)

func ExampleParseStatCPU() {
	cpu, _ := proc.ParseStatCPU([]byte("7 (bench server) S 1 7 7 0 -1 0 0 0 0 0 120 30 0 0 20 0 1 0 5 0 0"))
	fmt.Println(cpu) // 120 + 30 ticks of 10 ms
	// Output: 1.5s
}

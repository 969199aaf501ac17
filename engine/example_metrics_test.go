package engine_test

import (
	"encoding/json"
	"fmt"

	"github.com/ringloop/ringloop/engine"
)

// A loop's metrics are one plain struct, read from any goroutine: what a
// dashboard, expvar (expvar.Publish("loop", expvar.Func(func() any { return
// loop.Metrics() }))) or package github.com/ringloop/ringloop/metrics
// (Prometheus, labelled with the loop's Name and Backend) takes.
func ExampleLoop_Metrics() {
	loop, err := engine.New(engine.WithName("main"), engine.WithBackend(engine.BackendEpoll), engine.WithThreading(engine.ThreadingLocked))
	if err != nil {
		panic(err)
	}
	defer loop.Close()

	m := loop.Metrics()
	fmt.Println(loop.Name(), loop.Backend().Name, loop.Backend().Threading, m.Connections, m.Panics)
	b, _ := json.Marshal(m)
	var fields map[string]any
	_ = json.Unmarshal(b, &fields)
	fmt.Println(fields["Connections"], fields["Timers"])
	// Output:
	// main epoll locked 0 0
	// 0 0
}

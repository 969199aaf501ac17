package engine_test

import (
	"sort"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ringloop/ringloop/engine"
	"github.com/ringloop/ringloop/internal/testenv"
	"github.com/ringloop/ringloop/tasks"
)

// countTask is a pre-built task: submitting it allocates nothing.
type countTask struct{ n atomic.Int64 }

func (c *countTask) Run() { c.n.Add(1) }

func benchLoop(b *testing.B, c testenv.Combo) *engine.Loop {
	l, err := engine.New(c.Options()...)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = l.Close() })
	return l
}

func forEachBackendB(b *testing.B, fn func(b *testing.B, c testenv.Combo)) {
	for _, c := range testenv.Combos() {
		if c.Profile != "native" {
			continue
		}
		b.Run(c.Backend.String()+"/"+c.Threading.String(), func(b *testing.B) { c.Need(b); fn(b, c) })
	}
}

// BenchmarkExecuteThroughput: producers submit a pre-built task as fast as
// they can; the loop runs them. ns/op is per task.
func BenchmarkExecuteThroughput(b *testing.B) {
	forEachBackendB(b, func(b *testing.B, c testenv.Combo) {
		for _, producers := range []int{1, 4} {
			b.Run(map[int]string{1: "producers=1", 4: "producers=4"}[producers], func(b *testing.B) {
				l := benchLoop(b, c)
				task := &countTask{}
				b.ReportAllocs()
				b.ResetTimer()
				var wg sync.WaitGroup
				per := b.N / producers
				for range producers {
					wg.Add(1)
					go func() {
						defer wg.Done()
						for range per {
							for l.Execute(task) != nil {
							}
						}
					}()
				}
				wg.Wait()
				for task.n.Load() < int64(per*producers) {
				}
				b.StopTimer()
			})
		}
	})
}

// BenchmarkExecuteLatency: one goroutine submits a task to an idle loop and
// waits for it to run; reports p50 and p99 enqueue-to-run latency.
func BenchmarkExecuteLatency(b *testing.B) {
	forEachBackendB(b, func(b *testing.B, c testenv.Combo) {
		l := benchLoop(b, c)
		lat := make([]time.Duration, 0, b.N)
		done := make(chan struct{}, 1)
		var sent time.Time
		task := func() { lat = append(lat, time.Since(sent)); done <- struct{}{} }
		b.ReportAllocs()
		b.ResetTimer()
		for range b.N {
			sent = time.Now()
			_ = l.Execute(tasks.Func(task))
			<-done
		}
		b.StopTimer()
		sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
		b.ReportMetric(float64(lat[len(lat)/2].Nanoseconds()), "p50-ns")
		b.ReportMetric(float64(lat[len(lat)*99/100].Nanoseconds()), "p99-ns")
	})
}

// BenchmarkChanBaseline is the Go default for the same job: a goroutine
// draining a buffered chan func().
func BenchmarkChanBaseline(b *testing.B) {
	for _, producers := range []int{1, 4} {
		b.Run(map[int]string{1: "producers=1", 4: "producers=4"}[producers], func(b *testing.B) {
			ch := make(chan func(), 1024)
			var n atomic.Int64
			fn := func() { n.Add(1) }
			go func() {
				for f := range ch {
					f()
				}
			}()
			b.ReportAllocs()
			b.ResetTimer()
			var wg sync.WaitGroup
			per := b.N / producers
			for range producers {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for range per {
						ch <- fn
					}
				}()
			}
			wg.Wait()
			for n.Load() < int64(per*producers) {
			}
			b.StopTimer()
			close(ch)
		})
	}
}

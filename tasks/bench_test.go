package tasks

import "testing"

// BenchmarkPromise: a promise completed with one listener, without a waiter.
func BenchmarkPromise(b *testing.B) {
	b.ReportAllocs()
	fn := func(Future[int]) {}
	for range b.N {
		p := NewPromise[int](nil)
		p.AddListener(nil, fn)
		p.Succeed(1)
	}
}

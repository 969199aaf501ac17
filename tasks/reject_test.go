package tasks

import (
	"errors"
	"testing"
	"time"
)

// full is a ring with no room: retry fails until room is made.
type full struct {
	room    bool
	retries int
}

func (f *full) retry() bool { f.retries++; return f.room }

func TestReject(t *testing.T) {
	f := &full{room: true}
	err := Reject().Rejected(f.retry, nil, false)
	must(t, errors.Is(err, ErrRejected), "Reject: %v", err)
	eq(t, f.retries, 0, "Reject retried")
}

func TestBackoffOnConsumerNeverWaits(t *testing.T) {
	f := &full{}
	woken := 0
	done := make(chan error, 1)
	go func() { done <- Backoff(5, time.Hour).Rejected(f.retry, func() { woken++ }, true) }()
	select { // waiting on the consumer would take five hours
	case err := <-done:
		must(t, errors.Is(err, ErrRejected), "on consumer: %v", err)
	case <-time.After(time.Minute):
		t.Fatal("Backoff waited on the consumer")
	}
	eq(t, woken, 0, "wakes on the consumer")
	eq(t, f.retries, 0, "retries on the consumer")
}

func TestBackoffRetries(t *testing.T) {
	f := &full{}
	woken := 0
	err := Backoff(3, 0).Rejected(f.retry, func() { woken++ }, false)
	must(t, errors.Is(err, ErrRejected), "no room: %v", err)
	eq(t, woken, 3, "one wake per retry")
	eq(t, f.retries, 3, "retries")

	// A consumer that makes room on its first wake: the first retry takes.
	f, woken = &full{}, 0
	err = Backoff(3, time.Microsecond).Rejected(f.retry, func() { woken++; f.room = true }, false)
	must(t, err == nil, "Backoff with a draining consumer: %v", err)
	eq(t, woken, 1, "wakes until room")
	eq(t, f.retries, 1, "retries until room")

	// nil wake is allowed.
	must(t, errors.Is(Backoff(1, 0).Rejected((&full{}).retry, nil, false), ErrRejected), "nil wake")
}

func TestBackoffPanicsOnBadArguments(t *testing.T) {
	for _, f := range []func(){
		func() { Backoff(0, time.Millisecond) },
		func() { Backoff(-1, time.Millisecond) },
		func() { Backoff(1, -time.Millisecond) },
	} {
		func() {
			defer func() { must(t, recover() != nil, "no panic") }()
			f()
		}()
	}
}

package tasks

import (
	"errors"
	"testing"
	"time"
)

func fullQueue(t *testing.T) (Queue, []*item) {
	q := NewBounded(16)
	it := items(0, 17)
	for _, x := range it[:16] {
		must(t, q.Offer(x), "Offer")
	}
	return q, it
}

func TestReject(t *testing.T) {
	q, it := fullQueue(t)
	err := Enqueue(q, it[16], Reject(), nil, false)
	must(t, errors.Is(err, ErrRejected), "Reject: %v", err)
	must(t, errors.Is(Enqueue(q, it[16], nil, nil, false), ErrRejected), "nil policy")
	q.Poll()
	must(t, Enqueue(q, it[16], Reject(), nil, false) == nil, "Enqueue with room")
}

func TestBackoffOnConsumerNeverWaits(t *testing.T) {
	q, it := fullQueue(t)
	woken := 0
	done := make(chan error, 1)
	go func() { done <- Backoff(5, time.Hour).Rejected(q, it[16], func() { woken++ }, true) }()
	select { // waiting on the consumer would take five hours
	case err := <-done:
		must(t, errors.Is(err, ErrRejected), "on consumer: %v", err)
	case <-time.After(time.Minute):
		t.Fatal("Backoff waited on the consumer")
	}
	eq(t, woken, 0, "wakes on the consumer")
}

func TestBackoffRetries(t *testing.T) {
	q, it := fullQueue(t)
	woken := 0
	err := Backoff(3, 0).Rejected(q, it[16], func() { woken++ }, false)
	must(t, errors.Is(err, ErrRejected), "no room: %v", err)
	eq(t, woken, 3, "one wake per retry")

	// A consumer that drains one task per wake makes room on the first retry.
	woken = 0
	err = Enqueue(q, it[16], Backoff(3, time.Microsecond), func() { woken++; q.Poll() }, false)
	must(t, err == nil, "Backoff with a draining consumer: %v", err)
	eq(t, woken, 1, "wakes until room")
	eq(t, q.Len(), 16, "queue full again")

	// nil wake is allowed.
	must(t, errors.Is(Backoff(1, 0).Rejected(q, it[0], nil, false), ErrRejected), "nil wake")
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

func TestRejectFunc(t *testing.T) {
	q, it := fullQueue(t)
	var got Task
	mine := errors.New("custom")
	p := RejectFunc(func(_ Queue, x Task, _ func(), _ bool) error { got = x; return mine })
	must(t, Enqueue(q, it[16], p, nil, false) == mine, "custom policy error")
	eq(t, got, Task(it[16]), "task handed to the policy")
}

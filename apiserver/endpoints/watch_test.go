package endpoints

import (
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/watch"
)

type countingFlusher struct{ n int }

func (c *countingFlusher) Flush() { c.n++ }

// A watch flushes each event as it is written until it has been flushing
// busyFlushes times a flushBucket; then at most once a flushWindow, the
// events written meanwhile going out together, until it quietens again.
func TestWatchFlusher(t *testing.T) {
	cf := &countingFlusher{}
	f := watchFlusher{flusher: cf}
	defer f.stop()
	now := time.Unix(1000, 0)
	step := func(d time.Duration) { now = now.Add(d) }

	// Quiet: every caught-up write is flushed at once.
	for i := range 5 {
		f.caughtUp(now)
		if cf.n != i+1 || f.deferred {
			t.Fatalf("quiet event %d: %d flushes, deferred %v", i, cf.n, f.deferred)
		}
		step(30 * time.Millisecond)
	}
	// Busy: an event every 2 ms for a bucket and more.
	for range 60 {
		f.caughtUp(now)
		step(2 * time.Millisecond)
		if f.deferred {
			break
		}
	}
	if !f.busy || !f.deferred {
		t.Fatalf("after 120 ms of events every 2 ms: busy %v, deferred %v", f.busy, f.deferred)
	}
	flushed := cf.n
	// While deferred the loop waits on the timer, not on events.
	if f.due() == nil {
		t.Fatal("deferred flush without a timer to wait on")
	}
	if f.events(make(chan watch.Event)) != nil {
		t.Fatal("events offered while a flush is deferred")
	}
	select {
	case <-f.due():
	case <-time.After(time.Second):
		t.Fatal("deferred flush never due")
	}
	step(flushWindow)
	f.caughtUp(now)
	if cf.n != flushed+1 || f.deferred {
		t.Fatalf("when due: %d flushes (want %d), deferred %v", cf.n, flushed+1, f.deferred)
	}
	// Quiet again: after a bucket with few flushes, each is immediate.
	for range 3 {
		step(60 * time.Millisecond)
		f.caughtUp(now)
	}
	if f.busy {
		t.Fatal("still busy after flushes 60 ms apart")
	}
	before := cf.n
	step(time.Millisecond)
	f.caughtUp(now)
	if cf.n != before+1 {
		t.Fatal("a quiet watch's flush was deferred")
	}
}

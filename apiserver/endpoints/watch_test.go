package endpoints

import (
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/watch"
)

type countingFlusher struct{ n int }

func (c *countingFlusher) Flush() { c.n++ }

// A watch flushes each event as it is written until it has been flushing
// busyFlushes times a flushBucket; then it flushes at most once a
// flushWindow and sleeps through each window (its events queueing) until
// a window passes with nothing written, and it quietens again.
func TestWatchFlusher(t *testing.T) {
	cf := &countingFlusher{}
	f := watchFlusher{flusher: cf}
	defer f.stop()
	now := time.Unix(1000, 0)
	step := func(d time.Duration) { now = now.Add(d) }
	event := func() { f.wrote(); f.caughtUp(now) }
	fired := func(what string) {
		t.Helper()
		if f.due() == nil {
			t.Fatalf("%s: sleeping without a timer to wait on", what)
		}
		if f.events(make(chan watch.Event)) != nil {
			t.Fatalf("%s: events offered while sleeping", what)
		}
		select {
		case <-f.due():
		case <-time.After(time.Second):
			t.Fatalf("%s: the window never ended", what)
		}
	}

	// Quiet: every caught-up write is flushed at once.
	for i := range 5 {
		event()
		if cf.n != i+1 || f.deferred {
			t.Fatalf("quiet event %d: %d flushes, sleeping %v", i, cf.n, f.deferred)
		}
		step(30 * time.Millisecond)
	}
	// Busy: an event every 2 ms for a bucket and more. The flush that
	// finds the watch busy is made, then the watch sleeps a window.
	for range 60 {
		before := cf.n
		event()
		if cf.n != before+1 {
			t.Fatal("a flush was held before the watch was busy")
		}
		step(2 * time.Millisecond)
		if f.deferred {
			break
		}
	}
	if !f.busy || !f.deferred {
		t.Fatalf("after 120 ms of events every 2 ms: busy %v, sleeping %v", f.busy, f.deferred)
	}
	// Events written while it slept go out together when the window ends,
	// and it sleeps again.
	fired("after the first busy flush")
	step(flushWindow)
	flushed := cf.n
	f.wrote()
	f.wrote()
	f.caughtUp(now)
	if cf.n != flushed+1 || !f.deferred {
		t.Fatalf("at the window's end: %d flushes (want %d), sleeping %v", cf.n, flushed+1, f.deferred)
	}
	// A window with nothing written: no flush, and it waits for events.
	fired("after a window's events")
	step(flushWindow)
	f.caughtUp(now)
	if cf.n != flushed+1 || f.deferred {
		t.Fatalf("after an empty window: %d flushes (want %d), sleeping %v", cf.n, flushed+1, f.deferred)
	}
	// The next event, a window or more after the last flush, goes at once.
	step(time.Millisecond)
	event()
	if cf.n != flushed+2 {
		t.Fatalf("an event after an empty window was held: %d flushes, want %d", cf.n, flushed+2)
	}
	// Quiet again: after a bucket with few flushes (the first one still
	// counts the busy stretch's), each is immediate.
	for range 4 {
		if f.deferred {
			fired("while quietening")
		}
		step(60 * time.Millisecond)
		event()
	}
	if f.busy || f.deferred {
		t.Fatalf("after flushes 60 ms apart: busy %v, sleeping %v", f.busy, f.deferred)
	}
	before := cf.n
	step(time.Millisecond)
	event()
	if cf.n != before+1 || f.deferred {
		t.Fatal("a quiet watch's flush was held")
	}
}

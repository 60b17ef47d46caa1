package endpoints

import (
	"fmt"
	"sync/atomic"
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
//
// The window is fewBusyWindow while few of the handler's watches are busy
// and flushWindow once many are; the handler's count follows this watch.
func TestWatchFlusher(t *testing.T) {
	for _, others := range []int64{0, manyBusyWatches} {
		busy := &atomic.Int64{}
		busy.Store(others)
		want := fewBusyWindow
		if others > 0 {
			want = flushWindow
		}
		t.Run(fmt.Sprintf("%d other busy watches", others), func(t *testing.T) {
			testWatchFlusher(t, busy, want)
			if n := busy.Load(); n != others {
				t.Errorf("busy watches %d after the watch stopped, want %d", n, others)
			}
			// A watch that ends while busy leaves the count too.
			ending := watchFlusher{busyWatches: busy}
			ending.setBusy(true)
			ending.stop()
			if n := busy.Load(); n != others {
				t.Errorf("busy watches %d after a busy watch ended, want %d", n, others)
			}
		})
	}
}

func testWatchFlusher(t *testing.T, busyWatches *atomic.Int64, window time.Duration) {
	others := busyWatches.Load()
	cf := &countingFlusher{}
	f := watchFlusher{flusher: cf, busyWatches: busyWatches}
	defer f.stop()
	now := time.Unix(1000, 0)
	step := func(d time.Duration) { now = now.Add(d) }
	event := func() { f.wrote(); f.caughtUp(now) }
	fired := func(what string) {
		t.Helper()
		if f.due() == nil {
			t.Fatalf("%s: sleeping without a timer to wait on", what)
		}
		if awake(&f, make(chan watch.Event)) != nil || awake(&f, make(chan struct{})) != nil {
			t.Fatalf("%s: events offered while sleeping", what)
		}
		select {
		case <-f.due():
		case <-time.After(5 * time.Second):
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
	if awake(&f, make(chan watch.Event)) == nil || awake(&f, make(chan struct{})) == nil {
		t.Fatal("quiet: events not offered")
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
	if n := busyWatches.Load(); n != others+1 {
		t.Fatalf("busy watches %d while this one is busy, want %d", n, others+1)
	}
	if f.window() != window {
		t.Fatalf("window %v, want %v", f.window(), window)
	}
	// Events written while it slept go out together when the window ends,
	// and it sleeps again.
	fired("after the first busy flush")
	step(window)
	flushed := cf.n
	f.wrote()
	f.wrote()
	f.caughtUp(now)
	if cf.n != flushed+1 || !f.deferred {
		t.Fatalf("at the window's end: %d flushes (want %d), sleeping %v", cf.n, flushed+1, f.deferred)
	}
	// A window with nothing written: no flush, and it waits for events.
	fired("after a window's events")
	step(window)
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
	if n := busyWatches.Load(); n != others {
		t.Fatalf("busy watches %d once this one quietened, want %d", n, others)
	}
	before := cf.n
	step(time.Millisecond)
	event()
	if cf.n != before+1 || f.deferred {
		t.Fatal("a quiet watch's flush was held")
	}
}

package cli

import (
	"runtime/debug"
	"testing"
	"time"
)

var sink [][]byte

// TestBurstReleaserMeasuresQuiet: quiet is time measured between samples,
// whatever the caller's pace; a sample after a busy stretch resets it.
func TestBurstReleaserMeasuresQuiet(t *testing.T) {
	r := newBurstReleaser()
	t0 := time.Now()
	r.tick(t0) // the first sample only sets the baseline
	if r.quiet != 0 {
		t.Fatalf("quiet after the first sample: %v", r.quiet)
	}
	// A busy second: twice a quiet second's allocation.
	for range 4 {
		sink = append(sink, make([]byte, quietAllocRate/2))
	}
	sink = nil
	r.tick(t0.Add(time.Second))
	if r.quiet != 0 {
		t.Fatalf("a second with %d MB allocated counted as %v of quiet", 2*quietAllocRate>>20, r.quiet)
	}
	// Then quiet, sampled at two different paces.
	r.tick(t0.Add(1250 * time.Millisecond))
	r.tick(t0.Add(1500 * time.Millisecond))
	r.tick(t0.Add(2500 * time.Millisecond))
	if r.quiet != 1500*time.Millisecond {
		t.Fatalf("quiet %v after 1.5 s without allocation, want 1.5s", r.quiet)
	}
}

// After a burst that left much held above the live heap, the tail of
// background work that follows it counts as quiet; a busy process with
// little held does not.
func TestQuietRateScalesWithWhatABurstLeft(t *testing.T) {
	const mb = 1 << 20
	for _, tc := range []struct {
		held, live uint64
		rate       float64 // MB a second
		quiet      bool
	}{
		{held: 60 * mb, live: 50 * mb, rate: 3, quiet: true},
		{held: 60 * mb, live: 50 * mb, rate: 6, quiet: false},
		{held: 250 * mb, live: 90 * mb, rate: 15, quiet: true},
		{held: 250 * mb, live: 90 * mb, rate: 30, quiet: false},
		{held: 40 * mb, live: 50 * mb, rate: 3, quiet: true}, // live above held between samples
	} {
		if quiet := tc.rate*mb <= quietRate(tc.held, tc.live); quiet != tc.quiet {
			t.Errorf("held %d MB, live %d MB, %v MB/s: quiet %v, want %v", tc.held/mb, tc.live/mb, tc.rate, quiet, tc.quiet)
		}
	}
}

// currentGCPercent reads GOGC (SetGCPercent returns the old value).
func currentGCPercent() int {
	p := debug.SetGCPercent(100)
	debug.SetGCPercent(p)
	return p
}

func TestBusyPercentKeepsTheHeapWithinBudget(t *testing.T) {
	const mb = 1 << 20
	for _, tc := range []struct {
		live uint64
		want int
	}{
		{0, 300}, {20 * mb, 300}, {48 * mb, 250}, {96 * mb, 150}, {144 * mb, 116}, {192 * mb, 100}, {960 * mb, 100}, {100_000 * mb, 100},
	} {
		got := busyPercent(tc.live)
		if got != tc.want {
			t.Errorf("live %d MB: GOGC %d, want %d", tc.live/mb, got, tc.want)
		}
		if extra := tc.live * uint64(got-100) / 100; got > 100 && got < maxBusyPercent && extra > busyHeapBudget {
			t.Errorf("live %d MB: GOGC %d lets the heap grow %d MB beyond GOGC=100's goal", tc.live/mb, got, extra/mb)
		}
	}
}

// Allocating fast raises GOGC; allocating slowly again restores 100.
func TestGCPacerFollowsTheAllocationRate(t *testing.T) {
	before := debug.SetGCPercent(100)
	t.Cleanup(func() { debug.SetGCPercent(before) })
	p := newGCPacer()
	t0 := time.Now()
	p.tick(t0)
	// Half of busyAllocRate in a quarter second: twice the busy rate.
	for range 8 {
		sink = append(sink, make([]byte, busyAllocRate/16))
	}
	sink = nil
	p.tick(t0.Add(250 * time.Millisecond))
	if !p.busy || currentGCPercent() <= 100 {
		t.Fatalf("after allocating at twice the busy rate: busy %v, GOGC %d", p.busy, currentGCPercent())
	}
	// A slower stretch above a quarter of the rate keeps it busy.
	for range 2 {
		sink = append(sink, make([]byte, busyAllocRate/16))
	}
	sink = nil
	p.tick(t0.Add(500 * time.Millisecond))
	if !p.busy {
		t.Fatal("allocating at half the busy rate ended the busy state")
	}
	p.tick(t0.Add(1500 * time.Millisecond))
	if p.busy || currentGCPercent() != 100 {
		t.Fatalf("after a quiet second: busy %v, GOGC %d", p.busy, currentGCPercent())
	}
	if !p.lastFree.Equal(t0.Add(1500 * time.Millisecond)) {
		t.Fatalf("the end of the busy stretch did not return the heap (last at %v)", p.lastFree)
	}
	// Busy and quiet again within freeEvery: GOGC goes back, the heap is
	// left to burstReleaser; after freeEvery it is returned again.
	busyThenQuiet := func(at time.Time) {
		t.Helper()
		p.tick(at.Add(-250 * time.Millisecond)) // quiet until then
		for range 8 {
			sink = append(sink, make([]byte, busyAllocRate/16))
		}
		sink = nil
		p.tick(at)
		if !p.busy {
			t.Fatalf("at %v: not busy after allocating fast", at.Sub(t0))
		}
		p.tick(at.Add(time.Second))
		if p.busy || currentGCPercent() != 100 {
			t.Fatalf("at %v: busy %v, GOGC %d after a quiet second", at.Sub(t0), p.busy, currentGCPercent())
		}
	}
	busyThenQuiet(t0.Add(1750 * time.Millisecond))
	if !p.lastFree.Equal(t0.Add(1500 * time.Millisecond)) {
		t.Fatalf("the heap was returned again %v after the last time", p.lastFree.Sub(t0.Add(1500*time.Millisecond)))
	}
	busyThenQuiet(t0.Add(freeEvery + 2*time.Second))
	if !p.lastFree.Equal(t0.Add(freeEvery + 3*time.Second)) {
		t.Fatalf("the heap was not returned %v after the last time", freeEvery+1500*time.Millisecond)
	}
}

// A busy GOGC follows the live heap only when it moves by a tenth or more.
func TestGCPacerSetsPercentOnTenthChanges(t *testing.T) {
	before := debug.SetGCPercent(100)
	t.Cleanup(func() { debug.SetGCPercent(before) })
	p := newGCPacer()
	for _, step := range []struct{ set, want int }{{200, 200}, {210, 200}, {181, 200}, {225, 225}, {200, 200}} {
		p.setPercent(step.set)
		if got := currentGCPercent(); got != step.want {
			t.Fatalf("after setPercent(%d): GOGC %d, want %d", step.set, got, step.want)
		}
	}
}

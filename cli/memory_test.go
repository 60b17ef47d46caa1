package cli

import (
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

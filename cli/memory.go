package cli

import (
	"runtime/debug"
	"runtime/metrics"
	"time"
)

// burstReleaser gives the heap a burst of work left behind back to the OS
// once the process is quiet again. After a few hundred CRDs are applied,
// the live heap is a fraction of what the burst grew it to; Go keeps the
// difference for minutes (the heap goal is twice the live heap, and the
// scavenger is gradual), and on a laptop that memory belongs elsewhere.
type burstReleaser struct {
	samples    []metrics.Sample
	lastAllocs uint64
	lastSample time.Time
	// quiet is how long the process has been quiet, as measured between
	// samples (the caller's pace does not matter).
	quiet       time.Duration
	lastRelease time.Time
	// filesAfterRelease is the file RSS the last release left (see
	// releaseFilePages).
	filesAfterRelease uint64
}

const (
	// quietAllocRate: below this many bytes allocated a second the
	// process counts as quiet at least (idle controllers allocate well
	// under it); quietRate raises it after a large burst.
	quietAllocRate = 4 << 20
	// releaseAbove: release only when more than this much heap above the
	// live heap is held.
	releaseAbove = 48 << 20
	// releaseEvery bounds how often (a release costs a full GC).
	releaseEvery = 10 * time.Second
	// quietFor: how long quiet must last after a burst before a release;
	// short enough that a burst's memory is back before a user looks.
	quietFor = time.Second
)

// quietRate is the allocation rate (bytes a second) below which the
// process counts as quiet: quietAllocRate, or an eighth of what a burst
// left held above the live heap, whichever is more. Controllers catching
// up after a burst of CRDs (or a client still trickling requests)
// allocate a few MB a second for a while, and that tail should not keep
// the burst's hundred MB held; the next allocations fault a few pages
// back, a cost well below holding the rest.
func quietRate(held, live uint64) float64 {
	rate := float64(quietAllocRate)
	if held > live {
		rate = max(rate, float64(held-live)/8)
	}
	return rate
}

func newBurstReleaser() *burstReleaser {
	return &burstReleaser{samples: []metrics.Sample{
		{Name: "/gc/heap/allocs:bytes"},
		{Name: "/gc/heap/live:bytes"},
		{Name: "/memory/classes/heap/objects:bytes"},
		{Name: "/memory/classes/heap/unused:bytes"},
		{Name: "/memory/classes/heap/free:bytes"},
	}, lastRelease: time.Now()}
}

// tick is called every second or so; it releases once quietFor of quiet
// follows a burst that left enough behind.
func (r *burstReleaser) tick(now time.Time) {
	metrics.Read(r.samples)
	value := func(i int) uint64 {
		if r.samples[i].Value.Kind() != metrics.KindUint64 {
			return 0
		}
		return r.samples[i].Value.Uint64()
	}
	allocs, live := value(0), value(1)
	held := value(2) + value(3) + value(4)
	allocated, elapsed := allocs-r.lastAllocs, now.Sub(r.lastSample)
	first := r.lastSample.IsZero()
	r.lastAllocs, r.lastSample = allocs, now
	if first {
		return
	}
	if float64(allocated) > quietRate(held, live)*elapsed.Seconds() {
		r.quiet = 0
		return
	}
	r.quiet += elapsed
	if r.quiet < quietFor || now.Sub(r.lastRelease) <= releaseEvery {
		return
	}
	if held > live+releaseAbove {
		r.lastRelease = now
		debug.FreeOSMemory()
	}
	// The burst's database pages, too (see releaseFilePages).
	if files := fileRSS(); files > r.filesAfterRelease+releaseAbove/2 {
		r.lastRelease = now
		releaseFilePages(false)
		r.filesAfterRelease = fileRSS()
	}
}

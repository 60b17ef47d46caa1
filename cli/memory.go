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
	sampler allocSampler
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
	// releaseAbove: release only when more than this much heap above what
	// GOGC=100 holds (twice the live heap) is held.
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
	return &burstReleaser{sampler: newAllocSampler(
		"/gc/heap/live:bytes",
		"/memory/classes/heap/objects:bytes",
		"/memory/classes/heap/unused:bytes",
		"/memory/classes/heap/free:bytes",
	), lastRelease: time.Now()}
}

// allocSampler reads runtime metrics, and how much the heap allocated
// since its previous read.
type allocSampler struct {
	samples    []metrics.Sample // /gc/heap/allocs:bytes, then those named
	lastAllocs uint64
	lastSample time.Time
}

func newAllocSampler(names ...string) allocSampler {
	samples := []metrics.Sample{{Name: "/gc/heap/allocs:bytes"}}
	for _, name := range names {
		samples = append(samples, metrics.Sample{Name: name})
	}
	return allocSampler{samples: samples}
}

// read returns the named metrics' values in order, and the bytes
// allocated and the time elapsed since the previous read; ok is false on
// the first read, which only sets the baseline.
func (s *allocSampler) read(now time.Time) (values []uint64, allocated uint64, elapsed time.Duration, ok bool) {
	metrics.Read(s.samples)
	all := make([]uint64, len(s.samples))
	for i := range s.samples {
		if s.samples[i].Value.Kind() == metrics.KindUint64 {
			all[i] = s.samples[i].Value.Uint64()
		}
	}
	allocated, elapsed = all[0]-s.lastAllocs, now.Sub(s.lastSample)
	ok = !s.lastSample.IsZero()
	s.lastAllocs, s.lastSample = all[0], now
	return all[1:], allocated, elapsed, ok
}

// tick is called every second or so; it releases once quietFor of quiet
// follows a burst that left enough behind.
func (r *burstReleaser) tick(now time.Time) {
	values, allocated, elapsed, ok := r.sampler.read(now)
	if !ok {
		return
	}
	live, held := values[0], values[1]+values[2]+values[3]
	if float64(allocated) > quietRate(held, live)*elapsed.Seconds() {
		r.quiet = 0
		return
	}
	r.quiet += elapsed
	if r.quiet < quietFor || now.Sub(r.lastRelease) <= releaseEvery {
		return
	}
	// More than GOGC=100 holds at steady state (twice the live heap): a
	// busy idle (1,000 nodes renewing their Leases) reaches that goal every
	// few seconds, and releasing it every 10 s only made the collector and
	// the kernel give back and fault in the same pages again (a twentieth
	// of its CPU).
	if held > 2*live+releaseAbove {
		r.lastRelease = now
		debug.FreeOSMemory()
	}
	// The burst's database and code pages, too (see releaseFilePages).
	if files := fileRSS(); files > r.filesAfterRelease+releaseAbove/2 {
		r.lastRelease = now
		releaseFilePages(true)
		r.filesAfterRelease = fileRSS()
	}
}

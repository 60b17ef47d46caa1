package cli

import (
	"context"
	"os"
	"runtime/debug"
	"time"
)

// Under a sustained load of writes, a tenth of devplane's CPU went to
// collecting garbage: the live heap is small (tens of MB) next to what
// requests allocate (~150 MB a second at 3,000 writes/s), so with Go's
// default GOGC=100 it collected several times a second. Raised to 300, the
// collector's share of the server's CPU under that load fell from ~10% to
// ~4%, and the same writes took about a tenth less CPU. gcPacer raises
// GOGC while the process allocates fast, by as much as lets the heap grow
// busyHeapBudget beyond what GOGC=100 would hold (a large live heap gets
// little or nothing), and once allocation falls back restores GOGC=100 and
// returns the difference to the OS at once (at most every freeEvery): an
// idle devplane is as small as before, and a burst's memory is back within
// a second of its end.
type gcPacer struct {
	sampler  allocSampler
	busy     bool
	percent  int // GOGC set while busy
	lastFree time.Time
}

const (
	// busyAllocRate: allocating this many bytes a second or more makes
	// the process busy; below a quarter of it, it is busy no more.
	busyAllocRate = 64 << 20
	// busyHeapBudget bounds the heap a busy process may hold beyond
	// GOGC=100's goal (see busyPercent).
	busyHeapBudget = 96 << 20
	maxBusyPercent = 300
	gcPaceEvery    = 250 * time.Millisecond
	// freeEvery bounds how often the end of a busy stretch returns the
	// heap at once (a full collection each time) when load comes and goes;
	// in between, burstReleaser returns it after a quiet second.
	freeEvery = 5 * time.Second
)

func newGCPacer() *gcPacer {
	return &gcPacer{sampler: newAllocSampler("/gc/heap/live:bytes")}
}

// paceGC runs a gcPacer until ctx ends, unless the user chose GOGC or a
// memory limit themselves.
func paceGC(ctx context.Context) {
	if os.Getenv("GOGC") != "" || os.Getenv("GOMEMLIMIT") != "" {
		return
	}
	p := newGCPacer()
	t := time.NewTicker(gcPaceEvery)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			if p.busy {
				debug.SetGCPercent(100)
			}
			return
		case now := <-t.C:
			p.tick(now)
		}
	}
}

// busyPercent is the GOGC that lets a heap of live bytes grow beyond
// GOGC=100's goal (live × 2) by busyHeapBudget less half the live heap,
// within 100–300: nothing from a live heap of twice the budget on. A large
// live heap made during the burst (a 10,000-pod rollout's cache) has its
// objects spread over every span the busy heap grew into, and those spans
// stay resident after it: at ~190 MB live, GOGC raised to ~150 left ~50 MB
// more RSS after the rollout than GOGC=100.
func busyPercent(live uint64) int {
	if live == 0 {
		return maxBusyPercent
	}
	if live >= 2*busyHeapBudget {
		return 100
	}
	budget := busyHeapBudget - live/2
	return int(min(100+100*budget/live, maxBusyPercent))
}

// tick samples the allocation rate since the last tick and moves in and
// out of the busy state.
func (p *gcPacer) tick(now time.Time) {
	values, allocated, elapsed, ok := p.sampler.read(now)
	if !ok || elapsed <= 0 {
		return
	}
	live := values[0]
	rate := float64(allocated) / elapsed.Seconds()
	switch {
	case !p.busy && rate >= busyAllocRate:
		p.busy = true
		p.percent = 0
		p.setPercent(busyPercent(live))
	case p.busy && rate < busyAllocRate/4:
		p.busy = false
		debug.SetGCPercent(100)
		if now.Sub(p.lastFree) >= freeEvery {
			p.lastFree = now
			debug.FreeOSMemory() // the heap the busy GOGC let grow
		}
	case p.busy:
		p.setPercent(busyPercent(live)) // follow a live heap that grows
	}
}

// setPercent sets GOGC to percent when it moved by a tenth or more (each
// change costs the runtime a brief stop).
func (p *gcPacer) setPercent(percent int) {
	if diff := percent - p.percent; p.percent != 0 && max(diff, -diff)*10 < p.percent {
		return
	}
	p.percent = percent
	debug.SetGCPercent(percent)
}

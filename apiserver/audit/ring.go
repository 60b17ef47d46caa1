package audit

import (
	"slices"
	"sort"
	"sync"
	"time"
)

// DefaultRingSize is how many recent requests a server keeps: at a few
// hundred bytes each, about 2 MB once full.
const DefaultRingSize = 4096

// Ring holds the last requests served, oldest overwritten first, and
// hands each new one to its followers.
type Ring struct {
	mu        sync.Mutex
	recs      []*Record
	next      int  // where the next record goes
	full      bool // recs has wrapped
	followers map[chan *Record]struct{}
}

// NewRing keeps the last size records (DefaultRingSize when size <= 0).
func NewRing(size int) *Ring {
	if size <= 0 {
		size = DefaultRingSize
	}
	return &Ring{recs: make([]*Record, size)}
}

func (r *Ring) add(rec *Record) {
	r.mu.Lock()
	r.recs[r.next] = rec
	r.next++
	if r.next == len(r.recs) {
		r.next, r.full = 0, true
	}
	for ch := range r.followers {
		select {
		case ch <- rec:
		default: // a slow follower misses records rather than slowing requests
		}
	}
	r.mu.Unlock()
}

// Records returns the records held, oldest first.
func (r *Ring) Records() []*Record {
	r.mu.Lock()
	defer r.mu.Unlock()
	if !r.full {
		return slices.Clone(r.recs[:r.next])
	}
	out := make([]*Record, 0, len(r.recs))
	out = append(out, r.recs[r.next:]...)
	return append(out, r.recs[:r.next]...)
}

// Follow returns the records held (oldest first) and a channel of those
// that follow, until stop is called.
func (r *Ring) Follow(buffer int) (held []*Record, next <-chan *Record, stop func()) {
	ch := make(chan *Record, buffer)
	held = r.Records()
	r.mu.Lock()
	if r.followers == nil {
		r.followers = map[chan *Record]struct{}{}
	}
	r.followers[ch] = struct{}{}
	r.mu.Unlock()
	var once sync.Once
	return held, ch, func() {
		once.Do(func() {
			r.mu.Lock()
			delete(r.followers, ch)
			r.mu.Unlock()
		})
	}
}

// Summary is the last window's traffic, for the dashboard.
type Summary struct {
	Window      time.Duration
	Requests    int
	Errors      int // responses with a code of 400 or more
	PerSecond   float64
	P99         time.Duration // of short requests (watches are left out)
	OpenWatches int64
	TopCallers  []Caller
}

// Caller is one caller's share of a window.
type Caller struct {
	Who      string
	Requests int
	Errors   int
}

// Summarize sums up the records that ended in the window before now;
// top callers (named by Who) are at most topN.
func (a *Auditor) Summarize(now time.Time, window time.Duration, topN int) Summary {
	s := Summary{Window: window, OpenWatches: a.OpenWatches()}
	since := now.Add(-window)
	recs := a.ring.Records()
	var latencies []time.Duration
	callers := map[string]*Caller{}
	for i := len(recs) - 1; i >= 0; i-- {
		rec := recs[i]
		end := rec.Received.Add(rec.Latency)
		if end.Before(since) {
			break // ended in order, more or less: older ones follow
		}
		if end.After(now) {
			continue
		}
		s.Requests++
		failed := rec.Code >= 400
		if failed {
			s.Errors++
		}
		if !rec.watch {
			latencies = append(latencies, rec.Latency)
		}
		userName := ""
		if rec.User != nil {
			userName = rec.User.Name
		}
		name := Who(userName, rec.UserAgent)
		c := callers[name]
		if c == nil {
			c = &Caller{Who: name}
			callers[name] = c
		}
		c.Requests++
		if failed {
			c.Errors++
		}
	}
	if window > 0 {
		s.PerSecond = float64(s.Requests) / window.Seconds()
	}
	if n := len(latencies); n > 0 {
		slices.Sort(latencies)
		s.P99 = latencies[(n*99-1)/100]
	}
	for _, c := range callers {
		s.TopCallers = append(s.TopCallers, *c)
	}
	sort.Slice(s.TopCallers, func(i, j int) bool {
		ci, cj := s.TopCallers[i], s.TopCallers[j]
		if ci.Requests != cj.Requests {
			return ci.Requests > cj.Requests
		}
		return ci.Who < cj.Who
	})
	if len(s.TopCallers) > topN {
		s.TopCallers = s.TopCallers[:topN]
	}
	return s
}

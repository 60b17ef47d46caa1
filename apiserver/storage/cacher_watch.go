// Watches served from the cache: the event ring, each watcher's queue and
// how its client takes events, one by one or batched.

package storage

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/watch"
)

// dispatchBudget is how long one event may wait, over all its watchers, for
// full buffers to drain: a consumer descheduled during a burst keeps its
// watch, while one that stays behind is still cut off.
const dispatchBudget = 100 * time.Millisecond

// deliverLocked queues ev for w. A full buffer waits out what is left of
// the event's budget, then w is terminated so a slow client never holds up
// the others for long (client-go re-watches).
func (c *Cacher) deliverLocked(w *cacheWatcher, ev watch.Event, budget *time.Duration) {
	for !w.offer(ev) {
		if *budget <= 0 {
			c.opts.Logger.Info("terminating slow watcher", "resource", c.cfg.Resource.String(), "buffer", w.limit)
			c.terminateLocked(w, nil)
			return
		}
		start := time.Now()
		timer := time.NewTimer(*budget)
		select {
		case <-w.took:
		case <-timer.C:
		}
		timer.Stop()
		*budget -= time.Since(start)
	}
}

// terminateLocked unregisters w and ends its channel after what was
// queued (plus last, if room).
func (c *Cacher) terminateLocked(w *cacheWatcher, last *watch.Event) {
	if _, ok := c.watchers[w]; !ok {
		return
	}
	delete(c.watchers, w)
	w.end(last)
}

// Watch implements Interface from the cache; one etcd watch serves all.
func (c *Cacher) Watch(ctx context.Context, key string, opts ListOptions) (watch.Interface, error) {
	rev, err := parseResourceVersion(opts.ResourceVersion)
	if err != nil {
		return nil, err
	}
	if !c.waitReady(ctx) {
		return c.store.Watch(ctx, key, opts)
	}
	sendInitial := rev == 0
	endBookmark := opts.SendInitialEvents != nil && *opts.SendInitialEvents
	if opts.SendInitialEvents != nil {
		sendInitial = *opts.SendInitialEvents
	}
	if opts.ResourceVersion == "" && sendInitial {
		// Consistent initial state; on timeout the cache's own state is
		// still a valid "latest" for a watch.
		_ = c.waitConsistent(ctx)
	} else if err := c.waitForRevision(ctx, rev); err != nil {
		return nil, err
	}
	pred := opts.Predicate
	if pred.GetAttrs == nil {
		pred.GetAttrs = c.cfg.GetAttrs
	}
	if opts.Recursive && !strings.HasSuffix(key, "/") {
		key += "/"
	}
	watchCtx, cancel := context.WithCancel(ctx)
	w := &cacheWatcher{
		cacher:    c,
		ctx:       watchCtx,
		cancel:    cancel,
		key:       key,
		recursive: opts.Recursive,
		pred:      pred,
		bookmarks: opts.ProgressNotify,
		took:      make(chan struct{}, 1),
		waiting:   make(chan struct{}, 1),
	}

	c.mu.Lock()
	if c.stopped {
		c.mu.Unlock()
		cancel()
		return nil, apierrors.NewServiceUnavailable(fmt.Sprintf("the %s cache is stopped", c.cfg.Resource))
	}
	var initial []watch.Event
	switch {
	case sendInitial:
		selected := c.selectLocked(strings.TrimSuffix(key, "/"), opts.Recursive, pred)
		initial = make([]watch.Event, 0, len(selected)+1)
		for _, cached := range selected {
			initial = append(initial, watch.Event{Type: watch.Added, Object: cached.obj})
		}
		if endBookmark {
			initial = append(initial, watch.Event{Type: watch.Bookmark, Object: c.store.bookmarkObject(c.revision, true)})
		}
	case rev > 0:
		if rev < c.ringFloor {
			floor := c.ringFloor
			c.mu.Unlock()
			cancel()
			return nil, tooOldResourceVersionError(rev, floor)
		}
		for i := 0; i < c.ringLen; i++ {
			ev := &c.ring[(c.ringHead+i)%len(c.ring)]
			if ev.rev <= rev {
				continue
			}
			if out, ok := w.convert(ev); ok {
				initial = append(initial, out)
			}
		}
	}
	// The initial events are queued as live ones are, and may be as many as
	// the watch's selection on top of its buffer.
	w.limit = c.opts.WatcherBufferSize + len(initial)
	w.queueInitial(initial)
	c.watchers[w] = struct{}{}
	c.mu.Unlock()
	context.AfterFunc(watchCtx, w.Stop)
	return w, nil
}

// initialRingSize is where each event ring starts: most resources see few
// events, and fifty full-size rings would be megabytes of idle memory.
const initialRingSize = 16

// growRingLocked doubles the full ring (up to EventRingSize), oldest
// event first.
func (c *Cacher) growRingLocked() {
	grown := make([]cacheEvent, min(2*len(c.ring), c.opts.EventRingSize))
	n := copy(grown, c.ring[c.ringHead:])
	copy(grown[n:], c.ring[:c.ringHead])
	c.ring, c.ringHead = grown, 0
}

// watcherChannelSize is how many events wait in a watcher's channel, for
// a client that reads ResultChan. Beyond it, up to WatcherBufferSize,
// events wait in a slice that a goroutine moves into the channel as it
// empties: a full channel per watch was 32 KB of pointers for the garbage
// collector to scan, most of the heap with a thousand watches.
const watcherChannelSize = 64

// Batched is a watch whose queued events its client can take all at once
// (the watch handler does: with a thousand watchers, a channel send and
// receive per event per watcher were ~16% of the server's CPU in a
// profile). A client uses either Take or ResultChan, not both.
type Batched interface {
	watch.Interface
	// Waiting gets a signal (it holds one) when an event is queued while
	// none are, and when the watch ends.
	Waiting() <-chan struct{}
	// Take appends every queued event to buf, oldest first; ended is
	// true when the watch has ended and no event follows these.
	Take(buf []watch.Event) (events []watch.Event, ended bool)
}

var _ Batched = (*cacheWatcher)(nil)

// How a watcher's client reads it: not yet decided (events queue in the
// slice), through ResultChan, or through Take.
type watcherMode uint8

const (
	undecided watcherMode = iota
	channelMode
	batchedMode
)

// cacheWatcher is one watch served from the cache.
type cacheWatcher struct {
	cacher    *Cacher
	ctx       context.Context
	cancel    context.CancelFunc
	key       string // prefix (ends in "/") when recursive
	recursive bool
	pred      SelectionPredicate
	bookmarks bool
	limit     int // events that may queue: in input and queue together
	// took gets a signal each time the client takes events (or the relay
	// moves one into input); waiting, when events are queued for Take.
	took    chan struct{}
	waiting chan struct{}

	mu   sync.Mutex
	mode watcherMode
	// input is the channel a ResultChan client reads (made on its first
	// call); queue is what waits: every event until the mode is decided
	// and with Take, what is behind a full input with ResultChan.
	// relaying is whether a goroutine is moving queue into input, ended
	// whether the watch has ended (input to be closed once queue is
	// empty).
	input    chan watch.Event
	queue    []watch.Event
	relaying bool
	ended    bool
	stopOnce sync.Once
}

// ResultChan implements watch.Interface. The first call moves what is
// queued into the channel (beyond its room, the relay goroutine does).
func (w *cacheWatcher) ResultChan() <-chan watch.Event {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.mode == channelMode {
		return w.input
	}
	w.mode = channelMode
	w.input = make(chan watch.Event, min(w.cacher.opts.WatcherBufferSize, watcherChannelSize))
	n := min(len(w.queue), cap(w.input))
	for _, ev := range w.queue[:n] {
		w.input <- ev
	}
	clear(w.queue[:n])
	w.queue = w.queue[n:]
	switch {
	case len(w.queue) > 0:
		w.relaying = true
		go w.relay()
	case w.ended:
		close(w.input)
	}
	return w.input
}

// Waiting implements Batched.
func (w *cacheWatcher) Waiting() <-chan struct{} { return w.waiting }

// Take implements Batched.
func (w *cacheWatcher) Take(buf []watch.Event) ([]watch.Event, bool) {
	w.mu.Lock()
	w.mode = batchedMode
	n := len(w.queue)
	buf = append(buf, w.queue...)
	clear(w.queue)
	w.queue = w.queue[:0]
	if cap(w.queue) > 4*watcherChannelSize {
		w.queue = nil // a burst's (or the initial events') array, not kept for good
	}
	ended := w.ended
	w.mu.Unlock()
	if n > 0 {
		signal(w.took)
	}
	return buf, ended
}

func signal(ch chan struct{}) {
	select {
	case ch <- struct{}{}:
	default:
	}
}

// Stop unregisters the watcher; its result channel is closed shortly after.
func (w *cacheWatcher) Stop() {
	w.stopOnce.Do(func() {
		w.cancel()
		w.cacher.mu.Lock()
		w.cacher.terminateLocked(w, nil)
		w.cacher.mu.Unlock()
	})
}

// offer queues ev, or returns false when the watcher's buffer is full.
func (w *cacheWatcher) offer(ev watch.Event) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.mode == channelMode && !w.relaying {
		select {
		case w.input <- ev:
			return true
		default:
		}
	}
	if w.queuedLocked() >= w.limit {
		return false
	}
	w.enqueueLocked(ev)
	return true
}

// queuedLocked is how many events count as queued: input's room is
// counted whole, as it holds events whenever the client is behind.
func (w *cacheWatcher) queuedLocked() int {
	return len(w.queue) + cap(w.input)
}

// enqueueLocked adds ev behind what is queued: with ResultChan, starting
// the relay; otherwise signalling waiting if the queue was empty.
func (w *cacheWatcher) enqueueLocked(ev watch.Event) {
	w.queue = append(w.queue, ev)
	switch {
	case w.mode == channelMode && !w.relaying:
		w.relaying = true
		go w.relay()
	case w.mode != channelMode && len(w.queue) == 1:
		signal(w.waiting)
	}
}

// offerBookmark queues a bookmark only if it would not wait: a watcher
// with events queued is busy and gets no bookmark, which must not pass
// them either (its revision is newer than theirs).
func (w *cacheWatcher) offerBookmark(ev watch.Event) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.ended {
		return
	}
	if w.mode == channelMode {
		if !w.relaying {
			select {
			case w.input <- ev:
			default:
			}
		}
		return
	}
	if len(w.queue) == 0 {
		w.enqueueLocked(ev)
	}
}

// queueInitial queues a new watcher's initial events (the slice itself,
// before its client has read anything).
func (w *cacheWatcher) queueInitial(initial []watch.Event) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.queue = initial
	if len(initial) > 0 {
		signal(w.waiting)
	}
}

// end ends the watch after the events queued and then last.
func (w *cacheWatcher) end(last *watch.Event) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.ended {
		return
	}
	w.ended = true
	if w.mode != channelMode {
		if last != nil {
			w.queue = append(w.queue, *last)
		}
		signal(w.waiting)
		return
	}
	if w.relaying {
		if last != nil {
			w.queue = append(w.queue, *last)
		}
		return // the relay closes input when done
	}
	if last != nil {
		select {
		case w.input <- *last:
		default:
		}
	}
	close(w.input)
}

// relay moves the queue into input, in order, as the client reads, and
// exits when it is empty (closing input if the watcher has ended). A
// client that goes away, or a cache that stops, drops what is left.
func (w *cacheWatcher) relay() {
	for {
		w.mu.Lock()
		if len(w.queue) == 0 || w.ctx.Err() != nil || w.cacher.ctx.Err() != nil {
			w.queue, w.relaying = nil, false
			if w.ended {
				close(w.input)
			}
			w.mu.Unlock()
			return
		}
		ev := w.queue[0] // counted as queued until it is in input
		w.mu.Unlock()
		select {
		case w.input <- ev:
		case <-w.ctx.Done():
			continue
		case <-w.cacher.ctx.Done():
			continue
		}
		w.mu.Lock()
		w.queue[0] = watch.Event{}
		w.queue = w.queue[1:]
		w.mu.Unlock()
		signal(w.took)
	}
}

// convert turns a cache event into what this watcher sees, with kube's
// selector transitions.
func (w *cacheWatcher) convert(ev *cacheEvent) (watch.Event, bool) {
	if w.recursive {
		if !strings.HasPrefix(ev.key, w.key) {
			return watch.Event{}, false
		}
	} else if ev.key != w.key {
		return watch.Event{}, false
	}
	curMatch := ev.cur != nil && matchesCached(w.pred, ev.cur)
	prevMatch := ev.prev != nil && matchesCached(w.pred, ev.prev)
	switch ev.typ {
	case watch.Added:
		return watch.Event{Type: watch.Added, Object: ev.cur.obj}, curMatch
	case watch.Deleted:
		return watch.Event{Type: watch.Deleted, Object: ev.deleted}, prevMatch
	}
	switch {
	case curMatch && prevMatch:
		return watch.Event{Type: watch.Modified, Object: ev.cur.obj}, true
	case curMatch:
		return watch.Event{Type: watch.Added, Object: ev.cur.obj}, true
	case prevMatch:
		return watch.Event{Type: watch.Deleted, Object: atRevision(ev.prev.obj, ev.rev)}, true
	}
	return watch.Event{}, false
}

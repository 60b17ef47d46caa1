package storage

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/devplane/devplane/apiserver/internal/keptstacks"
)

// A watch hub is one etcd watch on a whole key root ("/registry/") shared
// by every cache on that client: kube opens an etcd watch per resource,
// and each costs goroutines and buffers in the client whether or not the
// resource changes, which adds up with hundreds of CRDs. The hub hands
// each change to the cache whose prefix holds its key; a cache processes
// its changes in a goroutine that exists only while it has some.
type watchHub struct {
	client *clientv3.Client
	root   string
	key    hubKey
	logger *slog.Logger

	mu      sync.Mutex
	subs    map[string][]*hubSub // by prefix
	started bool                 // the watch's start revision is known
	refs    int
	stop    context.CancelFunc

	// rev is a revision every change up to which has been queued to its
	// subscriber: a subscriber with nothing queued is current to it.
	rev atomic.Int64
	// advanced is closed (and replaced) whenever rev moves.
	advanced atomic.Pointer[chan struct{}]
}

type hubKey struct {
	client *clientv3.Client
	root   string
}

var hubs struct {
	mu    sync.Mutex
	byKey map[hubKey]*watchHub
}

// hubItem is what a subscriber is handed, in revision order: a batch of
// its changes, or reset (the hub restarted: what was queued before may
// have gaps, so relist).
type hubItem struct {
	events []*clientv3.Event
	reset  bool
}

// hubSub is one subscriber: process runs, one call at a time, in a
// goroutine started when items arrive and ending when none are left.
type hubSub struct {
	hub     *watchHub
	prefix  string
	process func([]hubItem)

	mu      sync.Mutex
	queue   []hubItem
	running bool
	closed  bool
	idle    *sync.Cond // signalled when running becomes false

	// processed is a hub revision every change up to which this
	// subscriber has processed.
	processed atomic.Int64
}

// subscribe registers process for changes under prefix (which must be
// under the client's root, "/registry/..."), starting the hub if needed.
// The first item is a reset, queued once the hub knows the revision its
// watch starts from: the subscriber lists then, so every change after its
// list is delivered.
func subscribe(client *clientv3.Client, prefix string, logger *slog.Logger, process func([]hubItem)) *hubSub {
	root := hubRoot(prefix)
	key := hubKey{client, root}
	hubs.mu.Lock()
	h := hubs.byKey[key]
	if h == nil {
		h = &watchHub{client: client, root: root, key: key, logger: logger, subs: map[string][]*hubSub{}}
		ch := make(chan struct{})
		h.advanced.Store(&ch)
		if hubs.byKey == nil {
			hubs.byKey = map[hubKey]*watchHub{}
		}
		hubs.byKey[key] = h
	}
	h.refs++
	start := h.refs == 1
	if start {
		ctx, cancel := context.WithCancel(context.Background())
		h.stop = cancel
		go h.run(ctx)
	}
	hubs.mu.Unlock()

	s := &hubSub{hub: h, prefix: prefix, process: process}
	s.idle = sync.NewCond(&s.mu)
	h.mu.Lock()
	h.subs[prefix] = append(h.subs[prefix], s)
	if h.started {
		s.enqueue(hubItem{reset: true})
	}
	h.mu.Unlock()
	return s
}

// hubRoot is the first segment of a key prefix: "/registry/".
func hubRoot(prefix string) string {
	if i := strings.IndexByte(strings.TrimPrefix(prefix, "/"), '/'); i >= 0 {
		return prefix[:i+2]
	}
	return prefix
}

// unsubscribe stops deliveries and waits for a running process call to
// return; the last subscriber stops the hub's watch.
func (s *hubSub) unsubscribe() {
	h := s.hub
	h.mu.Lock()
	list := h.subs[s.prefix]
	for i, x := range list {
		if x == s {
			list = append(list[:i:i], list[i+1:]...)
			break
		}
	}
	if len(list) == 0 {
		delete(h.subs, s.prefix)
	} else {
		h.subs[s.prefix] = list
	}
	h.mu.Unlock()

	s.mu.Lock()
	s.closed = true
	s.queue = nil
	for s.running {
		s.idle.Wait()
	}
	s.mu.Unlock()

	hubs.mu.Lock()
	h.refs--
	if h.refs == 0 {
		h.stop()
		delete(hubs.byKey, h.key)
	}
	hubs.mu.Unlock()
}

// enqueue queues item and starts the subscriber's goroutine if none runs.
func (s *hubSub) enqueue(item hubItem) {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return
	}
	s.queue = append(s.queue, item)
	start := !s.running
	s.running = true
	s.mu.Unlock()
	if start {
		goDrain(s.drain)
	}
}

// drainers are a few goroutines kept between subscribers' drains. A new
// goroutine starts with a small stack, and decoding a batch grew it (a
// copy and a walk of every frame) on each drain: half of the caches' CPU
// under a write load. A drain that finds them all busy gets a goroutine of
// its own; an idle cache still costs none.
var drainers = keptstacks.New(4)

func goDrain(drain func()) {
	if !drainers.TryGo(drain) {
		go drain()
	}
}

func (s *hubSub) drain() {
	for {
		// Changes are queued before the hub's revision moves past them:
		// all up to rev are in this queue or were in an earlier one.
		rev := s.hub.rev.Load()
		s.mu.Lock()
		items := s.queue
		s.queue = nil
		if len(items) == 0 || s.closed {
			s.running = false
			s.idle.Broadcast()
			s.mu.Unlock()
			return
		}
		s.mu.Unlock()
		s.process(items)
		s.processed.Store(rev)
	}
}

// caughtUp reports whether the subscriber has processed every change up
// to rev.
func (s *hubSub) caughtUp(rev int64) bool {
	if s.processed.Load() >= rev {
		return true
	}
	at, idle := s.idleAt()
	return idle && at >= rev
}

// WaitForRevision returns once every watch cache and mirror fed by
// client's watch of root ("/registry/") has processed every change up to
// rev, so that reads from them see it. Without any, there is nothing to
// wait for.
func WaitForRevision(ctx context.Context, client *clientv3.Client, root string, rev int64) error {
	hubs.mu.Lock()
	h := hubs.byKey[hubKey{client, root}]
	hubs.mu.Unlock()
	if h == nil {
		return nil
	}
	// A quiet key space moves the hub's revision only on a progress
	// notification: ask for one when events do not bring it soon.
	nudge := time.NewTimer(2 * time.Millisecond)
	defer nudge.Stop()
	for h.rev.Load() < rev {
		select {
		case <-h.advancedChan():
		case <-nudge.C:
			_ = client.RequestProgress(ctx)
			nudge.Reset(50 * time.Millisecond)
		case <-ctx.Done():
			return fmt.Errorf("waiting for the watch caches to reach revision %d: %w", rev, ctx.Err())
		}
	}
	h.mu.Lock()
	var subs []*hubSub
	for _, list := range h.subs {
		subs = append(subs, list...)
	}
	h.mu.Unlock()
	pause := 50 * time.Microsecond
	for _, s := range subs {
		for !s.caughtUp(rev) {
			select {
			case <-ctx.Done():
				return fmt.Errorf("waiting for the cache of %s to reach revision %d: %w", s.prefix, rev, ctx.Err())
			case <-time.After(pause):
				pause = min(2*pause, time.Millisecond)
			}
		}
	}
	return nil
}

// idleAt reports whether the subscriber has processed every change up to
// the hub's revision, and that revision.
func (s *hubSub) idleAt() (int64, bool) {
	rev := s.hub.rev.Load() // before looking at the queue: see rev
	s.mu.Lock()
	defer s.mu.Unlock()
	return rev, !s.running && len(s.queue) == 0
}

// advancedChan is closed when the hub's revision next moves.
func (h *watchHub) advancedChan() <-chan struct{} { return *h.advanced.Load() }

func (h *watchHub) setRevision(rev int64) {
	if rev <= h.rev.Load() {
		return
	}
	h.rev.Store(rev)
	ch := make(chan struct{})
	old := h.advanced.Swap(&ch)
	close(*old)
}

// run keeps the hub's watch going: from the current revision, and again
// from the then-current one (every subscriber relisting) when it ends.
func (h *watchHub) run(ctx context.Context) {
	backoff := 50 * time.Millisecond
	for ctx.Err() == nil {
		resp, err := h.client.Get(ctx, h.root, clientv3.WithCountOnly())
		if err != nil {
			if ctx.Err() == nil {
				h.logger.Warn("watch hub cannot read the revision", "root", h.root, "error", err)
			}
			select {
			case <-ctx.Done():
				return
			case <-time.After(backoff):
			}
			backoff = min(2*backoff, 5*time.Second)
			continue
		}
		backoff = 50 * time.Millisecond
		rev := resp.Header.Revision
		// Every subscriber lists now, at rev or later (after a restart:
		// the changes since the last watch ended were missed).
		h.mu.Lock()
		h.started = true
		for _, list := range h.subs {
			for _, s := range list {
				s.enqueue(hubItem{reset: true})
			}
		}
		h.mu.Unlock()
		h.watchFrom(ctx, rev)
	}
}

// watchFrom dispatches changes after rev until the watch ends.
func (h *watchHub) watchFrom(ctx context.Context, rev int64) {
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	events := h.client.Watch(wctx, h.root, clientv3.WithPrefix(), clientv3.WithRev(rev+1), clientv3.WithProgressNotify())
	// The subscribers listed at rev or later (reset is their first item).
	h.setRevision(rev)
	for {
		var resp clientv3.WatchResponse
		select {
		case <-ctx.Done():
			return
		case r, ok := <-events:
			if !ok {
				return
			}
			resp = r
		}
		if resp.CompactRevision != 0 {
			h.logger.Info("watch hub compacted, caches relist", "root", h.root, "compactRevision", resp.CompactRevision)
			return
		}
		if err := resp.Err(); err != nil {
			h.logger.Warn("watch hub failed, caches relist", "root", h.root, "error", err)
			return
		}
		if resp.IsProgressNotify() {
			h.setRevision(resp.Header.Revision)
			continue
		}
		if len(resp.Events) == 0 {
			continue
		}
		h.dispatch(resp.Events)
		h.setRevision(resp.Events[len(resp.Events)-1].Kv.ModRevision)
	}
}

// dispatch queues each event to the subscribers whose prefix holds its
// key, one batch per subscriber.
func (h *watchHub) dispatch(events []*clientv3.Event) {
	batches := map[*hubSub][]*clientv3.Event{}
	var order []*hubSub
	h.mu.Lock()
	for _, ev := range events {
		key := string(ev.Kv.Key)
		for i := len(h.root); i < len(key); i++ {
			if key[i] != '/' {
				continue
			}
			for _, s := range h.subs[key[:i+1]] {
				if _, ok := batches[s]; !ok {
					order = append(order, s)
				}
				batches[s] = append(batches[s], ev)
			}
		}
	}
	h.mu.Unlock()
	for _, s := range order {
		s.enqueue(hubItem{events: batches[s]})
	}
}

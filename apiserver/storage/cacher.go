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
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
)

// CacherOptions tunes a Cacher; zero values take the defaults.
type CacherOptions struct {
	// EventRingSize is how many recent events are kept to resume watches
	// from a resourceVersion (default 1024).
	EventRingSize int
	// WatcherBufferSize is how many events may queue for one watcher before
	// it is terminated as too slow (default 1000).
	WatcherBufferSize int
	// BookmarkInterval is how often watchers that asked for bookmarks get
	// one (default 30s).
	BookmarkInterval time.Duration
	// FreshnessTimeout bounds the wait for the cache to reach a revision
	// (consistent and "not older than" reads, default 3s).
	FreshnessTimeout time.Duration
	// ReadyTimeout bounds how long a read waits for the initial list before
	// it is served by the Store instead (default 5s).
	ReadyTimeout time.Duration
	// JSONListWindow: each object's JSON (EncodedItems.WantJSON) is kept
	// while JSON lists of the resource come at least this often, and
	// dropped once none came for this long (default 1 minute).
	JSONListWindow time.Duration
	Logger         *slog.Logger
}

func (o *CacherOptions) setDefaults() {
	if o.EventRingSize <= 0 {
		o.EventRingSize = 1024
	}
	if o.WatcherBufferSize <= 0 {
		o.WatcherBufferSize = 1000
	}
	if o.BookmarkInterval <= 0 {
		o.BookmarkInterval = 30 * time.Second
	}
	if o.FreshnessTimeout <= 0 {
		o.FreshnessTimeout = 3 * time.Second
	}
	if o.ReadyTimeout <= 0 {
		o.ReadyTimeout = 5 * time.Second
	}
	if o.JSONListWindow <= 0 {
		o.JSONListWindow = time.Minute
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
}

// cacheEvent is one change applied to the cache.
type cacheEvent struct {
	typ     watch.EventType
	key     string
	rev     int64
	cur     *cachedObject  // nil for Deleted
	prev    *cachedObject  // nil for Added
	deleted runtime.Object // for Deleted: prev carrying the deletion revision
}

// Cacher implements Interface with reads and watches served from memory,
// kept current by the changes under the resource prefix from the client's
// watch hub (watchhub.go: one etcd watch for every cache). Writes go to
// the Store.
//
// NewCacher starts it: the initial list runs in the background, and reads or
// watches arriving before it completes wait for it up to
// CacherOptions.ReadyTimeout, then fall back to the Store.
//
// Objects handed out by GetList items and watch events are shared with the
// cache (shallow copies of immutable objects, like kube's cacher): callers
// must DeepCopy before mutating maps, slices or pointers in them. Get
// returns a deep copy.
type Cacher struct {
	store  *Store
	cfg    Config
	opts   CacherOptions
	client *clientv3.Client
	prefix string // ResourcePrefix + "/"

	ctx       context.Context
	cancel    context.CancelFunc
	sub       *hubSub
	ready     chan struct{} // closed after the initial list
	readyOnce sync.Once
	stopOnce  sync.Once

	etcdLists atomic.Int64
	// jsonListed is when (UnixNano) the last JSON list asked for its
	// items' JSON; jsonKept: some object keeps its JSON, a drop is due.
	jsonListed atomic.Int64
	jsonKept   atomic.Bool
	backoff    time.Duration // before retrying a failed list; only the hub's goroutine for c
	fieldNames fieldNames

	mu         sync.RWMutex
	objects    map[string]*cachedObject
	keys       []string // sorted keys of objects
	revision   int64    // the cache reflects etcd up to this revision
	revChanged chan struct{}
	ring       []cacheEvent
	ringHead   int   // index of the oldest event
	ringLen    int   // events in the ring
	ringFloor  int64 // every event after this revision is in the ring
	watchers   map[*cacheWatcher]struct{}
	observers  map[*Observer]struct{}
	synced     bool // the last list succeeded: changes apply on top of it
	stopped    bool
}

var _ Interface = (*Cacher)(nil)

// NewCacher starts a cache of store's resource; see Cacher for start-up
// semantics. Stop releases it.
func NewCacher(store *Store, cfg Config, opts CacherOptions) (*Cacher, error) {
	if store == nil || cfg.NewFunc == nil || cfg.NewListFunc == nil || cfg.ResourcePrefix == "" {
		return nil, fmt.Errorf("cacher for %s: store, NewFunc, NewListFunc and ResourcePrefix are required", cfg.Resource)
	}
	opts.setDefaults()
	ctx, cancel := context.WithCancel(context.Background())
	c := &Cacher{
		store:      store,
		cfg:        cfg,
		opts:       opts,
		client:     store.client,
		prefix:     strings.TrimSuffix(cfg.ResourcePrefix, "/") + "/",
		ctx:        ctx,
		cancel:     cancel,
		ready:      make(chan struct{}),
		objects:    map[string]*cachedObject{},
		revChanged: make(chan struct{}),
		ring:       make([]cacheEvent, min(initialRingSize, opts.EventRingSize)),
		watchers:   map[*cacheWatcher]struct{}{},
		observers:  map[*Observer]struct{}{},
	}
	c.sub = subscribe(c.client, c.prefix, opts.Logger, c.process)
	startBookmarks(c)
	return c, nil
}

// Stop ends the etcd watch and closes every watcher's result channel.
func (c *Cacher) Stop() {
	c.stopOnce.Do(func() {
		stopBookmarks(c)
		c.cancel()
		c.sub.unsubscribe()
		c.mu.Lock()
		c.stopped = true
		for w := range c.watchers {
			c.terminateLocked(w, nil)
		}
		c.mu.Unlock()
	})
}

// EtcdListCount is how many times the Cacher has listed etcd (once, plus
// once per relist after compaction or error); its watchers share them.
func (c *Cacher) EtcdListCount() int64 { return c.etcdLists.Load() }

// WatcherCount is the number of open watches served by the Cacher.
func (c *Cacher) WatcherCount() int {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return len(c.watchers)
}

// Revision is the etcd revision the cache is current to.
func (c *Cacher) Revision() int64 {
	c.catchUp()
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.revision
}

// Create implements Interface (Store).
func (c *Cacher) Create(ctx context.Context, key string, obj, out runtime.Object, ttl int64) error {
	return c.store.Create(ctx, key, obj, out, ttl)
}

// GuaranteedUpdate implements Interface (Store).
func (c *Cacher) GuaranteedUpdate(ctx context.Context, key string, out runtime.Object, ignoreNotFound bool,
	preconditions *Preconditions, tryUpdate UpdateFunc) error {
	like, cached := c.cachedState(key)
	return c.store.guaranteedUpdate(ctx, key, out, ignoreNotFound, preconditions, tryUpdate, like, cached)
}

// cachedState is the object cached at key as like, for Config.Decode (nil
// without that decoder), and as the state an update or delete tries before
// reading etcd: a copy the caller owns. The state is nil when nothing is
// cached, or when cached copies share read-only parts (Config.Copy) that
// an update could change.
func (c *Cacher) cachedState(key string) (like runtime.Object, state *objectState) {
	c.mu.RLock()
	cached := c.objects[key]
	c.mu.RUnlock()
	if cached == nil {
		return nil, nil
	}
	if c.cfg.Decode != nil {
		like = cached.obj
	}
	if c.cfg.Copy != nil {
		return like, nil
	}
	acc, err := meta.Accessor(cached.obj)
	if err != nil {
		return like, nil
	}
	rev, err := parseResourceVersion(acc.GetResourceVersion())
	if err != nil || rev == 0 {
		return like, nil
	}
	state, err = c.store.stateOf(cached.obj.DeepCopyObject(), rev, cached.lease)
	if err != nil {
		return like, nil
	}
	return like, state
}

// likelyPrevious is the cached object at key, for a decoder that can reuse
// what did not change since (Config.Decode); nil when there is no such
// decoder or nothing cached.
func (c *Cacher) likelyPrevious(key string) runtime.Object {
	if c.cfg.Decode == nil {
		return nil
	}
	c.mu.RLock()
	defer c.mu.RUnlock()
	if cached := c.objects[key]; cached != nil {
		return cached.obj
	}
	return nil
}

// Delete implements Interface (Store).
func (c *Cacher) Delete(ctx context.Context, key string, out runtime.Object, preconditions *Preconditions,
	validateDeletion func(ctx context.Context, obj runtime.Object) error) error {
	_, cached := c.cachedState(key)
	return c.store.delete(ctx, key, out, preconditions, validateDeletion, cached)
}

// CurrentRevision implements Interface (Store).
func (c *Cacher) CurrentRevision(ctx context.Context) (int64, error) {
	return c.store.CurrentRevision(ctx)
}

// isReady reports whether the initial list is done.
func (c *Cacher) isReady() bool {
	select {
	case <-c.ready:
		return true
	default:
		return false
	}
}

// waitReady waits (bounded) for the initial list; false means serve from
// the Store.
func (c *Cacher) waitReady(ctx context.Context) bool {
	if c.isReady() {
		return true
	}
	timer := time.NewTimer(c.opts.ReadyTimeout)
	defer timer.Stop()
	select {
	case <-c.ready:
		return true
	case <-timer.C:
	case <-ctx.Done():
	case <-c.ctx.Done():
	}
	return false
}

// waitConsistent waits until the cache has every change up to etcd's
// current revision.
func (c *Cacher) waitConsistent(ctx context.Context) error {
	rev, err := c.store.CurrentRevision(ctx)
	if err != nil {
		return err
	}
	return c.waitForRevision(ctx, rev)
}

// waitForRevision waits until the cache reaches rev, asking etcd for
// progress notifications in case the resource is quiet; after
// FreshnessTimeout it gives kube's "too large resource version" error.
func (c *Cacher) waitForRevision(ctx context.Context, rev int64) error {
	advanced := c.sub.hub.advancedChan()
	c.catchUp()
	c.mu.RLock()
	current, changed := c.revision, c.revChanged
	c.mu.RUnlock()
	if current >= rev {
		return nil
	}
	deadline := time.NewTimer(c.opts.FreshnessTimeout)
	defer deadline.Stop()
	// Events for a busy resource arrive within a millisecond; only nudge
	// etcd for a progress notification when nothing came quickly.
	nudge := time.NewTimer(2 * time.Millisecond)
	defer nudge.Stop()
	for {
		select {
		case <-changed:
		case <-advanced:
		case <-nudge.C:
			_ = c.client.RequestProgress(c.ctx)
			nudge.Reset(100 * time.Millisecond)
		case <-deadline.C:
			return tooLargeResourceVersionError(rev, current)
		case <-ctx.Done():
			return apierrors.NewTimeoutError(fmt.Sprintf("waiting for resource version %d: %v", rev, ctx.Err()), 1)
		case <-c.ctx.Done():
			return apierrors.NewServiceUnavailable("cache stopped")
		}
		advanced = c.sub.hub.advancedChan()
		c.catchUp()
		c.mu.RLock()
		current, changed = c.revision, c.revChanged
		c.mu.RUnlock()
		if current >= rev {
			return nil
		}
	}
}

package storage

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"maps"
	"reflect"
	goruntime "runtime"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"go.etcd.io/etcd/api/v3/mvccpb"
	clientv3 "go.etcd.io/etcd/client/v3"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/conversion"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
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

// cachedObject is an object in the cache with its selector attributes
// computed once. obj is shared by every reader and never modified.
type cachedObject struct {
	obj    runtime.Object
	labels labels.Set
	fields fields.Set
	// lease is the etcd lease obj was stored with (0: none), which an
	// update keeps.
	lease int64
	// proto is obj's protobuf message, made by the first protobuf list that
	// includes it (EncodedItems) and reused by every later one.
	proto atomic.Pointer[[]byte]
	// json is obj's JSON as encoding/json writes it, kept while JSON lists
	// of the resource recur (Cacher.jsonItems).
	json atomic.Pointer[[]byte]
}

// protoMarshaler is implemented by k8s.io/api's generated types.
type protoMarshaler interface{ Marshal() ([]byte, error) }

// protobuf returns the object's protobuf message (no envelope), made once
// per cached object; nil for objects without one (custom resources).
func (c *cachedObject) protobuf() []byte {
	if p := c.proto.Load(); p != nil {
		return *p
	}
	m, ok := c.obj.(protoMarshaler)
	if !ok {
		return nil
	}
	b, err := m.Marshal()
	if err != nil {
		return nil
	}
	c.proto.Store(&b)
	return b
}

// jsonEncoding returns the object's JSON (encoding/json's, as the JSON
// serializer writes it inside a list: without apiVersion and kind, as kube
// writes a built-in kind's list items), made once per cached object until
// dropJSON; nil for objects that are not built-in kinds.
func (c *cachedObject) jsonEncoding() []byte {
	if p := c.json.Load(); p != nil {
		return *p
	}
	if _, builtin := c.obj.(protoMarshaler); !builtin {
		return nil
	}
	b, err := json.Marshal(withoutKind(c.obj))
	if err != nil {
		return nil
	}
	c.json.Store(&b)
	return b
}

// withoutKind is obj, or a shallow copy of it with an empty TypeMeta when
// it has one (obj is shared: it is never written to).
func withoutKind(obj runtime.Object) runtime.Object {
	if obj.GetObjectKind().GroupVersionKind().Empty() {
		return obj
	}
	v := reflect.ValueOf(obj)
	if v.Kind() != reflect.Pointer || v.IsNil() || v.Elem().Kind() != reflect.Struct {
		return obj
	}
	cp := reflect.New(v.Elem().Type())
	cp.Elem().Set(v.Elem())
	out, ok := cp.Interface().(runtime.Object)
	if !ok {
		return obj
	}
	out.GetObjectKind().SetGroupVersionKind(schema.GroupVersionKind{})
	return out
}

// EncodedItems receives, from a list the watch cache serves, each item's
// protobuf message in list order: a protobuf list response copies them
// instead of marshalling every item again. Filled only when the cache
// served the list (Valid); entries are nil for items without one.
type EncodedItems struct {
	Valid bool
	Proto [][]byte
	// WantJSON asks for each item's JSON instead of its protobuf message:
	// for built-in kinds the cache's (only while JSON lists of the
	// resource recur, see CacherOptions.JSONListWindow), for custom
	// resources each served item's. JSON is nil when not available.
	WantJSON bool
	JSON     [][]byte
}

type encodedItemsKey struct{}

// EncodedItemsFrom is the slot WithEncodedItems put into ctx.
func EncodedItemsFrom(ctx context.Context) (*EncodedItems, bool) {
	items, ok := ctx.Value(encodedItemsKey{}).(*EncodedItems)
	return items, ok && items != nil
}

// WithEncodedItems asks the list made with ctx to fill items (nil: no
// list under ctx fills anything).
func WithEncodedItems(ctx context.Context, items *EncodedItems) context.Context {
	return context.WithValue(ctx, encodedItemsKey{}, items)
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

// Get implements Interface. A consistent Get (ResourceVersion "") goes to
// etcd: one range read costs no more than learning the current revision.
func (c *Cacher) Get(ctx context.Context, key string, opts GetOptions, out runtime.Object) error {
	if opts.ResourceVersion == "" {
		return c.store.get(ctx, key, opts, out, c.likelyPrevious(key))
	}
	minRev, err := parseResourceVersion(opts.ResourceVersion)
	if err != nil {
		return err
	}
	if !c.waitReady(ctx) {
		return c.store.Get(ctx, key, opts, out)
	}
	if err := c.waitForRevision(ctx, minRev); err != nil {
		return err
	}
	c.mu.RLock()
	cached := c.objects[key]
	c.mu.RUnlock()
	if cached == nil {
		if opts.IgnoreNotFound {
			return runtime.SetZeroValue(out)
		}
		return apierrors.NewNotFound(c.cfg.Resource, nameFromKey(key))
	}
	outValue, err := conversion.EnforcePtr(out)
	if err != nil {
		return apierrors.NewInternalError(err)
	}
	copied := reflect.ValueOf(c.cfg.copyObject(cached.obj)).Elem()
	if copied.Type() != outValue.Type() {
		return apierrors.NewInternalError(fmt.Errorf("get %s: cannot decode %v into %v", key, copied.Type(), outValue.Type()))
	}
	outValue.Set(copied)
	return nil
}

// GetList implements Interface. Paginated and exact-revision lists go to
// the Store; the rest are served from memory, consistent ones after the
// cache has caught up with etcd's current revision.
func (c *Cacher) GetList(ctx context.Context, key string, opts ListOptions, listObj runtime.Object) error {
	pred := opts.Predicate
	if pred.Limit > 0 || pred.Continue != "" || opts.ResourceVersionMatch == metav1.ResourceVersionMatchExact {
		// Pages are read from etcd at the list's revision, bounded by
		// this cache's keys.
		if c.isReady() {
			opts.keys = c
		}
		return c.store.GetList(ctx, key, opts, listObj)
	}
	minRev, err := parseResourceVersion(opts.ResourceVersion)
	if err != nil {
		return err
	}
	if !c.waitReady(ctx) {
		return c.store.GetList(ctx, key, opts, listObj)
	}
	if opts.ResourceVersion == "" {
		if err := c.waitConsistent(ctx); err != nil {
			return c.store.GetList(ctx, key, opts, listObj)
		}
	} else if err := c.waitForRevision(ctx, minRev); err != nil {
		return err
	}
	setter, err := newItemsSetter(listObj)
	if err != nil {
		return err
	}
	listAcc, err := meta.ListAccessor(listObj)
	if err != nil {
		return apierrors.NewInternalError(err)
	}
	if pred.GetAttrs == nil {
		pred.GetAttrs = c.cfg.GetAttrs
	}
	c.mu.RLock()
	selected := c.selectLocked(key, opts.Recursive, pred)
	listRev := c.revision
	c.mu.RUnlock()

	if enc, ok := ctx.Value(encodedItemsKey{}).(*EncodedItems); ok && enc != nil {
		if enc.WantJSON {
			enc.JSON = c.jsonItems(selected)
		} else {
			enc.Proto = make([][]byte, len(selected))
			for i, cached := range selected {
				enc.Proto[i] = cached.protobuf()
			}
		}
		enc.Valid = true
	}
	items := reflect.MakeSlice(setter.items.Type(), len(selected), len(selected))
	for i, cached := range selected {
		value := reflect.ValueOf(cached.obj)
		if !setter.elemPtr {
			value = value.Elem() // shallow copy of the immutable cached struct
		}
		items.Index(i).Set(value)
	}
	setter.items.Set(items)
	listAcc.SetResourceVersion(strconv.FormatInt(listRev, 10))
	listAcc.SetContinue("")
	listAcc.SetRemainingItemCount(nil)
	return nil
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

// pageEnd implements keyIndex.
func (c *Cacher) pageEnd(start, end string, n int64) string {
	c.mu.RLock()
	defer c.mu.RUnlock()
	i := sort.SearchStrings(c.keys, start) + int(n)
	if i >= len(c.keys) || c.keys[i] >= end {
		return ""
	}
	return c.keys[i]
}

// keysIn implements keyIndex: the cache's count, less the keys its ring
// shows created since rev, plus those deleted since.
func (c *Cacher) keysIn(ctx context.Context, rev int64, start, end string) int64 {
	if c.waitForRevision(ctx, rev) != nil {
		return -1
	}
	c.mu.RLock()
	defer c.mu.RUnlock()
	if rev < c.ringFloor {
		return -1 // changes since rev are no longer all in the ring
	}
	n := int64(sort.SearchStrings(c.keys, end) - sort.SearchStrings(c.keys, start))
	for i := 0; i < c.ringLen; i++ {
		ev := &c.ring[(c.ringHead+i)%len(c.ring)]
		if ev.rev <= rev || ev.key < start || ev.key >= end {
			continue
		}
		switch ev.typ {
		case watch.Added:
			n--
		case watch.Deleted:
			n++
		}
	}
	return n
}

// jsonItems returns the JSON of each of selected, or nil when the JSON
// lists of this resource do not recur: most come once, from an informer
// starting, and keeping every object's JSON for them would only cost
// memory. A JSON list within JSONListWindow of the previous one keeps the
// JSON of the objects it lists, until no JSON list came for that long.
func (c *Cacher) jsonItems(selected []*cachedObject) [][]byte {
	if len(selected) == 0 {
		return nil
	}
	if _, builtin := selected[0].obj.(protoMarshaler); !builtin {
		return nil
	}
	now := time.Now().UnixNano()
	if last := c.jsonListed.Swap(now); last == 0 || now-last >= int64(c.opts.JSONListWindow) {
		return nil
	}
	if c.jsonKept.CompareAndSwap(false, true) {
		time.AfterFunc(c.opts.JSONListWindow, c.dropJSONWhenQuiet)
	}
	items := make([][]byte, len(selected))
	for i, cached := range selected {
		if items[i] = cached.jsonEncoding(); items[i] == nil {
			return nil
		}
	}
	return items
}

// dropJSONWhenQuiet drops every object's JSON once no JSON list came for
// JSONListWindow, or checks again when that will be.
func (c *Cacher) dropJSONWhenQuiet() {
	quiet := time.Duration(time.Now().UnixNano() - c.jsonListed.Load())
	if quiet < c.opts.JSONListWindow && c.ctx.Err() == nil {
		time.AfterFunc(c.opts.JSONListWindow-quiet, c.dropJSONWhenQuiet)
		return
	}
	// A list keeping JSON from now on arms the next drop.
	c.jsonKept.Store(false)
	c.mu.RLock()
	defer c.mu.RUnlock()
	for _, cached := range c.objects {
		cached.json.Store(nil)
	}
	for i := range c.ringLen {
		ev := &c.ring[(c.ringHead+i)%len(c.ring)]
		for _, cached := range []*cachedObject{ev.cur, ev.prev} {
			if cached != nil {
				cached.json.Store(nil)
			}
		}
	}
}

// KeptJSON is how many cached objects keep their JSON for recurring JSON
// lists, and its size in bytes.
func (c *Cacher) KeptJSON() (objects, size int) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	for _, cached := range c.objects {
		if p := cached.json.Load(); p != nil {
			objects++
			size += len(*p)
		}
	}
	return objects, size
}

// selectLocked returns the cached objects under key (in key order) that
// pred selects.
func (c *Cacher) selectLocked(key string, recursive bool, pred SelectionPredicate) []*cachedObject {
	if !recursive {
		if cached := c.objects[key]; cached != nil && matchesCached(pred, cached) {
			return []*cachedObject{cached}
		}
		return nil
	}
	if !strings.HasSuffix(key, "/") {
		key += "/"
	}
	start := sort.SearchStrings(c.keys, key)
	end := start
	for end < len(c.keys) && strings.HasPrefix(c.keys[end], key) {
		end++
	}
	selected := make([]*cachedObject, 0, end-start)
	for _, k := range c.keys[start:end] {
		if cached := c.objects[k]; matchesCached(pred, cached) {
			selected = append(selected, cached)
		}
	}
	return selected
}

func matchesCached(pred SelectionPredicate, cached *cachedObject) bool {
	if pred.Empty() {
		return true
	}
	if cached.labels == nil && cached.fields == nil {
		ok, err := pred.Matches(cached.obj)
		return err == nil && ok
	}
	if pred.Label != nil && !pred.Label.Matches(cached.labels) {
		return false
	}
	return pred.Field == nil || pred.Field.Matches(cached.fields)
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

// catchUp moves the cache's revision to the hub's when every change up to
// it has been applied: a quiet resource is as current as the hub.
func (c *Cacher) catchUp() {
	rev, idle := c.sub.idleAt()
	if !idle {
		return
	}
	c.mu.RLock()
	behind := c.synced && rev > c.revision
	c.mu.RUnlock()
	if behind {
		c.mu.Lock()
		if c.synced {
			c.setRevisionLocked(rev)
		}
		c.mu.Unlock()
	}
}

// process applies what the hub handed over, in order: a reset relists
// (what was queued before it is covered by the list), changes apply on
// top of the last list. A failed list is retried after a backoff; changes
// until then are dropped, the next list has them.
func (c *Cacher) process(items []hubItem) {
	for i := len(items) - 1; i >= 0; i-- {
		if !items[i].reset {
			continue
		}
		items = items[i+1:]
		if _, err := c.relist(); err != nil {
			c.mu.Lock()
			c.synced = false
			c.mu.Unlock()
			if c.ctx.Err() != nil {
				return
			}
			c.opts.Logger.Warn("cacher list failed", "resource", c.cfg.Resource.String(), "error", err)
			c.backoff = min(max(2*c.backoff, 50*time.Millisecond), 5*time.Second)
			time.AfterFunc(c.backoff, func() { c.sub.enqueue(hubItem{reset: true}) })
			return
		}
		c.backoff = 0
		break
	}
	c.mu.RLock()
	synced := c.synced
	c.mu.RUnlock()
	if !synced {
		return
	}
	for _, item := range items {
		if !c.apply(item.events) {
			c.sub.enqueue(hubItem{reset: true})
			return
		}
	}
}

// relist replaces the cache with a list of etcd at one revision. Watchers
// that may have missed events get a 410 and are closed; their clients
// re-list.
func (c *Cacher) relist() (int64, error) {
	objects := map[string]*cachedObject{}
	var keys []string
	var rev int64
	start, end := c.prefix, clientv3.GetPrefixRangeEnd(c.prefix)
	for {
		opts := []clientv3.OpOption{clientv3.WithRange(end), clientv3.WithLimit(maxEtcdPage)}
		if rev > 0 {
			opts = append(opts, clientv3.WithRev(rev))
		}
		resp, err := c.client.Get(c.ctx, start, opts...)
		if err != nil {
			return 0, err
		}
		if rev == 0 {
			rev = resp.Header.Revision
		}
		decoded, err := c.decodeAll(resp.Kvs)
		if err != nil {
			return 0, err
		}
		for i, kv := range resp.Kvs {
			objects[string(kv.Key)] = decoded[i]
			keys = append(keys, string(kv.Key))
		}
		if !resp.More || len(resp.Kvs) == 0 {
			break
		}
		start = string(resp.Kvs[len(resp.Kvs)-1].Key) + "\x00"
	}
	c.etcdLists.Add(1)
	c.mu.Lock()
	c.synced = true
	c.objects, c.keys = objects, keys
	c.ringHead, c.ringLen, c.ringFloor = 0, 0, rev
	expired := &apierrors.NewResourceExpired(fmt.Sprintf("too old resource version: the %s cache was relisted at revision %d", c.cfg.Resource, rev)).ErrStatus
	for w := range c.watchers {
		c.terminateLocked(w, &watch.Event{Type: watch.Error, Object: expired})
	}
	c.setRevisionLocked(rev)
	if len(c.observers) > 0 {
		all := c.allObjectsLocked()
		for o := range c.observers {
			o.Replace(all)
		}
	}
	c.mu.Unlock()
	c.readyOnce.Do(func() { close(c.ready) })
	return rev, nil
}

// decodeAll decodes a page of a list on every processor: a restart with
// hundreds of large CRDs or 100,000 objects waits for these lists.
func (c *Cacher) decodeAll(kvs []*mvccpb.KeyValue) ([]*cachedObject, error) {
	out := make([]*cachedObject, len(kvs))
	workers := min(goruntime.GOMAXPROCS(0), len(kvs)/64+1)
	var next atomic.Int64
	var wg sync.WaitGroup
	errs := make([]error, workers)
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := int(next.Add(1) - 1); i < len(kvs); i = int(next.Add(1) - 1) {
				if out[i], errs[w] = c.decode(kvs[i].Value, kvs[i].ModRevision, kvs[i].Lease); errs[w] != nil {
					return
				}
			}
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	return out, nil
}

func (c *Cacher) decode(data []byte, rev, lease int64) (*cachedObject, error) {
	return c.decodeAfter(nil, data, rev, lease)
}

// decodeAfter decodes a new revision of prev (nil: of nothing cached):
// what it shares with prev needs no compacting.
func (c *Cacher) decodeAfter(prev *cachedObject, data []byte, rev, lease int64) (*cachedObject, error) {
	obj := c.cfg.NewFunc()
	var like runtime.Object
	if prev != nil {
		like = prev.obj
	}
	if err := c.store.decodeIntoZero(data, rev, like, obj); err != nil {
		return nil, err
	}
	shared := prev != nil && c.cfg.ShareUnchanged != nil && c.cfg.ShareUnchanged(prev.obj, obj)
	if c.cfg.Compact != nil && !shared {
		c.cfg.Compact(obj)
	}
	cached := &cachedObject{obj: obj, lease: lease}
	if c.cfg.GetAttrs != nil {
		var err error
		if cached.labels, cached.fields, err = c.cfg.GetAttrs(obj); err != nil {
			return nil, err
		}
		if cached.labels == nil {
			cached.labels = labels.Set{}
		}
	}
	return cached, nil
}

// apply applies changes newer than the cache; false when one cannot be
// decoded (the cache relists).
func (c *Cacher) apply(events []*clientv3.Event) bool {
	c.mu.RLock()
	from := c.revision
	c.mu.RUnlock()
	// Decode outside the lock; readers keep going meanwhile.
	decoded := make([]*cachedObject, len(events))
	for i, ev := range events {
		if ev.Type != clientv3.EventTypePut || ev.Kv.ModRevision <= from {
			continue
		}
		// Only this goroutine changes c.objects: what is there now is what
		// the event will replace, unless an earlier event of this batch
		// replaces it first (then it only shares less).
		c.mu.RLock()
		prev := c.objects[string(ev.Kv.Key)]
		c.mu.RUnlock()
		cached, err := c.decodeAfter(prev, ev.Kv.Value, ev.Kv.ModRevision, ev.Kv.Lease)
		if err != nil {
			c.opts.Logger.Error("cacher cannot decode object, relisting", "key", string(ev.Kv.Key), "error", err)
			return false
		}
		decoded[i] = cached
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for i, ev := range events {
		if ev.Kv.ModRevision > from {
			c.applyLocked(string(ev.Kv.Key), ev.Kv.ModRevision, decoded[i])
		}
	}
	c.setRevisionLocked(events[len(events)-1].Kv.ModRevision)
	return true
}

// applyLocked applies one change (cur nil: deletion), records it in the
// ring and hands it to the watchers.
func (c *Cacher) applyLocked(key string, rev int64, cur *cachedObject) {
	prev := c.objects[key]
	ev := cacheEvent{key: key, rev: rev, cur: cur, prev: prev}
	switch {
	case cur != nil && prev == nil:
		ev.typ = watch.Added
		c.objects[key] = cur
		i := sort.SearchStrings(c.keys, key)
		c.keys = append(c.keys, "")
		copy(c.keys[i+1:], c.keys[i:])
		c.keys[i] = key
	case cur != nil:
		ev.typ = watch.Modified
		if c.cfg.ShareUnchanged != nil {
			_ = c.cfg.ShareUnchanged(prev.obj, cur.obj) // again, in case prev changed since the decode
		}
		c.objects[key] = cur
	case prev != nil:
		ev.typ = watch.Deleted
		delete(c.objects, key)
		if i := sort.SearchStrings(c.keys, key); i < len(c.keys) && c.keys[i] == key {
			c.keys = append(c.keys[:i], c.keys[i+1:]...)
		}
		ev.deleted = atRevision(prev.obj, rev)
	default:
		return // deletion of something never seen
	}
	if c.ringLen == len(c.ring) && len(c.ring) < c.opts.EventRingSize {
		c.growRingLocked()
	}
	if c.ringLen == len(c.ring) {
		c.ringFloor = c.ring[c.ringHead].rev
		c.ring[c.ringHead] = ev
		c.ringHead = (c.ringHead + 1) % len(c.ring)
	} else {
		c.ring[(c.ringHead+c.ringLen)%len(c.ring)] = ev
		c.ringLen++
	}
	for o := range c.observers {
		switch ev.typ {
		case watch.Deleted:
			o.Change(watch.Event{Type: watch.Deleted, Object: ev.deleted})
		default:
			o.Change(watch.Event{Type: ev.typ, Object: cur.obj})
		}
	}
	budget := dispatchBudget
	for w := range c.watchers {
		if out, ok := w.convert(&ev); ok {
			c.deliverLocked(w, out, &budget)
		}
	}
}

// dispatchBudget is how long one event may wait, over all its watchers, for
// full buffers to drain: a consumer descheduled during a burst keeps its
// watch, while one that stays behind is still cut off.
const dispatchBudget = 100 * time.Millisecond

func (c *Cacher) setRevisionLocked(rev int64) {
	if rev <= c.revision {
		return
	}
	c.revision = rev
	close(c.revChanged)
	c.revChanged = make(chan struct{})
}

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

// sendBookmarks periodically gives bookmark-enabled watchers the cache
// revision, so they can resume from it even if their selector is quiet.
// sendBookmarks gives every watcher that asked for bookmarks one at the
// cache's revision.
func (c *Cacher) sendBookmarks() {
	c.catchUp()
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.stopped || len(c.watchers) == 0 {
		return
	}
	bookmark := watch.Event{Type: watch.Bookmark, Object: c.store.bookmarkObject(c.revision, false)}
	for w := range c.watchers {
		if w.bookmarks {
			w.offerBookmark(bookmark)
		}
	}
}

// bookmarkTickers send bookmarks for every cache: one goroutine per
// interval in use rather than one per cache (a cache per CRD adds up).
var bookmarkTickers struct {
	mu     sync.Mutex
	byTick map[time.Duration]*bookmarkTicker
}

type bookmarkTicker struct {
	cachers map[*Cacher]struct{}
	stop    chan struct{}
}

func startBookmarks(c *Cacher) {
	t := &bookmarkTickers
	t.mu.Lock()
	defer t.mu.Unlock()
	every := c.opts.BookmarkInterval
	bt := t.byTick[every]
	if bt == nil {
		if t.byTick == nil {
			t.byTick = map[time.Duration]*bookmarkTicker{}
		}
		bt = &bookmarkTicker{cachers: map[*Cacher]struct{}{}, stop: make(chan struct{})}
		t.byTick[every] = bt
		go bt.run(every)
	}
	bt.cachers[c] = struct{}{}
}

func stopBookmarks(c *Cacher) {
	t := &bookmarkTickers
	t.mu.Lock()
	defer t.mu.Unlock()
	every := c.opts.BookmarkInterval
	bt := t.byTick[every]
	if bt == nil {
		return
	}
	delete(bt.cachers, c)
	if len(bt.cachers) == 0 {
		close(bt.stop)
		delete(t.byTick, every)
	}
}

func (bt *bookmarkTicker) run(every time.Duration) {
	ticker := time.NewTicker(every)
	defer ticker.Stop()
	for {
		select {
		case <-bt.stop:
			return
		case <-ticker.C:
		}
		bookmarkTickers.mu.Lock()
		cachers := make([]*Cacher, 0, len(bt.cachers))
		for c := range bt.cachers {
			cachers = append(cachers, c)
		}
		bookmarkTickers.mu.Unlock()
		for _, c := range cachers {
			c.sendBookmarks()
		}
	}
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

// Observer sees a cache's objects in process, without a watch (a watch
// costs a goroutine and a buffer per resource; the garbage collector
// follows every resource). Replace gets every cached object, in key order,
// when the observer is added (once the cache has listed) and after each
// relist; Change each change after that (Added, Modified, Deleted). Both
// run with the cache locked, in order: they must be quick, must not call
// the cache and must not modify the objects.
type Observer struct {
	Replace func(objects []runtime.Object)
	Change  func(watch.Event)
}

// Observable storage can be followed by an Observer.
type Observable interface {
	// Observe adds o until the returned stop is called; false when this
	// storage cannot be observed after all.
	Observe(o *Observer) (stop func(), ok bool)
}

var _ Observable = (*Cacher)(nil)

// Observe implements Observable.
func (c *Cacher) Observe(o *Observer) (stop func(), ok bool) {
	c.mu.Lock()
	c.observers[o] = struct{}{}
	if c.synced {
		o.Replace(c.allObjectsLocked())
	}
	c.mu.Unlock()
	return func() {
		c.mu.Lock()
		delete(c.observers, o)
		c.mu.Unlock()
	}, true
}

func (c *Cacher) allObjectsLocked() []runtime.Object {
	all := make([]runtime.Object, len(c.keys))
	for i, k := range c.keys {
		all[i] = c.objects[k].obj
	}
	return all
}

// atRevision is obj as a watcher sees it at rev (its deletion): a copy
// sharing all but the resourceVersion with obj. Event objects are
// read-only, as cached ones are, and a deep copy of a large object (a
// CRD's schemas) for one field cost as much as decoding it.
func atRevision(obj runtime.Object, rev int64) runtime.Object {
	var out runtime.Object
	if u, ok := obj.(*unstructured.Unstructured); ok {
		content := maps.Clone(u.Object)
		if md, ok := content["metadata"].(map[string]any); ok {
			content["metadata"] = maps.Clone(md)
		}
		out = &unstructured.Unstructured{Object: content}
	} else if v := reflect.ValueOf(obj); v.Kind() == reflect.Pointer && v.Elem().Kind() == reflect.Struct {
		cp := reflect.New(v.Elem().Type())
		cp.Elem().Set(v.Elem())
		out, _ = cp.Interface().(runtime.Object)
	}
	if out == nil {
		out = obj.DeepCopyObject()
	}
	_ = setResourceVersion(out, rev)
	return out
}

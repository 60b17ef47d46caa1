// Reads served from the cache: Get, GetList and the key index for pages.

package storage

import (
	"context"
	"fmt"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/conversion"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
)

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
	if cached.labels == nil { // no AttrFunc
		ok, err := pred.Matches(cached.obj)
		return err == nil && ok
	}
	if pred.Label != nil && !pred.Label.Matches(cached.labels) {
		return false
	}
	return pred.Field == nil || pred.Field.Matches(&cached.fields)
}

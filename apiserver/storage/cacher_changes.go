// Keeping the cache current: the watch hub's changes applied in order, and
// relists after a compaction or an error.

package storage

import (
	"fmt"
	goruntime "runtime"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"go.etcd.io/etcd/api/v3/mvccpb"
	clientv3 "go.etcd.io/etcd/client/v3"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
)

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
		labelSet, fieldSet, err := c.cfg.GetAttrs(obj)
		if err != nil {
			return nil, err
		}
		cached.labels, cached.fields = labelSet, c.fieldNames.values(fieldSet)
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

func (c *Cacher) setRevisionLocked(rev int64) {
	if rev <= c.revision {
		return
	}
	c.revision = rev
	close(c.revChanged)
	c.revChanged = make(chan struct{})
}

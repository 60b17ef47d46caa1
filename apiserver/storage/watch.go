package storage

import (
	"context"
	"fmt"
	"strings"
	"sync"

	clientv3 "go.etcd.io/etcd/client/v3"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
)

// storeWatchBuffer is the result channel capacity of a direct etcd watch.
const storeWatchBuffer = 100

// etcdWatcher is a watch.Interface over one clientv3 watch.
type etcdWatcher struct {
	result   chan watch.Event
	cancel   context.CancelFunc
	stopOnce sync.Once
}

func (w *etcdWatcher) ResultChan() <-chan watch.Event { return w.result }
func (w *etcdWatcher) Stop()                          { w.stopOnce.Do(w.cancel) }

// Watch implements Interface with one etcd watch per call. The Cacher is the
// cheap way to watch; this is the fallback and the reference behaviour.
func (s *Store) Watch(ctx context.Context, key string, opts ListOptions) (watch.Interface, error) {
	rev, err := parseResourceVersion(opts.ResourceVersion)
	if err != nil {
		return nil, err
	}
	if opts.Recursive && !strings.HasSuffix(key, "/") {
		key += "/"
	}
	pred := opts.Predicate
	if pred.GetAttrs == nil {
		pred.GetAttrs = s.cfg.GetAttrs
	}
	sendInitial := rev == 0
	if opts.SendInitialEvents != nil {
		sendInitial = *opts.SendInitialEvents
	}
	var initial []watch.Event
	if sendInitial {
		if initial, rev, err = s.initialEvents(ctx, key, opts, pred); err != nil {
			return nil, err
		}
	} else if rev == 0 {
		if rev, err = s.CurrentRevision(ctx); err != nil {
			return nil, err
		}
	}
	watchCtx, cancel := context.WithCancel(ctx)
	w := &etcdWatcher{result: make(chan watch.Event, storeWatchBuffer), cancel: cancel}
	watchOpts := []clientv3.OpOption{clientv3.WithRev(rev + 1), clientv3.WithPrevKV(), clientv3.WithProgressNotify()}
	if opts.Recursive {
		watchOpts = append(watchOpts, clientv3.WithPrefix())
	}
	etcdEvents := s.client.Watch(watchCtx, key, watchOpts...)
	go s.runWatch(watchCtx, w, etcdEvents, initial, pred, opts.ProgressNotify)
	return w, nil
}

// initialEvents lists the current state as ADDED events (plus the
// initial-events-end bookmark when asked for) and returns the list revision.
func (s *Store) initialEvents(ctx context.Context, key string, opts ListOptions, pred SelectionPredicate) ([]watch.Event, int64, error) {
	list := s.cfg.NewListFunc()
	listOpts := ListOptions{ResourceVersion: opts.ResourceVersion, Recursive: opts.Recursive, Predicate: pred}
	listOpts.Predicate.Limit, listOpts.Predicate.Continue = 0, ""
	if err := s.GetList(ctx, key, listOpts, list); err != nil {
		return nil, 0, err
	}
	setter, err := newItemsSetter(list)
	if err != nil {
		return nil, 0, err
	}
	events := make([]watch.Event, 0, setter.items.Len()+1)
	for i := 0; i < setter.items.Len(); i++ {
		item := setter.items.Index(i)
		if !setter.elemPtr {
			item = item.Addr()
		}
		events = append(events, watch.Event{Type: watch.Added, Object: item.Interface().(runtime.Object)})
	}
	listRV, err := listResourceVersion(list)
	if err != nil {
		return nil, 0, err
	}
	if opts.SendInitialEvents != nil && *opts.SendInitialEvents {
		events = append(events, watch.Event{Type: watch.Bookmark, Object: s.bookmarkObject(listRV, true)})
	}
	return events, listRV, nil
}

// bookmarkObject is an empty object of the kind carrying only a revision.
func (s *Store) bookmarkObject(rev int64, initialEventsEnd bool) runtime.Object {
	obj := s.cfg.NewFunc()
	_ = setResourceVersion(obj, rev)
	if initialEventsEnd {
		if acc, err := meta.Accessor(obj); err == nil {
			acc.SetAnnotations(map[string]string{metav1.InitialEventsAnnotationKey: "true"})
		}
	}
	return obj
}

func (s *Store) runWatch(ctx context.Context, w *etcdWatcher, etcdEvents clientv3.WatchChan,
	initial []watch.Event, pred SelectionPredicate, bookmarks bool) {
	defer close(w.result)
	defer w.cancel()
	send := func(ev watch.Event) bool {
		select {
		case w.result <- ev:
			return true
		case <-ctx.Done():
			return false
		}
	}
	for _, ev := range initial {
		if !send(ev) {
			return
		}
	}
	for {
		// Do not wait for etcd to close the channel once we are cancelled.
		var resp clientv3.WatchResponse
		select {
		case <-ctx.Done():
			return
		case r, ok := <-etcdEvents:
			if !ok {
				return
			}
			resp = r
		}
		if resp.CompactRevision != 0 {
			send(watch.Event{Type: watch.Error, Object: &apierrors.NewResourceExpired(
				fmt.Sprintf("too old resource version: watch compacted at revision %d", resp.CompactRevision)).ErrStatus})
			return
		}
		if err := resp.Err(); err != nil {
			send(watch.Event{Type: watch.Error, Object: &apierrors.NewInternalError(err).ErrStatus})
			return
		}
		if resp.IsProgressNotify() {
			if bookmarks && !send(watch.Event{Type: watch.Bookmark, Object: s.bookmarkObject(resp.Header.Revision, false)}) {
				return
			}
			continue
		}
		for _, etcdEvent := range resp.Events {
			ev, ok, err := s.translate(etcdEvent, pred)
			if err != nil {
				send(watch.Event{Type: watch.Error, Object: &apierrors.NewInternalError(err).ErrStatus})
				return
			}
			if ok && !send(ev) {
				return
			}
		}
	}
}

// translate turns one etcd event into a watch event, applying kube's
// selector transitions: an object that stops matching is DELETED, one that
// starts matching is ADDED.
func (s *Store) translate(e *clientv3.Event, pred SelectionPredicate) (watch.Event, bool, error) {
	filter := !pred.Empty()
	var cur, prev runtime.Object
	if e.Type == clientv3.EventTypePut {
		cur = s.cfg.NewFunc()
		if err := s.decodeIntoZero(e.Kv.Value, e.Kv.ModRevision, nil, cur); err != nil {
			return watch.Event{}, false, err
		}
	}
	needPrev := e.PrevKv != nil && (e.Type == clientv3.EventTypeDelete || (filter && !e.IsCreate()))
	if needPrev {
		prev = s.cfg.NewFunc()
		// A deleted object reports the deletion revision.
		if err := s.decodeIntoZero(e.PrevKv.Value, e.Kv.ModRevision, nil, prev); err != nil {
			return watch.Event{}, false, err
		}
	}
	curMatch, prevMatch := cur != nil, prev != nil
	if filter {
		var err error
		if cur != nil {
			if curMatch, err = pred.Matches(cur); err != nil {
				return watch.Event{}, false, err
			}
		}
		if prev != nil {
			if prevMatch, err = pred.Matches(prev); err != nil {
				return watch.Event{}, false, err
			}
		}
	}
	switch {
	case e.Type == clientv3.EventTypeDelete:
		if prev == nil || !prevMatch {
			return watch.Event{}, false, nil
		}
		return watch.Event{Type: watch.Deleted, Object: prev}, true, nil
	case e.IsCreate() || (filter && prev != nil && !prevMatch):
		if !curMatch {
			return watch.Event{}, false, nil
		}
		return watch.Event{Type: watch.Added, Object: cur}, true, nil
	case curMatch:
		return watch.Event{Type: watch.Modified, Object: cur}, true, nil
	case prev != nil && prevMatch:
		// Stopped matching: report the last matching state as deleted.
		_ = setResourceVersion(prev, e.Kv.ModRevision)
		return watch.Event{Type: watch.Deleted, Object: prev}, true, nil
	}
	return watch.Event{}, false, nil
}

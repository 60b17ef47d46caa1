package extensions

import (
	"context"
	"sync"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/devplane/devplane/apiserver/storage"
)

// Watch implements storage.Interface: events of the shared cache are
// converted to this version one by one.
func (s *versionStorage) Watch(ctx context.Context, key string, opts storage.ListOptions) (watch.Interface, error) {
	under, err := s.under.Watch(ctx, key, opts)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(ctx)
	w := &convertingWatch{under: under, result: make(chan watch.Event, convertedBuffer), cancel: cancel}
	go w.run(ctx, s)
	return w, nil
}

// convertedBuffer lets converted events queue for the client: the watch
// handler flushes once none are waiting, so a busy watch sends several
// events in one write instead of one write each.
const convertedBuffer = 64

type convertingWatch struct {
	under    watch.Interface
	result   chan watch.Event
	cancel   context.CancelFunc
	stopOnce sync.Once
}

func (w *convertingWatch) ResultChan() <-chan watch.Event { return w.result }

func (w *convertingWatch) Stop() {
	w.stopOnce.Do(func() {
		w.cancel()
		w.under.Stop()
	})
}

func (w *convertingWatch) run(ctx context.Context, s *versionStorage) {
	defer close(w.result)
	defer w.Stop()
	for {
		var ev watch.Event
		var ok bool
		select {
		case <-ctx.Done():
			return
		case ev, ok = <-w.under.ResultChan():
			if !ok {
				return
			}
		}
		if u, isU := ev.Object.(*unstructured.Unstructured); isU {
			switch ev.Type {
			case watch.Bookmark:
				c := u.DeepCopy()
				c.SetGroupVersionKind(s.gvk)
				ev.Object = c
			default:
				var served *unstructured.Unstructured
				var err error
				if ev.Type == watch.Deleted { // a copy, not the cached object
					s.memo.forget(u)
					served, err = s.toServedOne(ctx, u)
				} else {
					var out []*unstructured.Unstructured
					if out, _, err = s.toServedShared(ctx, []*unstructured.Unstructured{u}); err == nil {
						served = out[0]
					}
				}
				if err != nil {
					st := apierrors.NewInternalError(err).ErrStatus
					if se, ok := err.(apierrors.APIStatus); ok {
						st = se.Status()
					}
					ev = watch.Event{Type: watch.Error, Object: &st}
				} else {
					ev.Object = served
				}
			}
		}
		select {
		case <-ctx.Done():
			return
		case w.result <- ev:
		}
	}
}

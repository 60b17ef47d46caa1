package faults

import (
	"context"
	"fmt"
	"strconv"
	"sync"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/watch"
)

type watchEndKey struct{}

// WithWatchEnd marks a watch request's context: its watch is to end as
// end says. The filter sets it; the watch handler applies it (EndWatch).
func WithWatchEnd(ctx context.Context, end *WatchEnd) context.Context {
	return context.WithValue(ctx, watchEndKey{}, end)
}

// EndWatch returns w ended as ctx's WatchEnd says, or w itself when ctx
// carries none. sinceRV is the resourceVersion the watch started from,
// for the 410's message.
func EndWatch(ctx context.Context, w watch.Interface, sinceRV string) watch.Interface {
	end, _ := ctx.Value(watchEndKey{}).(*WatchEnd)
	if end == nil {
		return w
	}
	ew := &endingWatch{inner: w, out: make(chan watch.Event), stop: make(chan struct{})}
	go ew.relay(*end, sinceRV)
	return ew
}

// endingWatch relays a watch's events until its end.
type endingWatch struct {
	inner    watch.Interface
	out      chan watch.Event
	stop     chan struct{}
	stopOnce sync.Once
}

func (e *endingWatch) ResultChan() <-chan watch.Event { return e.out }

func (e *endingWatch) Stop() {
	e.stopOnce.Do(func() { close(e.stop) })
	e.inner.Stop()
}

func (e *endingWatch) relay(end WatchEnd, lastRV string) {
	defer close(e.out)
	defer e.inner.Stop()
	send := func(ev watch.Event) bool {
		select {
		case e.out <- ev:
			return true
		case <-e.stop:
			return false
		}
	}
	in := e.inner.ResultChan()
	for sent := 0; sent < end.AfterEvents; {
		var ev watch.Event
		var ok bool
		select {
		case ev, ok = <-in:
		case <-e.stop:
			return
		}
		if !ok {
			return
		}
		if ev.Type == watch.Error {
			send(ev)
			return
		}
		if ev.Type != watch.Bookmark {
			sent++
		}
		if m, err := meta.Accessor(ev.Object); err == nil && m.GetResourceVersion() != "" {
			lastRV = m.GetResourceVersion()
		}
		if !send(ev) {
			return
		}
	}
	if end.Gone {
		// Worded as the watch cache's refusal of a revision it no longer
		// holds: the one asked for, and the oldest it could serve.
		next := lastRV
		if n, err := strconv.ParseInt(lastRV, 10, 64); err == nil {
			next = strconv.FormatInt(n+1, 10)
		}
		gone := apierrors.NewResourceExpired(fmt.Sprintf("too old resource version: %s (%s)", lastRV, next))
		send(watch.Event{Type: watch.Error, Object: &gone.ErrStatus})
	}
}

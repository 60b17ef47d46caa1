// Bookmarks: watchers that asked for them get the cache's revision every
// BookmarkInterval.

package storage

import (
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/watch"
)

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

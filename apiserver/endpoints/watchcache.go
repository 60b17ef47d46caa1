package endpoints

import (
	"sync"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
)

// encodedEvents keeps the framed bytes of recent watch events, so that an
// event fanned out to many watchers of a resource is encoded once per
// encoding rather than once per watcher. The watch cache hands every
// watcher the same object pointer for one event, which is what the key
// compares; objects made per watcher (etcd watches, converted versions)
// simply miss.
type encodedEvents struct {
	mu      sync.Mutex
	entries map[encodedEventKey][]byte
}

type encodedEventKey struct {
	obj       runtime.Object // compared by pointer identity
	eventType watch.EventType
	mediaType string
	gv        schema.GroupVersion
}

// maxEncodedEvents bounds the cache: events are looked up within moments of
// each other (every watcher gets them at once), so a small window serves
// bursts without holding objects for long.
const maxEncodedEvents = 512

func (c *encodedEvents) get(k encodedEventKey) ([]byte, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	b, ok := c.entries[k]
	return b, ok
}

func (c *encodedEvents) put(k encodedEventKey, b []byte) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.entries == nil || len(c.entries) >= maxEncodedEvents {
		// Dropping all at once is enough: a burst refills it in one pass.
		c.entries = make(map[encodedEventKey][]byte, maxEncodedEvents)
	}
	c.entries[k] = b
}

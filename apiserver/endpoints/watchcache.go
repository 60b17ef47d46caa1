package endpoints

import (
	"sync"
	"sync/atomic"

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
//
// Every watcher of a busy resource looks each event up, so lookups take no
// lock (a mutex here was a twentieth of the server's CPU with a thousand
// watchers): a generation is a sync.Map by event, each holding its few
// encodings as an immutable slice, and a full generation is replaced whole.
type encodedEvents struct {
	gen atomic.Pointer[eventFrames]
}

type encodedEventKey struct {
	obj       runtime.Object // compared by pointer identity
	eventType watch.EventType
	mediaType string
	gv        schema.GroupVersion
}

// eventFrames is one generation of encoded events.
type eventFrames struct {
	byEvent sync.Map // eventID → *[]encodedFrame, replaced, never changed
	count   atomic.Int32
}

type eventID struct {
	obj       runtime.Object
	eventType watch.EventType
}

type encodedFrame struct {
	mediaType string
	gv        schema.GroupVersion
	frame     []byte
}

// maxEncodedEvents bounds a generation: events are looked up within
// moments of each other (every watcher gets them at once), so a small
// window serves bursts without holding objects for long.
const maxEncodedEvents = 512

func (c *encodedEvents) get(k encodedEventKey) ([]byte, bool) {
	g := c.gen.Load()
	if g == nil {
		return nil, false
	}
	v, ok := g.byEvent.Load(eventID{k.obj, k.eventType})
	if !ok {
		return nil, false
	}
	for _, f := range *v.(*[]encodedFrame) {
		if f.mediaType == k.mediaType && f.gv == k.gv {
			return f.frame, true
		}
	}
	return nil, false
}

func (c *encodedEvents) put(k encodedEventKey, b []byte) {
	g := c.gen.Load()
	if g == nil || g.count.Load() >= maxEncodedEvents {
		// Dropping all at once is enough: a burst refills it in one pass.
		fresh := &eventFrames{}
		if c.gen.CompareAndSwap(g, fresh) {
			g = fresh
		} else {
			g = c.gen.Load()
		}
	}
	id := eventID{k.obj, k.eventType}
	add := encodedFrame{mediaType: k.mediaType, gv: k.gv, frame: b}
	for {
		v, loaded := g.byEvent.LoadOrStore(id, &[]encodedFrame{add})
		if !loaded {
			g.count.Add(1)
			return
		}
		old := v.(*[]encodedFrame)
		for _, f := range *old {
			if f.mediaType == k.mediaType && f.gv == k.gv {
				return // another watcher encoded it meanwhile
			}
		}
		frames := append(append(make([]encodedFrame, 0, len(*old)+1), *old...), add)
		if g.byEvent.CompareAndSwap(id, old, &frames) {
			return
		}
	}
}

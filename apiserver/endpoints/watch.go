package endpoints

import (
	"bytes"
	"context"
	"net/http"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer/streaming"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/devplane/devplane/apiserver/faults"
	"github.com/devplane/devplane/apiserver/storage"
)

// watch streams events as framed metav1.WatchEvents in the negotiated
// encoding, flushing each one, until timeoutSeconds, the client leaves or
// storage ends the stream.
func (h *handler) watch(ctx context.Context, w http.ResponseWriter, r *http.Request, sc *scope, mc mediaChoice) {
	opts, err := h.listOptions(r)
	if err != nil {
		h.writeError(w, r, err)
		return
	}
	stream := mc.info.StreamSerializer
	if stream == nil {
		h.writeError(w, r, notAcceptable(h.mediaTypes))
		return
	}
	timeout := h.opts.MaxWatchTimeout
	if opts.TimeoutSeconds != nil && *opts.TimeoutSeconds > 0 {
		timeout = time.Duration(*opts.TimeoutSeconds) * time.Second
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	watcher, err := sc.res.Store.Watch(ctx, sc.namespace, opts)
	if err != nil {
		h.writeError(w, r, err)
		return
	}
	// A fault injected from a test may end this watch early.
	watcher = faults.EndWatch(ctx, watcher, opts.ResourceVersion)
	defer watcher.Stop()

	flusher, _ := w.(http.Flusher)
	contentType := mc.info.MediaType
	if mc.info.MediaType != runtime.ContentTypeJSON {
		contentType = mc.info.MediaType + ";stream=watch"
	}
	w.Header().Set("Content-Type", contentType)
	w.WriteHeader(http.StatusOK)
	if flusher != nil {
		flusher.Flush()
	}
	firstTable := true
	fl := watchFlusher{flusher: flusher, busyWatches: &h.busyWatches}
	defer fl.stop()
	q := newEventQueue(watcher)
	var batch []watch.Event
	for {
		// While a flush is deferred the loop waits for it, not for events:
		// they queue in the watcher and go out together.
		var first watch.Event
		received, closed := false, false
		select {
		case <-ctx.Done():
			return
		case <-fl.due():
		case ev, ok := <-awake(&fl, q.ch):
			first, received, closed = ev, ok, !ok
		case <-awake(&fl, q.waiting):
		}
		// Events already waiting go out in the same write, which under load
		// saves a TLS record and an HTTP/2 frame per event per watcher.
		var ended bool
		batch, ended = q.take(batch[:0], first, received, closed)
		if !h.writeEvents(ctx, w, r, batch, sc, mc, stream, &firstTable, &fl) {
			return
		}
		clear(batch)
		if ended {
			fl.flush()
			return
		}
		fl.caughtUp(time.Now())
	}
}

// eventQueue is a watch as the handler reads it: the watch cache's
// watchers hand over every queued event at once (storage.Batched),
// others through their result channel.
type eventQueue struct {
	batched storage.Batched
	waiting <-chan struct{}    // batched: signalled when events wait
	ch      <-chan watch.Event // others
}

func newEventQueue(wi watch.Interface) eventQueue {
	if b, ok := wi.(storage.Batched); ok {
		return eventQueue{batched: b, waiting: b.Waiting()}
	}
	return eventQueue{ch: wi.ResultChan()}
}

// take appends the waiting events to buf: first (if received from the
// channel already) and those behind it. ended: the watch has ended after
// these (closed: the channel was found closed).
func (q eventQueue) take(buf []watch.Event, first watch.Event, received, closed bool) ([]watch.Event, bool) {
	if q.batched != nil {
		return q.batched.Take(buf)
	}
	if closed {
		return buf, true
	}
	if received {
		buf = append(buf, first)
	}
	for len(q.ch) > 0 {
		ev, ok := <-q.ch
		if !ok {
			return buf, true
		}
		buf = append(buf, ev)
	}
	return buf, false
}

// writeEvents encodes evs and writes them, unflushed, in writes of up to
// watchWriteSize (one write per event cost the response writer's
// bookkeeping a thousand times over under fan-out); false ends the watch.
func (h *handler) writeEvents(ctx context.Context, w http.ResponseWriter, r *http.Request, evs []watch.Event, sc *scope, mc mediaChoice, stream *runtime.StreamSerializerInfo, firstTable *bool, fl *watchFlusher) bool {
	if len(evs) == 0 {
		return true
	}
	bp := watchWriteBuffers.Get().(*[]byte)
	defer watchWriteBuffers.Put(bp)
	out := (*bp)[:0]
	write := func() bool {
		if len(out) == 0 {
			return true
		}
		_, err := w.Write(out)
		out = out[:0]
		return err == nil
	}
	for _, ev := range evs {
		frame, ok := h.encodeEvent(ctx, r, ev, sc, mc, stream, firstTable)
		if !ok {
			write() // the events before it, as they would have gone alone
			return false
		}
		if len(out)+len(frame) > watchWriteSize && !write() {
			return false
		}
		if len(frame) > watchWriteSize {
			if _, err := w.Write(frame); err != nil {
				return false
			}
		} else {
			out = append(out, frame...)
		}
		fl.wrote()
	}
	ok := write()
	*bp = out[:0]
	return ok
}

// watchWriteSize bounds the bytes a watch gathers for one write. Buffers
// start at 4 KB (a busy watch's usual batch): a thousand watches may each
// hold one while waiting for the connection's writer.
const watchWriteSize = 32 << 10

var watchWriteBuffers = sync.Pool{New: func() any { b := make([]byte, 0, 4<<10); return &b }}

// A watch that flushed busyFlushes times in its last flushBucket (100 a
// second) is busy, and flushes at most once a flushWindow: with a thousand
// watches of a busy resource, a flush (an HTTP/2 frame, a TLS record, a
// wake-up of the connection's writer) per event per watch is most of the
// server's work, while the client gets the same bytes a few milliseconds
// later. After each flush a busy watch sleeps the window out, its events
// queueing in the watcher, so its goroutine wakes once a window rather than
// for the first event of each. A watch with fewer events flushes each as
// soon as it is written. The window is flushWindow while many watches are
// busy: with a thousand watchers of 500 writes a second, 15 ms gave a lower
// delivery p99 than 10 ms (52 against 57 ms over five runs each, p50 a
// millisecond higher) and 20 ms no lower. While few are (one client
// following a busy resource), their flushes cost little and the window is
// fewBusyWindow, so that their events are not held for long.
const (
	flushBucket     = 100 * time.Millisecond
	busyFlushes     = 10
	flushWindow     = 15 * time.Millisecond
	fewBusyWindow   = 5 * time.Millisecond
	manyBusyWatches = 32
)

// watchFlusher decides when a watch's written events are flushed.
type watchFlusher struct {
	flusher http.Flusher
	pending bool // written, not yet flushed
	// last is the last flush; bucket the start of the current flushBucket,
	// counted its flushes, busy whether the one before had busyFlushes.
	last, bucket time.Time
	counted      int
	busy         bool
	timer        *time.Timer
	deferred     bool // timer armed: the loop waits for it, not for events
	// busyWatches counts the handler's busy watches, this one included
	// while it is busy (nil: this one alone).
	busyWatches *atomic.Int64
}

// window is how long a busy watch waits between flushes now.
func (f *watchFlusher) window() time.Duration {
	if f.busyWatches != nil && f.busyWatches.Load() >= manyBusyWatches {
		return flushWindow
	}
	return fewBusyWindow
}

// setBusy records whether the watch is busy, in busyWatches too.
func (f *watchFlusher) setBusy(busy bool) {
	if busy != f.busy && f.busyWatches != nil {
		if busy {
			f.busyWatches.Add(1)
		} else {
			f.busyWatches.Add(-1)
		}
	}
	f.busy = busy
}

// awake is ch (the watch's events, or its signal that events wait), or
// nil while f defers a flush (so the loop waits for that instead).
func awake[T any](f *watchFlusher, ch <-chan T) <-chan T {
	if f.deferred {
		return nil
	}
	return ch
}

// due fires when a deferred flush is due.
func (f *watchFlusher) due() <-chan time.Time {
	if !f.deferred {
		return nil
	}
	return f.timer.C
}

// wrote records an event written and not yet flushed.
func (f *watchFlusher) wrote() { f.pending = true }

// caughtUp is called with every waiting event written. A quiet watch
// flushes now. A busy one flushes if a window has passed since its
// last flush and then sleeps a window; if not, it sleeps the rest of the
// window first. A window that passed with nothing written ends the sleep:
// the loop waits for events again.
func (f *watchFlusher) caughtUp(now time.Time) {
	f.deferred = false // if it was, the timer has fired
	if !f.pending {
		return
	}
	if f.busy {
		if wait := f.window() - now.Sub(f.last); wait > 0 {
			f.sleep(wait)
			return
		}
	}
	f.flush()
	f.last = now
	if now.Sub(f.bucket) >= flushBucket {
		// A busy watch flushes about flushBucket/flushWindow times a
		// bucket, fewer than busyFlushes: it stays busy above half that.
		threshold := busyFlushes
		if f.busy {
			threshold = int(flushBucket/flushWindow) / 2
		}
		f.setBusy(f.counted >= threshold && now.Sub(f.bucket) < 2*flushBucket)
		f.bucket, f.counted = now, 0
	}
	f.counted++
	if f.busy {
		f.sleep(f.window())
	}
}

func (f *watchFlusher) sleep(d time.Duration) {
	if f.timer == nil {
		f.timer = time.NewTimer(d)
	} else {
		f.timer.Reset(d)
	}
	f.deferred = true
}

func (f *watchFlusher) flush() {
	if f.pending && f.flusher != nil {
		f.flusher.Flush()
	}
	f.pending = false
}

func (f *watchFlusher) stop() {
	if f.timer != nil {
		f.timer.Stop()
	}
	f.setBusy(false)
}

// encodeEvent returns ev as one framed watch event in the negotiated
// encoding. Plain objects from the watch cache are encoded once per event
// and encoding for all the resource's watchers (h.events).
func (h *handler) encodeEvent(ctx context.Context, r *http.Request, ev watch.Event, sc *scope, mc mediaChoice, stream *runtime.StreamSerializerInfo, firstTable *bool) ([]byte, bool) {
	var key encodedEventKey
	shared := mc.as == asObject && ev.Type != watch.Error && ev.Type != watch.Bookmark
	if shared {
		key = encodedEventKey{obj: ev.Object, eventType: ev.Type, mediaType: mc.info.MediaType, gv: sc.gv}
		if frame, ok := h.events.get(key); ok {
			return frame, true
		}
	}
	obj, gv := h.watchObject(ctx, r, ev, sc, mc, firstTable)
	var buf bytes.Buffer
	h.setKind(obj, gv)
	if err := mc.info.Serializer.Encode(obj, &buf); err != nil {
		return nil, false
	}
	frame, ok := appendJSONEvent(nil, mc.info.MediaType, ev.Type, buf.Bytes())
	if !ok {
		var framed bytes.Buffer
		out := &metav1.WatchEvent{Type: string(ev.Type), Object: runtime.RawExtension{Raw: buf.Bytes()}}
		if err := streaming.NewEncoder(stream.Framer.NewFrameWriter(&framed), stream.Serializer).Encode(out); err != nil {
			return nil, false
		}
		frame = framed.Bytes()
	}
	if shared {
		h.events.put(key, frame)
	}
	return frame, true
}

// appendJSONEvent appends a JSON watch event around its object's encoding,
// the bytes encoding/json gives the WatchEvent: {"type":…,"object":…} and
// a newline (JSON's watch stream has no other framing). Through
// encoding/json the object is a RawExtension, whose bytes it scans again
// to compact and escape them: a tenth of the server's CPU for a JSON
// watch of ConfigMaps being created. The object's bytes come from
// encoding/json already compact and escaped, so they go in as they are
// (less their trailing newline). Another media type, or an event type
// that would need escaping, reports false.
func appendJSONEvent(dst []byte, mediaType string, eventType watch.EventType, object []byte) ([]byte, bool) {
	if mediaType != runtime.ContentTypeJSON || eventType == "" {
		return dst, false
	}
	for i := 0; i < len(eventType); i++ {
		if c := eventType[i]; c < 'A' || c > 'Z' {
			return dst, false
		}
	}
	object = bytes.TrimSuffix(object, []byte("\n"))
	if len(object) == 0 {
		return dst, false
	}
	dst = slices.Grow(dst, len(object)+len(eventType)+24)
	dst = append(dst, `{"type":"`...)
	dst = append(dst, eventType...)
	dst = append(dst, `","object":`...)
	dst = append(dst, object...)
	return append(dst, "}\n"...), true
}

// watchObject shapes one event's object as the client asked: the object,
// a one-row Table (column definitions on the first) or metadata only.
func (h *handler) watchObject(ctx context.Context, r *http.Request, ev watch.Event, sc *scope, mc mediaChoice, firstTable *bool) (runtime.Object, schema.GroupVersion) {
	if ev.Type == watch.Error {
		if st, ok := ev.Object.(*metav1.Status); ok {
			return st, schema.GroupVersion{Version: "v1"}
		}
		return statusFor(nil), schema.GroupVersion{Version: "v1"}
	}
	switch mc.as {
	case asTable:
		if ev.Type == watch.Bookmark {
			// A bookmark only moves the resourceVersion on.
			t := &metav1.Table{}
			if p, err := partialObjectMetadata(ev.Object, metaGV(mc)); err == nil {
				if pom, ok := p.(*metav1.PartialObjectMetadata); ok {
					t.ResourceVersion = pom.ResourceVersion
				}
			}
			return t, metaGV(mc)
		}
		t, err := h.table(ctx, r, ev.Object, sc, mc, *firstTable)
		if err != nil {
			return statusFor(err), schema.GroupVersion{Version: "v1"}
		}
		*firstTable = false
		return t, metaGV(mc)
	case asPartialObjectMetadata, asPartialObjectList:
		p, err := partialObjectMetadata(ev.Object, metaGV(mc))
		if err != nil {
			return statusFor(err), schema.GroupVersion{Version: "v1"}
		}
		if pom, ok := p.(*metav1.PartialObjectMetadata); ok {
			pom.Kind = asPartialObjectMetadata
		}
		return p, metaGV(mc)
	}
	return ev.Object, sc.gv
}

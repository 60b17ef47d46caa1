package endpoints

import (
	"bytes"
	"context"
	"net/http"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer/streaming"
	"k8s.io/apimachinery/pkg/watch"
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
	encoder := streaming.NewEncoder(stream.Framer.NewFrameWriter(w), stream.Serializer)
	firstTable := true
	for {
		select {
		case <-ctx.Done():
			return
		case ev, ok := <-watcher.ResultChan():
			if !ok {
				return
			}
			obj, gv := h.watchObject(ctx, r, ev, sc, mc, &firstTable)
			var buf bytes.Buffer
			h.setKind(obj, gv)
			if err := mc.info.Serializer.Encode(obj, &buf); err != nil {
				return
			}
			out := &metav1.WatchEvent{Type: string(ev.Type), Object: runtime.RawExtension{Raw: buf.Bytes()}}
			if err := encoder.Encode(out); err != nil {
				return
			}
			if flusher != nil {
				flusher.Flush()
			}
		}
	}
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

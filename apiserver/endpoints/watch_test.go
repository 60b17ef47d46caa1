package endpoints

import (
	"bytes"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	k8sjson "k8s.io/apimachinery/pkg/runtime/serializer/json"
	"k8s.io/apimachinery/pkg/runtime/serializer/streaming"
	"k8s.io/apimachinery/pkg/watch"
)

type countingFlusher struct{ n int }

func (c *countingFlusher) Flush() { c.n++ }

// A watch flushes each event as it is written until it has been flushing
// busyFlushes times a flushBucket; then it flushes at most once a
// flushWindow and sleeps through each window (its events queueing) until
// a window passes with nothing written, and it quietens again.
//
// The window is fewBusyWindow while few of the handler's watches are busy
// and flushWindow once many are; the handler's count follows this watch.
func TestWatchFlusher(t *testing.T) {
	for _, others := range []int64{0, manyBusyWatches} {
		busy := &atomic.Int64{}
		busy.Store(others)
		want := fewBusyWindow
		if others > 0 {
			want = flushWindow
		}
		t.Run(fmt.Sprintf("%d other busy watches", others), func(t *testing.T) {
			testWatchFlusher(t, busy, want)
			if n := busy.Load(); n != others {
				t.Errorf("busy watches %d after the watch stopped, want %d", n, others)
			}
			// A watch that ends while busy leaves the count too.
			ending := watchFlusher{busyWatches: busy}
			ending.setBusy(true)
			ending.stop()
			if n := busy.Load(); n != others {
				t.Errorf("busy watches %d after a busy watch ended, want %d", n, others)
			}
		})
	}
}

func testWatchFlusher(t *testing.T, busyWatches *atomic.Int64, window time.Duration) {
	others := busyWatches.Load()
	cf := &countingFlusher{}
	f := watchFlusher{flusher: cf, busyWatches: busyWatches}
	defer f.stop()
	now := time.Unix(1000, 0)
	step := func(d time.Duration) { now = now.Add(d) }
	event := func() { f.wrote(); f.caughtUp(now) }
	fired := func(what string) {
		t.Helper()
		if f.due() == nil {
			t.Fatalf("%s: sleeping without a timer to wait on", what)
		}
		if awake(&f, make(chan watch.Event)) != nil || awake(&f, make(chan struct{})) != nil {
			t.Fatalf("%s: events offered while sleeping", what)
		}
		select {
		case <-f.due():
		case <-time.After(5 * time.Second):
			t.Fatalf("%s: the window never ended", what)
		}
	}

	// Quiet: every caught-up write is flushed at once.
	for i := range 5 {
		event()
		if cf.n != i+1 || f.deferred {
			t.Fatalf("quiet event %d: %d flushes, sleeping %v", i, cf.n, f.deferred)
		}
		step(30 * time.Millisecond)
	}
	if awake(&f, make(chan watch.Event)) == nil || awake(&f, make(chan struct{})) == nil {
		t.Fatal("quiet: events not offered")
	}
	// Busy: an event every 2 ms for a bucket and more. The flush that
	// finds the watch busy is made, then the watch sleeps a window.
	for range 60 {
		before := cf.n
		event()
		if cf.n != before+1 {
			t.Fatal("a flush was held before the watch was busy")
		}
		step(2 * time.Millisecond)
		if f.deferred {
			break
		}
	}
	if !f.busy || !f.deferred {
		t.Fatalf("after 120 ms of events every 2 ms: busy %v, sleeping %v", f.busy, f.deferred)
	}
	if n := busyWatches.Load(); n != others+1 {
		t.Fatalf("busy watches %d while this one is busy, want %d", n, others+1)
	}
	if f.window() != window {
		t.Fatalf("window %v, want %v", f.window(), window)
	}
	// Events written while it slept go out together when the window ends,
	// and it sleeps again.
	fired("after the first busy flush")
	step(window)
	flushed := cf.n
	f.wrote()
	f.wrote()
	f.caughtUp(now)
	if cf.n != flushed+1 || !f.deferred {
		t.Fatalf("at the window's end: %d flushes (want %d), sleeping %v", cf.n, flushed+1, f.deferred)
	}
	// A window with nothing written: no flush, and it waits for events.
	fired("after a window's events")
	step(window)
	f.caughtUp(now)
	if cf.n != flushed+1 || f.deferred {
		t.Fatalf("after an empty window: %d flushes (want %d), sleeping %v", cf.n, flushed+1, f.deferred)
	}
	// The next event, a window or more after the last flush, goes at once.
	step(time.Millisecond)
	event()
	if cf.n != flushed+2 {
		t.Fatalf("an event after an empty window was held: %d flushes, want %d", cf.n, flushed+2)
	}
	// Quiet again: after a bucket with few flushes (the first one still
	// counts the busy stretch's), each is immediate.
	for range 4 {
		if f.deferred {
			fired("while quietening")
		}
		step(60 * time.Millisecond)
		event()
	}
	if f.busy || f.deferred {
		t.Fatalf("after flushes 60 ms apart: busy %v, sleeping %v", f.busy, f.deferred)
	}
	if n := busyWatches.Load(); n != others {
		t.Fatalf("busy watches %d once this one quietened, want %d", n, others)
	}
	before := cf.n
	step(time.Millisecond)
	event()
	if cf.n != before+1 || f.deferred {
		t.Fatal("a quiet watch's flush was held")
	}
}

// A JSON watch event written around its object's bytes is byte for byte
// what encoding/json gives for the WatchEvent (and so what a client read
// before), for objects whose strings hold what encoding/json escapes
// (HTML's <, > and &, U+2028, quotes, control characters) or passes (other
// Unicode), with raw JSON inside (managedFields), and for custom objects.
func TestJSONEventMatchesEncodingJSON(t *testing.T) {
	scheme := runtime.NewScheme()
	if err := corev1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	metav1.AddToGroupVersion(scheme, schema.GroupVersion{Version: "v1"})
	serializer := k8sjson.NewSerializerWithOptions(k8sjson.DefaultMetaFactory, scheme, scheme, k8sjson.SerializerOptions{})
	tricky := "<script>a && b</script> \"quoted\" \u2028\u2029 \t\n\x01 é 漢字 \\ /"
	now := metav1.NewTime(time.Date(2026, 11, 27, 3, 4, 5, 0, time.UTC))
	objects := []runtime.Object{
		&corev1.ConfigMap{
			TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
			ObjectMeta: metav1.ObjectMeta{Name: "cm", Namespace: "ns", ResourceVersion: "42", CreationTimestamp: now,
				Labels: map[string]string{"app": tricky},
				ManagedFields: []metav1.ManagedFieldsEntry{{Manager: "kubectl", Operation: metav1.ManagedFieldsOperationUpdate, APIVersion: "v1", Time: &now,
					FieldsType: "FieldsV1", FieldsV1: &metav1.FieldsV1{Raw: []byte(`{"f:data":{".":{},"f:a<b":{}}}`)}}}},
			Data: map[string]string{"a<b": tricky, "payload": strings.Repeat("x", 1400)},
		},
		&unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "example.com/v1", "kind": "Widget",
			"metadata": map[string]any{"name": "w", "resourceVersion": "7"},
			"spec":     map[string]any{"note": tricky, "n": int64(3), "f": 1.5, "list": []any{"<", map[string]any{"&": nil}}},
		}},
		&metav1.Status{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Status"}, Status: metav1.StatusFailure, Message: tricky, Reason: metav1.StatusReasonExpired, Code: 410},
	}
	for _, obj := range objects {
		var object bytes.Buffer
		if err := serializer.Encode(obj, &object); err != nil {
			t.Fatal(err)
		}
		for _, eventType := range []watch.EventType{watch.Added, watch.Modified, watch.Deleted, watch.Bookmark, watch.Error} {
			var want bytes.Buffer
			out := &metav1.WatchEvent{Type: string(eventType), Object: runtime.RawExtension{Raw: object.Bytes()}}
			if err := streaming.NewEncoder(&want, serializer).Encode(out); err != nil {
				t.Fatal(err)
			}
			got, ok := appendJSONEvent([]byte("kept:"), runtime.ContentTypeJSON, eventType, object.Bytes())
			if !ok {
				t.Fatalf("%T %s: not written", obj, eventType)
			}
			if string(got) != "kept:"+want.String() {
				t.Errorf("%T %s:\n got %s\nwant %s", obj, eventType, got[len("kept:"):], want.Bytes())
			}
		}
	}

	// What it does not write, encoding/json does.
	for _, c := range []struct {
		mediaType string
		eventType watch.EventType
		object    string
	}{
		{"application/vnd.kubernetes.protobuf", watch.Added, `{}`},
		{"application/yaml", watch.Added, `{}`},
		{runtime.ContentTypeJSON, "added", `{}`},
		{runtime.ContentTypeJSON, `ADDED"`, `{}`},
		{runtime.ContentTypeJSON, "", `{}`},
		{runtime.ContentTypeJSON, watch.Added, "\n"},
	} {
		if got, ok := appendJSONEvent(nil, c.mediaType, c.eventType, []byte(c.object)); ok {
			t.Errorf("%s %q %q: wrote %q", c.mediaType, c.eventType, c.object, got)
		}
	}
}

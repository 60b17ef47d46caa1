package endpoints

import (
	"fmt"
	"sync"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
)

// An event's encodings are kept per object (by identity), event type,
// media type and group version, shared by concurrent watchers, and
// bounded.
func TestEncodedEvents(t *testing.T) {
	var c encodedEvents
	obj, other := &corev1.ConfigMap{}, &corev1.ConfigMap{}
	v1 := schema.GroupVersion{Version: "v1"}
	key := func(o *corev1.ConfigMap, typ watch.EventType, media string) encodedEventKey {
		return encodedEventKey{obj: o, eventType: typ, mediaType: media, gv: v1}
	}
	if _, ok := c.get(key(obj, watch.Added, "application/json")); ok {
		t.Fatal("hit in an empty cache")
	}
	c.put(key(obj, watch.Added, "application/json"), []byte("json"))
	c.put(key(obj, watch.Added, "application/vnd.kubernetes.protobuf"), []byte("proto"))
	c.put(key(obj, watch.Deleted, "application/json"), []byte("deleted"))
	for _, tc := range []struct {
		key  encodedEventKey
		want string
	}{
		{key(obj, watch.Added, "application/json"), "json"},
		{key(obj, watch.Added, "application/vnd.kubernetes.protobuf"), "proto"},
		{key(obj, watch.Deleted, "application/json"), "deleted"},
		{key(obj, watch.Modified, "application/json"), ""},
		{key(other, watch.Added, "application/json"), ""},
		{encodedEventKey{obj: obj, eventType: watch.Added, mediaType: "application/json", gv: schema.GroupVersion{Group: "g", Version: "v1"}}, ""},
	} {
		got, ok := c.get(tc.key)
		if ok != (tc.want != "") || string(got) != tc.want {
			t.Errorf("get(%v %s %s): %q, %v; want %q", tc.key.eventType, tc.key.mediaType, tc.key.gv, got, ok, tc.want)
		}
	}

	// Many watchers putting and getting the same events at once.
	objs := make([]*corev1.ConfigMap, 100)
	for i := range objs {
		objs[i] = &corev1.ConfigMap{}
	}
	var wg sync.WaitGroup
	for w := range 8 {
		wg.Go(func() {
			for i, o := range objs {
				media := fmt.Sprintf("media-%d", (i+w)%3)
				k := key(o, watch.Added, media)
				want := fmt.Sprintf("%d/%s", i, media)
				if got, ok := c.get(k); ok && string(got) != want {
					t.Errorf("get: %q, want %q", got, want)
				}
				c.put(k, []byte(want))
				if got, ok := c.get(k); ok && string(got) != want {
					t.Errorf("get after put: %q, want %q", got, want)
				}
			}
		})
	}
	wg.Wait()
	for i, o := range objs {
		for m := range 3 {
			media := fmt.Sprintf("media-%d", m)
			if got, ok := c.get(key(o, watch.Added, media)); !ok || string(got) != fmt.Sprintf("%d/%s", i, media) {
				t.Errorf("object %d %s: %q, %v", i, media, got, ok)
			}
		}
	}

	// Bounded: a full generation is dropped.
	for range maxEncodedEvents + 1 {
		c.put(key(&corev1.ConfigMap{}, watch.Added, "application/json"), []byte("x"))
	}
	if n := c.gen.Load().count.Load(); n > maxEncodedEvents {
		t.Errorf("%d events kept, want at most %d", n, maxEncodedEvents)
	}
	if _, ok := c.get(key(obj, watch.Added, "application/json")); ok {
		t.Error("an event from a dropped generation is still there")
	}
}

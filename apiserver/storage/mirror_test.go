package storage

import (
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
)

// A mirror lists what the cache lists, in the same order, namespace by
// namespace, as objects are created, updated and deleted.
func TestMirrorFollowsCache(t *testing.T) {
	ctx := testContext(t)
	cfg := testConfig(t)
	createConfigMaps(t, NewStore(testClient, cfg), cfg, "b", 3, nil)
	cacher := newReadyTestCacher(t, cfg, CacherOptions{})
	m, ok := NewMirror(cacher)
	if !ok {
		t.Fatal("a watch cache cannot be mirrored")
	}
	defer m.Stop()

	names := func(objs []runtime.Object) string {
		out := ""
		for _, o := range objs {
			acc, _ := meta.Accessor(o)
			out += fmt.Sprintf("%s/%s@%s ", acc.GetNamespace(), acc.GetName(), acc.GetResourceVersion())
		}
		return out
	}
	// The cache's list, read as admission read it before, once the cache
	// holds the last write (at rv).
	rv := "0"
	wrote := func(obj runtime.Object) {
		acc, _ := meta.Accessor(obj)
		rv = acc.GetResourceVersion()
	}
	cached := func(ns string) string {
		key := cfg.ResourcePrefix
		if ns != "" {
			key += "/" + ns
		}
		list := &corev1.ConfigMapList{}
		if err := cacher.GetList(ctx, key, ListOptions{Recursive: true, ResourceVersion: rv}, list); err != nil {
			t.Fatal(err)
		}
		objs, err := meta.ExtractList(list)
		if err != nil {
			t.Fatal(err)
		}
		return names(objs)
	}
	same := func(when string) {
		t.Helper()
		// The mirror follows the cache's events: it may lag the list.
		deadline := time.Now().Add(10 * time.Second)
		for _, ns := range []string{"", "a", "b", "c"} {
			for {
				objs, ok := m.Objects(ns)
				got, want := names(objs), cached(ns)
				if ok && got == want {
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("%s, namespace %q: mirror %q (ready %v), cache %q", when, ns, got, ok, want)
				}
				time.Sleep(10 * time.Millisecond)
			}
		}
	}
	same("after the initial list")
	if objs, _ := m.Objects("b"); len(objs) != 3 {
		t.Fatalf("namespace b: %d objects, want 3", len(objs))
	}

	for _, ns := range []string{"c", "a"} {
		created := &corev1.ConfigMap{}
		if err := cacher.Create(ctx, objectKey(cfg, ns, "x"), newConfigMap(ns, "x", nil), created, 0); err != nil {
			t.Fatal(err)
		}
		wrote(created)
	}
	same("after creates")
	if objs, _ := m.Objects(""); len(objs) != 5 {
		t.Fatalf("all namespaces: %d objects, want 5", len(objs))
	}

	wrote(updateData(t, cacher, objectKey(cfg, "b", "cm-00001"), "changed"))
	deleted := &corev1.ConfigMap{}
	if err := cacher.Delete(ctx, objectKey(cfg, "a", "x"), deleted, nil, nil); err != nil {
		t.Fatal(err)
	}
	// A later write, so that the cache's list is past the deletion too.
	later := &corev1.ConfigMap{}
	if err := cacher.Create(ctx, objectKey(cfg, "c", "later"), newConfigMap("c", "later", nil), later, 0); err != nil {
		t.Fatal(err)
	}
	wrote(later)
	same("after an update and a delete")
	if objs, _ := m.Objects("a"); len(objs) != 0 {
		t.Fatalf("namespace a: %d objects after its only one was deleted", len(objs))
	}

	// The caller owns the slice: reordering it leaves the mirror alone.
	objs, _ := m.Objects("")
	objs[0], objs[len(objs)-1] = objs[len(objs)-1], objs[0]
	same("after the caller reordered its slice")
}

package storage

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
)

// cachedAt waits until the cacher holds key at rev and returns that entry.
func cachedAt(t *testing.T, c *Cacher, key string, rev int64) *cachedObject {
	t.Helper()
	if err := c.waitForRevision(testContext(t), rev); err != nil {
		t.Fatal(err)
	}
	c.mu.RLock()
	defer c.mu.RUnlock()
	cached := c.objects[key]
	if cached == nil {
		t.Fatalf("%s not cached at revision %d", key, rev)
	}
	return cached
}

// makeStale puts an older entry back at key, as a cache that has not yet
// seen the newer writes would hold it.
func makeStale(c *Cacher, key string, old *cachedObject) {
	c.mu.Lock()
	c.objects[key] = old
	c.mu.Unlock()
}

// Updates and deletes start from the watch cache's state of the object.
// When that state is behind etcd, nothing decided on it may stand: the
// write lands on the current object, and a precondition, no-op or delete
// is decided on etcd's state.
func TestCacherUpdatesStartFromTheCachedState(t *testing.T) {
	ctx := testContext(t)
	cfg := testConfig(t)
	c := newReadyTestCacher(t, cfg, CacherOptions{})
	key := objectKey(cfg, "ns", "cm")
	created := &corev1.ConfigMap{}
	if err := c.Create(ctx, key, newConfigMap("ns", "cm", map[string]string{"v": "1"}), created, 0); err != nil {
		t.Fatal(err)
	}
	rev1 := mustRV(t, created.ResourceVersion)
	stale := cachedAt(t, c, key, rev1)
	rev2 := mustRV(t, updateData(t, c, key, "2").ResourceVersion)
	cachedAt(t, c, key, rev2)

	// A current cache: tryUpdate sees the cached state first.
	var seen []string
	addW := func(value string) UpdateFunc {
		return func(in runtime.Object) (runtime.Object, error) {
			cm := in.(*corev1.ConfigMap).DeepCopy()
			seen = append(seen, cm.ResourceVersion)
			cm.Data["w"] = value
			return cm, nil
		}
	}
	out := &corev1.ConfigMap{}
	if err := c.GuaranteedUpdate(ctx, key, out, false, nil, addW("a")); err != nil {
		t.Fatal(err)
	}
	if len(seen) != 1 || mustRV(t, seen[0]) != rev2 {
		t.Fatalf("tryUpdate saw revisions %v, want [%d]", seen, rev2)
	}
	rev3 := mustRV(t, out.ResourceVersion)

	// A stale cache: the revision compare fails and the update is made
	// again on the current object, keeping what the stale state lacked.
	makeStale(c, key, stale)
	seen = nil
	if err := c.GuaranteedUpdate(ctx, key, out, false, nil, addW("b")); err != nil {
		t.Fatal(err)
	}
	if len(seen) != 2 || mustRV(t, seen[0]) != rev1 || mustRV(t, seen[1]) != rev3 {
		t.Fatalf("tryUpdate saw revisions %v, want [%d %d]", seen, rev1, rev3)
	}
	if out.Data["v"] != "2" || out.Data["w"] != "b" {
		t.Fatalf("data after the update from a stale cache: %v, want v=2 w=b", out.Data)
	}
	rev4 := mustRV(t, out.ResourceVersion)
	if got := mustRV(t, modRevision(t, key)); got != rev4 {
		t.Fatalf("etcd holds revision %d, the update returned %d", got, rev4)
	}

	// A precondition that holds in etcd but not in the stale cache.
	makeStale(c, key, stale)
	current := out.ResourceVersion
	if err := c.GuaranteedUpdate(ctx, key, out, false, &Preconditions{ResourceVersion: &current}, addW("c")); err != nil {
		t.Fatalf("precondition on etcd's resourceVersion, stale cache: %v", err)
	}
	rev5 := mustRV(t, out.ResourceVersion)

	// A no-op on etcd's state is no write, though the stale state differs.
	makeStale(c, key, stale)
	if err := c.GuaranteedUpdate(ctx, key, out, false, nil, addW("c")); err != nil {
		t.Fatal(err)
	}
	if got := mustRV(t, out.ResourceVersion); got != rev5 || mustRV(t, modRevision(t, key)) != rev5 {
		t.Fatalf("no-op update from a stale cache: returned %d, etcd at %s; want both %d", got, modRevision(t, key), rev5)
	}

	// A precondition that fails in etcd fails, stale cache or not.
	makeStale(c, key, stale)
	old := created.ResourceVersion
	err := c.GuaranteedUpdate(ctx, key, out, false, &Preconditions{ResourceVersion: &old}, addW("d"))
	if !apierrors.IsConflict(err) {
		t.Fatalf("update with a precondition on an old resourceVersion: %v, want a Conflict", err)
	}

	// Delete: the precondition and the returned object are etcd's.
	makeStale(c, key, stale)
	rv5 := out.ResourceVersion
	deleted := &corev1.ConfigMap{}
	if err := c.Delete(ctx, key, deleted, &Preconditions{ResourceVersion: &rv5}, nil); err != nil {
		t.Fatalf("delete with a precondition on etcd's resourceVersion, stale cache: %v", err)
	}
	if deleted.Data["w"] != "c" || mustRV(t, deleted.ResourceVersion) <= rev5 {
		t.Fatalf("deleted object: rv %s data %v, want the current data at the deletion revision", deleted.ResourceVersion, deleted.Data)
	}
	if resp, err := testClient.Get(context.Background(), key); err != nil || len(resp.Kvs) != 0 {
		t.Fatalf("after delete: %v, %d keys", err, len(resp.Kvs))
	}
}

// An update through the cache keeps the etcd lease (TTL) the object was
// created with.
func TestCacherUpdateKeepsTheLease(t *testing.T) {
	ctx := testContext(t)
	cfg := testConfig(t)
	c := newReadyTestCacher(t, cfg, CacherOptions{})
	key := objectKey(cfg, "ns", "event")
	created := &corev1.ConfigMap{}
	if err := c.Create(ctx, key, newConfigMap("ns", "event", map[string]string{"v": "1"}), created, 30); err != nil {
		t.Fatal(err)
	}
	if cached := cachedAt(t, c, key, mustRV(t, created.ResourceVersion)); cached.lease == 0 {
		t.Fatal("the cached object has no lease")
	}
	before, _ := testClient.Get(ctx, key)
	updateData(t, c, key, "2")
	after, _ := testClient.Get(ctx, key)
	if after.Kvs[0].Lease == 0 || after.Kvs[0].Lease != before.Kvs[0].Lease {
		t.Fatalf("lease %d after the update, %d before", after.Kvs[0].Lease, before.Kvs[0].Lease)
	}
}

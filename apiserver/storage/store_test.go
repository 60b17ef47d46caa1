package storage

import (
	"context"
	"fmt"
	"strconv"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
)

func modRevision(t *testing.T, key string) string {
	t.Helper()
	resp, err := testClient.Get(context.Background(), key)
	if err != nil || len(resp.Kvs) != 1 {
		t.Fatalf("etcd get %s: %v %v", key, resp, err)
	}
	return strconv.FormatInt(resp.Kvs[0].ModRevision, 10)
}

func TestStoreCRUD(t *testing.T) {
	ctx := testContext(t)
	cfg := testConfig(t)
	store := NewStore(testClient, cfg)
	key := objectKey(cfg, "ns1", "a")

	created := &corev1.ConfigMap{}
	if err := store.Create(ctx, key, newConfigMap("ns1", "a", map[string]string{"k": "v1"}), created, 0); err != nil {
		t.Fatal(err)
	}
	if created.ResourceVersion != modRevision(t, key) || created.Data["k"] != "v1" {
		t.Fatalf("created %+v, etcd mod revision %s", created, modRevision(t, key))
	}
	err := store.Create(ctx, key, newConfigMap("ns1", "a", nil), &corev1.ConfigMap{}, 0)
	if !apierrors.IsAlreadyExists(err) {
		t.Fatalf("second create: want AlreadyExists, got %v", err)
	}

	got := &corev1.ConfigMap{}
	if err := store.Get(ctx, key, GetOptions{}, got); err != nil {
		t.Fatal(err)
	}
	if got.ResourceVersion != created.ResourceVersion || got.Name != "a" {
		t.Fatalf("get: %+v", got)
	}

	updated := &corev1.ConfigMap{}
	err = store.GuaranteedUpdate(ctx, key, updated, false, nil, func(in runtime.Object) (runtime.Object, error) {
		cm := in.(*corev1.ConfigMap).DeepCopy()
		cm.Data["k"] = "v2"
		return cm, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if updated.ResourceVersion != modRevision(t, key) || updated.ResourceVersion == created.ResourceVersion {
		t.Fatalf("update rv %s, etcd %s, created %s", updated.ResourceVersion, modRevision(t, key), created.ResourceVersion)
	}

	// An update that changes nothing keeps the revision.
	unchanged := &corev1.ConfigMap{}
	err = store.GuaranteedUpdate(ctx, key, unchanged, false, nil, func(in runtime.Object) (runtime.Object, error) {
		return in.DeepCopyObject(), nil
	})
	if err != nil || unchanged.ResourceVersion != updated.ResourceVersion {
		t.Fatalf("no-op update: rv %s want %s, err %v", unchanged.ResourceVersion, updated.ResourceVersion, err)
	}

	// A stale resourceVersion precondition is a conflict.
	stale := created.ResourceVersion
	err = store.GuaranteedUpdate(ctx, key, &corev1.ConfigMap{}, false, &Preconditions{ResourceVersion: &stale},
		func(in runtime.Object) (runtime.Object, error) { return in, nil })
	if !apierrors.IsConflict(err) {
		t.Fatalf("stale update: want Conflict, got %v", err)
	}

	// Update of a missing key: NotFound, or a create with ignoreNotFound.
	missing := objectKey(cfg, "ns1", "missing")
	err = store.GuaranteedUpdate(ctx, missing, &corev1.ConfigMap{}, false, nil,
		func(in runtime.Object) (runtime.Object, error) { return in, nil })
	if !apierrors.IsNotFound(err) {
		t.Fatalf("update missing: want NotFound, got %v", err)
	}
	upserted := &corev1.ConfigMap{}
	err = store.GuaranteedUpdate(ctx, missing, upserted, true, nil, func(in runtime.Object) (runtime.Object, error) {
		cm := in.(*corev1.ConfigMap)
		if cm.Name != "" {
			return nil, fmt.Errorf("want an empty object, got %q", cm.Name)
		}
		return newConfigMap("ns1", "missing", nil), nil
	})
	if err != nil || upserted.Name != "missing" || upserted.ResourceVersion != modRevision(t, missing) {
		t.Fatalf("upsert: %+v %v", upserted, err)
	}

	deleted := &corev1.ConfigMap{}
	if err := store.Delete(ctx, key, deleted, nil, nil); err != nil {
		t.Fatal(err)
	}
	if deleted.Data["k"] != "v2" {
		t.Fatalf("deleted object: %+v", deleted)
	}
	if err := store.Get(ctx, key, GetOptions{}, &corev1.ConfigMap{}); !apierrors.IsNotFound(err) {
		t.Fatalf("get after delete: want NotFound, got %v", err)
	}
	if err := store.Get(ctx, key, GetOptions{IgnoreNotFound: true}, &corev1.ConfigMap{}); err != nil {
		t.Fatalf("get IgnoreNotFound: %v", err)
	}
	if err := store.Delete(ctx, key, &corev1.ConfigMap{}, nil, nil); !apierrors.IsNotFound(err) {
		t.Fatalf("delete missing: want NotFound, got %v", err)
	}
}

func TestStoreDeletePreconditions(t *testing.T) {
	ctx := testContext(t)
	cfg := testConfig(t)
	store := NewStore(testClient, cfg)
	key := objectKey(cfg, "ns", "d")
	cm := newConfigMap("ns", "d", nil)
	cm.UID = "uid-1"
	created := &corev1.ConfigMap{}
	if err := store.Create(ctx, key, cm, created, 0); err != nil {
		t.Fatal(err)
	}
	wrongUID := types.UID("uid-2")
	err := store.Delete(ctx, key, &corev1.ConfigMap{}, &Preconditions{UID: &wrongUID}, nil)
	if !apierrors.IsConflict(err) {
		t.Fatalf("wrong UID: want Conflict, got %v", err)
	}
	wrongRV := "1"
	if err := store.Delete(ctx, key, &corev1.ConfigMap{}, &Preconditions{ResourceVersion: &wrongRV}, nil); !apierrors.IsConflict(err) {
		t.Fatalf("wrong RV: want Conflict, got %v", err)
	}
	refused := apierrors.NewForbidden(cfg.Resource, "d", fmt.Errorf("no"))
	err = store.Delete(ctx, key, &corev1.ConfigMap{}, nil, func(context.Context, runtime.Object) error { return refused })
	if !apierrors.IsForbidden(err) {
		t.Fatalf("validateDeletion: want Forbidden, got %v", err)
	}
	rightUID, rightRV := types.UID("uid-1"), created.ResourceVersion
	out := &corev1.ConfigMap{}
	if err := store.Delete(ctx, key, out, &Preconditions{UID: &rightUID, ResourceVersion: &rightRV}, nil); err != nil {
		t.Fatal(err)
	}
	if out.UID != "uid-1" {
		t.Fatalf("delete out: %+v", out)
	}
}

func TestStoreConcurrentUpdatesLoseNothing(t *testing.T) {
	ctx := testContext(t)
	cfg := testConfig(t)
	store := NewStore(testClient, cfg)
	key := objectKey(cfg, "ns", "counter")
	if err := store.Create(ctx, key, newConfigMap("ns", "counter", map[string]string{"n": "0"}), nil, 0); err != nil {
		t.Fatal(err)
	}
	const workers, increments = 8, 25
	var wg sync.WaitGroup
	errs := make(chan error, workers)
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range increments {
				err := store.GuaranteedUpdate(ctx, key, &corev1.ConfigMap{}, false, nil, func(in runtime.Object) (runtime.Object, error) {
					cm := in.(*corev1.ConfigMap).DeepCopy()
					n, _ := strconv.Atoi(cm.Data["n"])
					cm.Data["n"] = strconv.Itoa(n + 1)
					return cm, nil
				})
				if err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	got := &corev1.ConfigMap{}
	if err := store.Get(ctx, key, GetOptions{}, got); err != nil {
		t.Fatal(err)
	}
	if got.Data["n"] != strconv.Itoa(workers*increments) {
		t.Fatalf("counter = %s, want %d", got.Data["n"], workers*increments)
	}
}

func createConfigMaps(t testing.TB, store Interface, cfg Config, ns string, n int, labelOf func(i int) map[string]string) {
	t.Helper()
	ctx := context.Background()
	for i := range n {
		cm := newConfigMap(ns, fmt.Sprintf("cm-%05d", i), map[string]string{"i": strconv.Itoa(i)})
		if labelOf != nil {
			cm.Labels = labelOf(i)
		}
		if err := store.Create(ctx, objectKey(cfg, ns, cm.Name), cm, nil, 0); err != nil {
			t.Fatal(err)
		}
	}
}

func TestStoreListPaginates(t *testing.T) {
	ctx := testContext(t)
	cfg := testConfig(t)
	store := NewStore(testClient, cfg)
	const total = 1000
	createConfigMaps(t, store, cfg, "ns1", total, nil)
	// "ns10" must not show up in a list of "ns1".
	createConfigMaps(t, store, cfg, "ns10", 3, nil)

	seen := map[string]int{}
	continueToken, listRV := "", ""
	for page := 0; ; page++ {
		if page > total/100+1 {
			t.Fatal("too many pages")
		}
		list := &corev1.ConfigMapList{}
		opts := ListOptions{Recursive: true, Predicate: SelectionPredicate{Limit: 100, Continue: continueToken}}
		if err := store.GetList(ctx, cfg.ResourcePrefix+"/ns1", opts, list); err != nil {
			t.Fatal(err)
		}
		if len(list.Items) != 100 {
			t.Fatalf("page %d: %d items", page, len(list.Items))
		}
		if listRV == "" {
			listRV = list.ResourceVersion
		} else if list.ResourceVersion != listRV {
			t.Fatalf("page %d read at %s, first page at %s", page, list.ResourceVersion, listRV)
		}
		for _, cm := range list.Items {
			seen[cm.Namespace+"/"+cm.Name]++
		}
		remaining := int64(total - 100*(page+1))
		if remaining == 0 {
			if list.Continue != "" || list.RemainingItemCount != nil {
				t.Fatalf("last page: continue %q remaining %v", list.Continue, list.RemainingItemCount)
			}
			break
		}
		if list.RemainingItemCount == nil || *list.RemainingItemCount != remaining {
			t.Fatalf("page %d: remainingItemCount %v, want %d", page, list.RemainingItemCount, remaining)
		}
		continueToken = list.Continue
	}
	if len(seen) != total {
		t.Fatalf("saw %d distinct objects, want %d", len(seen), total)
	}
	for name, count := range seen {
		if count != 1 || name[:4] != "ns1/" {
			t.Fatalf("%s seen %d times", name, count)
		}
	}

	// A malformed token is a 400.
	err := store.GetList(ctx, cfg.ResourcePrefix+"/ns1",
		ListOptions{Recursive: true, Predicate: SelectionPredicate{Limit: 10, Continue: "!!not-a-token"}}, &corev1.ConfigMapList{})
	if !apierrors.IsBadRequest(err) {
		t.Fatalf("malformed continue: want BadRequest, got %v", err)
	}
}

func TestStoreContinueAfterCompactionIsExpired(t *testing.T) {
	ctx := testContext(t)
	cfg := testConfig(t)
	store := NewStore(testClient, cfg)
	createConfigMaps(t, store, cfg, "ns", 10, nil)
	first := &corev1.ConfigMapList{}
	if err := store.GetList(ctx, cfg.ResourcePrefix, ListOptions{Recursive: true, Predicate: SelectionPredicate{Limit: 3}}, first); err != nil {
		t.Fatal(err)
	}
	if first.Continue == "" {
		t.Fatal("no continue token")
	}
	if _, err := CompactNow(ctx, testClient); err != nil {
		t.Fatal(err)
	}
	err := store.GetList(ctx, cfg.ResourcePrefix, ListOptions{Recursive: true, Predicate: SelectionPredicate{Limit: 3, Continue: first.Continue}}, &corev1.ConfigMapList{})
	if !apierrors.IsResourceExpired(err) {
		t.Fatalf("want 410 Expired, got %v", err)
	}
	// Exact reads of a compacted revision are expired too.
	err = store.GetList(ctx, cfg.ResourcePrefix, ListOptions{Recursive: true, ResourceVersion: first.ResourceVersion,
		ResourceVersionMatch: metav1.ResourceVersionMatchExact}, &corev1.ConfigMapList{})
	if !apierrors.IsResourceExpired(err) {
		t.Fatalf("exact compacted: want 410 Expired, got %v", err)
	}
}

func TestStoreListSelectors(t *testing.T) {
	ctx := testContext(t)
	cfg := testConfig(t)
	store := NewStore(testClient, cfg)
	createConfigMaps(t, store, cfg, "ns", 50, func(i int) map[string]string {
		if i%5 == 0 {
			return map[string]string{"tier": "gold"}
		}
		return map[string]string{"tier": "bronze"}
	})
	gold := labels.SelectorFromSet(labels.Set{"tier": "gold"})
	all := &corev1.ConfigMapList{}
	if err := store.GetList(ctx, cfg.ResourcePrefix, ListOptions{Recursive: true, Predicate: SelectionPredicate{Label: gold}}, all); err != nil {
		t.Fatal(err)
	}
	if len(all.Items) != 10 {
		t.Fatalf("label selector: %d items, want 10", len(all.Items))
	}
	// Paginated with a selector: pages fill up to Limit matches.
	var names []string
	token := ""
	for range 10 {
		page := &corev1.ConfigMapList{}
		opts := ListOptions{Recursive: true, Predicate: SelectionPredicate{Label: gold, Limit: 4, Continue: token}}
		if err := store.GetList(ctx, cfg.ResourcePrefix, opts, page); err != nil {
			t.Fatal(err)
		}
		if page.Continue != "" && len(page.Items) != 4 {
			t.Fatalf("non-final page has %d items", len(page.Items))
		}
		if page.RemainingItemCount != nil {
			t.Fatal("remainingItemCount set with a selector")
		}
		for _, cm := range page.Items {
			names = append(names, cm.Name)
		}
		if token = page.Continue; token == "" {
			break
		}
	}
	if len(names) != 10 || names[0] != "cm-00000" || names[9] != "cm-00045" {
		t.Fatalf("paged gold names: %v", names)
	}
	byName := &corev1.ConfigMapList{}
	field := fields.OneTermEqualSelector("metadata.name", "cm-00007")
	if err := store.GetList(ctx, cfg.ResourcePrefix, ListOptions{Recursive: true, Predicate: SelectionPredicate{Field: field}}, byName); err != nil {
		t.Fatal(err)
	}
	if len(byName.Items) != 1 || byName.Items[0].Name != "cm-00007" {
		t.Fatalf("field selector: %+v", byName.Items)
	}
}

func TestStoreListResourceVersions(t *testing.T) {
	ctx := testContext(t)
	cfg := testConfig(t)
	store := NewStore(testClient, cfg)
	createConfigMaps(t, store, cfg, "ns", 3, nil)
	current, err := store.CurrentRevision(ctx)
	if err != nil {
		t.Fatal(err)
	}
	list := &corev1.ConfigMapList{}
	if err := store.GetList(ctx, cfg.ResourcePrefix, ListOptions{Recursive: true}, list); err != nil {
		t.Fatal(err)
	}
	if rv, _ := strconv.ParseInt(list.ResourceVersion, 10, 64); rv < current || len(list.Items) != 3 {
		t.Fatalf("list rv %s < current %d or %d items", list.ResourceVersion, current, len(list.Items))
	}
	// An exact read of an earlier revision sees the earlier state.
	exactRV := list.Items[1].ResourceVersion
	exact := &corev1.ConfigMapList{}
	if err := store.GetList(ctx, cfg.ResourcePrefix, ListOptions{Recursive: true, ResourceVersion: exactRV,
		ResourceVersionMatch: metav1.ResourceVersionMatchExact}, exact); err != nil {
		t.Fatal(err)
	}
	if len(exact.Items) != 2 || exact.ResourceVersion != exactRV {
		t.Fatalf("exact list at %s: %d items rv %s", exactRV, len(exact.Items), exact.ResourceVersion)
	}
	tooLarge := strconv.FormatInt(current+1_000_000, 10)
	err = store.GetList(ctx, cfg.ResourcePrefix, ListOptions{Recursive: true, ResourceVersion: tooLarge,
		ResourceVersionMatch: metav1.ResourceVersionMatchNotOlderThan}, &corev1.ConfigMapList{})
	if !apierrors.HasStatusCause(err, metav1.CauseTypeResourceVersionTooLarge) {
		t.Fatalf("future rv: want TooLargeResourceVersion, got %v", err)
	}
}

func TestStoreTTL(t *testing.T) {
	ctx := testContext(t)
	cfg := testConfig(t)
	store := NewStore(testClient, cfg)
	for _, name := range []string{"e1", "e2"} {
		if err := store.Create(ctx, objectKey(cfg, "ns", name), newConfigMap("ns", name, nil), nil, 30); err != nil {
			t.Fatal(err)
		}
	}
	r1, _ := testClient.Get(ctx, objectKey(cfg, "ns", "e1"))
	r2, _ := testClient.Get(ctx, objectKey(cfg, "ns", "e2"))
	if r1.Kvs[0].Lease == 0 || r1.Kvs[0].Lease != r2.Kvs[0].Lease {
		t.Fatalf("leases %d and %d: want one shared lease", r1.Kvs[0].Lease, r2.Kvs[0].Lease)
	}
	// Updates keep the lease.
	err := store.GuaranteedUpdate(ctx, objectKey(cfg, "ns", "e1"), &corev1.ConfigMap{}, false, nil, func(in runtime.Object) (runtime.Object, error) {
		cm := in.(*corev1.ConfigMap).DeepCopy()
		cm.Data = map[string]string{"count": "2"}
		return cm, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	r1, _ = testClient.Get(ctx, objectKey(cfg, "ns", "e1"))
	if r1.Kvs[0].Lease != r2.Kvs[0].Lease {
		t.Fatal("update dropped the lease")
	}
}

// nextEvent waits (bounded) for one event.
func nextEvent(t *testing.T, w watch.Interface) watch.Event {
	t.Helper()
	select {
	case ev, ok := <-w.ResultChan():
		if !ok {
			t.Fatal("watch closed")
		}
		return ev
	case <-time.After(10 * time.Second):
		t.Fatal("no watch event within 10s")
	}
	return watch.Event{}
}

func expectEvent(t *testing.T, w watch.Interface, typ watch.EventType, name string) *corev1.ConfigMap {
	t.Helper()
	ev := nextEvent(t, w)
	cm, ok := ev.Object.(*corev1.ConfigMap)
	if ev.Type != typ || !ok || cm.Name != name {
		t.Fatalf("got %s %#v, want %s %s", ev.Type, ev.Object, typ, name)
	}
	return cm
}

func TestStoreWatch(t *testing.T) {
	ctx := testContext(t)
	cfg := testConfig(t)
	store := NewStore(testClient, cfg)
	createConfigMaps(t, store, cfg, "ns", 2, nil)

	w, err := store.Watch(ctx, cfg.ResourcePrefix, ListOptions{Recursive: true, ResourceVersion: "0"})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	expectEvent(t, w, watch.Added, "cm-00000")
	expectEvent(t, w, watch.Added, "cm-00001")

	gold := labels.SelectorFromSet(labels.Set{"tier": "gold"})
	filtered, err := store.Watch(ctx, cfg.ResourcePrefix, ListOptions{Recursive: true, ResourceVersion: "0",
		Predicate: SelectionPredicate{Label: gold}})
	if err != nil {
		t.Fatal(err)
	}
	defer filtered.Stop()

	key := objectKey(cfg, "ns", "cm-00000")
	setTier := func(tier string) {
		err := store.GuaranteedUpdate(ctx, key, &corev1.ConfigMap{}, false, nil, func(in runtime.Object) (runtime.Object, error) {
			cm := in.(*corev1.ConfigMap).DeepCopy()
			cm.Labels = map[string]string{"tier": tier}
			return cm, nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	setTier("gold")
	setTier("bronze")
	deleted := &corev1.ConfigMap{}
	if err := store.Delete(ctx, key, deleted, nil, nil); err != nil {
		t.Fatal(err)
	}

	expectEvent(t, w, watch.Modified, "cm-00000")
	expectEvent(t, w, watch.Modified, "cm-00000")
	gone := expectEvent(t, w, watch.Deleted, "cm-00000")
	if gone.ResourceVersion != deleted.ResourceVersion {
		t.Fatalf("DELETED rv %s, deletion revision %s", gone.ResourceVersion, deleted.ResourceVersion)
	}
	// The filtered watch sees the transitions in and out of the selector.
	expectEvent(t, filtered, watch.Added, "cm-00000")
	expectEvent(t, filtered, watch.Deleted, "cm-00000")

	// Watching from a compacted revision gives an in-band 410.
	if _, err := CompactNow(ctx, testClient); err != nil {
		t.Fatal(err)
	}
	old, err := store.Watch(ctx, cfg.ResourcePrefix, ListOptions{Recursive: true, ResourceVersion: "1"})
	if err != nil {
		t.Fatal(err)
	}
	defer old.Stop()
	ev := nextEvent(t, old)
	status, ok := ev.Object.(*metav1.Status)
	if ev.Type != watch.Error || !ok || status.Code != 410 || status.Reason != metav1.StatusReasonExpired {
		t.Fatalf("compacted watch: %s %#v", ev.Type, ev.Object)
	}
}

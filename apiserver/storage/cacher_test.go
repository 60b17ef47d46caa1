package storage

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	goruntime "runtime"
	"strconv"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
)

func newTestCacher(t testing.TB, cfg Config, opts CacherOptions) *Cacher {
	t.Helper()
	c, err := NewCacher(NewStore(testClient, cfg), cfg, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Stop)
	return c
}

// newReadyTestCacher is newTestCacher once its initial list is done, so
// later writes reach it as events (in its ring), not inside that list.
func newReadyTestCacher(t testing.TB, cfg Config, opts CacherOptions) *Cacher {
	t.Helper()
	c := newTestCacher(t, cfg, opts)
	select {
	case <-c.ready:
	case <-time.After(30 * time.Second):
		t.Fatal("watch cache not ready after 30s")
	}
	return c
}

func mustRV(t testing.TB, rv string) int64 {
	t.Helper()
	n, err := strconv.ParseInt(rv, 10, 64)
	if err != nil {
		t.Fatalf("resourceVersion %q: %v", rv, err)
	}
	return n
}

func TestCacherReads(t *testing.T) {
	ctx := testContext(t)
	cfg := testConfig(t)
	createConfigMaps(t, NewStore(testClient, cfg), cfg, "ns", 5, func(i int) map[string]string {
		return map[string]string{"even": strconv.FormatBool(i%2 == 0)}
	})
	cacher := newTestCacher(t, cfg, CacherOptions{})

	list := &corev1.ConfigMapList{}
	if err := cacher.GetList(ctx, cfg.ResourcePrefix, ListOptions{Recursive: true, ResourceVersion: "0"}, list); err != nil {
		t.Fatal(err)
	}
	if len(list.Items) != 5 || list.Items[0].Name != "cm-00000" || list.Items[4].Name != "cm-00004" {
		t.Fatalf("RV=0 list: %d items", len(list.Items))
	}

	// A consistent list right after a write sees the write.
	created := &corev1.ConfigMap{}
	if err := cacher.Create(ctx, objectKey(cfg, "ns", "new"), newConfigMap("ns", "new", nil), created, 0); err != nil {
		t.Fatal(err)
	}
	consistent := &corev1.ConfigMapList{}
	if err := cacher.GetList(ctx, cfg.ResourcePrefix, ListOptions{Recursive: true}, consistent); err != nil {
		t.Fatal(err)
	}
	if len(consistent.Items) != 6 || mustRV(t, consistent.ResourceVersion) < mustRV(t, created.ResourceVersion) {
		t.Fatalf("consistent list: %d items at %s, created at %s", len(consistent.Items), consistent.ResourceVersion, created.ResourceVersion)
	}

	got := &corev1.ConfigMap{}
	if err := cacher.Get(ctx, objectKey(cfg, "ns", "new"), GetOptions{ResourceVersion: created.ResourceVersion}, got); err != nil {
		t.Fatal(err)
	}
	if got.Name != "new" || got.ResourceVersion != created.ResourceVersion {
		t.Fatalf("get not older than: %+v", got)
	}
	// Get returns a copy: changing it leaves the cache alone.
	got.Labels = map[string]string{"mutated": "yes"}
	again := &corev1.ConfigMap{}
	if err := cacher.Get(ctx, objectKey(cfg, "ns", "new"), GetOptions{ResourceVersion: "0"}, again); err != nil {
		t.Fatal(err)
	}
	if again.Labels["mutated"] != "" {
		t.Fatal("Get handed out the cached object")
	}
	if err := cacher.Get(ctx, objectKey(cfg, "ns", "absent"), GetOptions{ResourceVersion: "0"}, &corev1.ConfigMap{}); !apierrors.IsNotFound(err) {
		t.Fatalf("absent: want NotFound, got %v", err)
	}

	even := &corev1.ConfigMapList{}
	pred := SelectionPredicate{Label: labels.SelectorFromSet(labels.Set{"even": "true"})}
	if err := cacher.GetList(ctx, cfg.ResourcePrefix+"/ns", ListOptions{Recursive: true, ResourceVersion: "0", Predicate: pred}, even); err != nil {
		t.Fatal(err)
	}
	if len(even.Items) != 3 {
		t.Fatalf("label selector from cache: %d items, want 3", len(even.Items))
	}

	future := strconv.FormatInt(mustRV(t, created.ResourceVersion)+1_000_000, 10)
	quick := newTestCacher(t, cfg, CacherOptions{FreshnessTimeout: 200 * time.Millisecond})
	err := quick.GetList(ctx, cfg.ResourcePrefix, ListOptions{Recursive: true, ResourceVersion: future}, &corev1.ConfigMapList{})
	if !apierrors.HasStatusCause(err, metav1.CauseTypeResourceVersionTooLarge) {
		t.Fatalf("future RV: want too large, got %v", err)
	}
}

func TestCacherConsistentListOfQuietResourceUsesProgress(t *testing.T) {
	ctx := testContext(t)
	cfg := testConfig(t)
	cacher := newTestCacher(t, cfg, CacherOptions{})
	if err := cacher.GetList(ctx, cfg.ResourcePrefix, ListOptions{Recursive: true, ResourceVersion: "0"}, &corev1.ConfigMapList{}); err != nil {
		t.Fatal(err)
	}
	// A write elsewhere moves etcd's revision but sends this prefix nothing.
	resp, err := testClient.Put(ctx, cfg.ResourcePrefix+"-elsewhere/x", "y")
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	if err := cacher.GetList(ctx, cfg.ResourcePrefix, ListOptions{Recursive: true}, &corev1.ConfigMapList{}); err != nil {
		t.Fatal(err)
	}
	if cacher.Revision() < resp.Header.Revision {
		t.Fatalf("cache at %d after a consistent list, etcd write at %d (fell back to etcd after %v)",
			cacher.Revision(), resp.Header.Revision, time.Since(start))
	}
}

func updateData(t *testing.T, s Interface, key, value string) *corev1.ConfigMap {
	t.Helper()
	out := &corev1.ConfigMap{}
	err := s.GuaranteedUpdate(context.Background(), key, out, false, nil, func(in runtime.Object) (runtime.Object, error) {
		cm := in.(*corev1.ConfigMap).DeepCopy()
		cm.Data = map[string]string{"v": value}
		return cm, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func TestCacherWatchFromResourceVersion(t *testing.T) {
	ctx := testContext(t)
	cfg := testConfig(t)
	cacher := newReadyTestCacher(t, cfg, CacherOptions{})
	key := objectKey(cfg, "ns", "w")
	created := &corev1.ConfigMap{}
	if err := cacher.Create(ctx, key, newConfigMap("ns", "w", nil), created, 0); err != nil {
		t.Fatal(err)
	}
	u1 := updateData(t, cacher, key, "1")
	u2 := updateData(t, cacher, key, "2")
	deleted := &corev1.ConfigMap{}
	if err := cacher.Delete(ctx, key, deleted, nil, nil); err != nil {
		t.Fatal(err)
	}

	// Starting at the create replays what came after it, in order.
	w, err := cacher.Watch(ctx, cfg.ResourcePrefix, ListOptions{Recursive: true, ResourceVersion: created.ResourceVersion})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	if got := expectEvent(t, w, watch.Modified, "w"); got.ResourceVersion != u1.ResourceVersion || got.Data["v"] != "1" {
		t.Fatalf("first modification: %+v", got)
	}
	if got := expectEvent(t, w, watch.Modified, "w"); got.ResourceVersion != u2.ResourceVersion {
		t.Fatalf("second modification at %s, want %s", got.ResourceVersion, u2.ResourceVersion)
	}
	if got := expectEvent(t, w, watch.Deleted, "w"); got.ResourceVersion != deleted.ResourceVersion {
		t.Fatalf("deletion at %s, want %s", got.ResourceVersion, deleted.ResourceVersion)
	}
	// Live events follow the replay.
	if err := cacher.Create(ctx, key, newConfigMap("ns", "w", nil), nil, 0); err != nil {
		t.Fatal(err)
	}
	expectEvent(t, w, watch.Added, "w")
}

func TestCacherWatchOlderThanRingIsExpired(t *testing.T) {
	ctx := testContext(t)
	cfg := testConfig(t)
	cacher := newReadyTestCacher(t, cfg, CacherOptions{EventRingSize: 4})
	first := &corev1.ConfigMap{}
	if err := cacher.Create(ctx, objectKey(cfg, "ns", "first"), newConfigMap("ns", "first", nil), first, 0); err != nil {
		t.Fatal(err)
	}
	createConfigMaps(t, cacher, cfg, "ns", 10, nil)
	// Make sure the cache has seen all ten.
	if err := cacher.GetList(ctx, cfg.ResourcePrefix, ListOptions{Recursive: true}, &corev1.ConfigMapList{}); err != nil {
		t.Fatal(err)
	}
	_, err := cacher.Watch(ctx, cfg.ResourcePrefix, ListOptions{Recursive: true, ResourceVersion: first.ResourceVersion})
	if !apierrors.IsResourceExpired(err) && !apierrors.IsGone(err) {
		t.Fatalf("watch before the ring: want 410, got %v", err)
	}
	// The newest revision in the ring still works.
	recent, err := cacher.Watch(ctx, cfg.ResourcePrefix, ListOptions{Recursive: true, ResourceVersion: strconv.FormatInt(cacher.Revision()-2, 10)})
	if err != nil {
		t.Fatal(err)
	}
	defer recent.Stop()
	expectEvent(t, recent, watch.Added, "cm-00008")
	expectEvent(t, recent, watch.Added, "cm-00009")
}

// The ring starts small and grows: a watch can resume from any event up to
// EventRingSize back, also when the ring wrapped while growing.
func TestCacherRingGrowsToEventRingSize(t *testing.T) {
	ctx := testContext(t)
	cfg := testConfig(t)
	const size = 4 * initialRingSize
	cacher := newReadyTestCacher(t, cfg, CacherOptions{EventRingSize: size})
	first := &corev1.ConfigMap{}
	if err := cacher.Create(ctx, objectKey(cfg, "ns", "first"), newConfigMap("ns", "first", nil), first, 0); err != nil {
		t.Fatal(err)
	}
	createConfigMaps(t, cacher, cfg, "ns", size-1, nil) // exactly fills the grown ring
	if err := cacher.GetList(ctx, cfg.ResourcePrefix, ListOptions{Recursive: true}, &corev1.ConfigMapList{}); err != nil {
		t.Fatal(err)
	}
	// Every event is still there: resuming just before the first replays all.
	firstRev, _ := strconv.ParseInt(first.ResourceVersion, 10, 64)
	w, err := cacher.Watch(ctx, cfg.ResourcePrefix, ListOptions{Recursive: true, ResourceVersion: strconv.FormatInt(firstRev, 10)})
	if err != nil {
		t.Fatalf("resume within the grown ring: %v", err)
	}
	for i := range size - 1 {
		expectEvent(t, w, watch.Added, fmt.Sprintf("cm-%05d", i))
	}
	w.Stop()
	// One more event pushes the oldest out: its revision is now too old.
	createConfigMaps(t, cacher, cfg, "other", 1, nil)
	if err := cacher.GetList(ctx, cfg.ResourcePrefix, ListOptions{Recursive: true}, &corev1.ConfigMapList{}); err != nil {
		t.Fatal(err)
	}
	_, err = cacher.Watch(ctx, cfg.ResourcePrefix, ListOptions{Recursive: true, ResourceVersion: strconv.FormatInt(firstRev-1, 10)})
	if !apierrors.IsResourceExpired(err) && !apierrors.IsGone(err) {
		t.Fatalf("watch before the full ring: want 410, got %v", err)
	}
}

func TestCacherWatchersShareOneEtcdWatch(t *testing.T) {
	ctx := testContext(t)
	cfg := testConfig(t)
	cacher := newTestCacher(t, cfg, CacherOptions{})
	var watchers []watch.Interface
	for range 10 {
		w, err := cacher.Watch(ctx, cfg.ResourcePrefix, ListOptions{Recursive: true, ResourceVersion: "0"})
		if err != nil {
			t.Fatal(err)
		}
		defer w.Stop()
		watchers = append(watchers, w)
	}
	if err := cacher.Create(ctx, objectKey(cfg, "ns", "shared"), newConfigMap("ns", "shared", nil), nil, 0); err != nil {
		t.Fatal(err)
	}
	for _, w := range watchers {
		expectEvent(t, w, watch.Added, "shared")
	}
	if n := cacher.EtcdListCount(); n != 1 {
		t.Fatalf("%d etcd lists for 10 watchers, want 1", n)
	}
	if n := cacher.WatcherCount(); n != 10 {
		t.Fatalf("WatcherCount = %d, want 10", n)
	}
}

func TestCacherWatchSelectorTransitions(t *testing.T) {
	ctx := testContext(t)
	cfg := testConfig(t)
	cacher := newTestCacher(t, cfg, CacherOptions{})
	key := objectKey(cfg, "ns", "t")
	if err := cacher.Create(ctx, key, newConfigMap("ns", "t", nil), nil, 0); err != nil {
		t.Fatal(err)
	}
	pred := SelectionPredicate{Label: labels.SelectorFromSet(labels.Set{"tier": "gold"})}
	w, err := cacher.Watch(ctx, cfg.ResourcePrefix, ListOptions{Recursive: true, Predicate: pred})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	setTier := func(tier string) string {
		out := &corev1.ConfigMap{}
		err := cacher.GuaranteedUpdate(ctx, key, out, false, nil, func(in runtime.Object) (runtime.Object, error) {
			cm := in.(*corev1.ConfigMap).DeepCopy()
			cm.Labels = map[string]string{"tier": tier}
			return cm, nil
		})
		if err != nil {
			t.Fatal(err)
		}
		return out.ResourceVersion
	}
	setTier("gold")
	leftRV := setTier("gold2")
	setTier("bronze")
	setTier("gold")
	expectEvent(t, w, watch.Added, "t")
	// Relabelled to gold2 then bronze: only leaving the selector shows, as
	// the last matching state at the revision it left.
	if got := expectEvent(t, w, watch.Deleted, "t"); got.Labels["tier"] != "gold" || got.ResourceVersion != leftRV {
		t.Fatalf("deleted on leaving the selector: %+v, left at %s", got, leftRV)
	}
	expectEvent(t, w, watch.Added, "t")
}

func TestCacherBookmarks(t *testing.T) {
	ctx := testContext(t)
	cfg := testConfig(t)
	cacher := newTestCacher(t, cfg, CacherOptions{BookmarkInterval: 50 * time.Millisecond})
	created := &corev1.ConfigMap{}
	if err := cacher.Create(ctx, objectKey(cfg, "ns", "b"), newConfigMap("ns", "b", nil), created, 0); err != nil {
		t.Fatal(err)
	}
	w, err := cacher.Watch(ctx, cfg.ResourcePrefix, ListOptions{Recursive: true, ResourceVersion: created.ResourceVersion, ProgressNotify: true})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	ev := nextEvent(t, w)
	cm, ok := ev.Object.(*corev1.ConfigMap)
	if ev.Type != watch.Bookmark || !ok || mustRV(t, cm.ResourceVersion) < mustRV(t, created.ResourceVersion) || cm.Name != "" {
		t.Fatalf("want a bookmark at >= %s, got %s %#v", created.ResourceVersion, ev.Type, ev.Object)
	}
	// Watchers that did not ask get none.
	plain, err := cacher.Watch(ctx, cfg.ResourcePrefix, ListOptions{Recursive: true, ResourceVersion: created.ResourceVersion})
	if err != nil {
		t.Fatal(err)
	}
	defer plain.Stop()
	select {
	case ev := <-plain.ResultChan():
		t.Fatalf("unexpected %s event without bookmarks", ev.Type)
	case <-time.After(200 * time.Millisecond):
	}
}

func TestCacherSendInitialEvents(t *testing.T) {
	ctx := testContext(t)
	cfg := testConfig(t)
	createConfigMaps(t, NewStore(testClient, cfg), cfg, "ns", 3, nil)
	cacher := newTestCacher(t, cfg, CacherOptions{})
	yes := true
	w, err := cacher.Watch(ctx, cfg.ResourcePrefix, ListOptions{Recursive: true, SendInitialEvents: &yes,
		ResourceVersionMatch: metav1.ResourceVersionMatchNotOlderThan, ProgressNotify: true})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	for i := range 3 {
		expectEvent(t, w, watch.Added, "cm-0000"+strconv.Itoa(i))
	}
	ev := nextEvent(t, w)
	cm, ok := ev.Object.(*corev1.ConfigMap)
	if ev.Type != watch.Bookmark || !ok || cm.Annotations[metav1.InitialEventsAnnotationKey] != "true" || cm.ResourceVersion == "" {
		t.Fatalf("want the initial-events-end bookmark, got %s %#v", ev.Type, ev.Object)
	}
}

func TestCacherSurvivesCompaction(t *testing.T) {
	ctx := testContext(t)
	cfg := testConfig(t)
	cacher := newTestCacher(t, cfg, CacherOptions{})
	createConfigMaps(t, cacher, cfg, "ns", 3, nil)
	w, err := cacher.Watch(ctx, cfg.ResourcePrefix, ListOptions{Recursive: true})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	for i := range 3 {
		expectEvent(t, w, watch.Added, "cm-0000"+strconv.Itoa(i))
	}
	// An event through the watch shows the shared etcd watch has caught up:
	// one just started from a past revision is compacted along with it.
	if err := cacher.Create(ctx, objectKey(cfg, "ns", "before"), newConfigMap("ns", "before", nil), nil, 0); err != nil {
		t.Fatal(err)
	}
	expectEvent(t, w, watch.Added, "before")
	if _, err := CompactNow(ctx, testClient); err != nil {
		t.Fatal(err)
	}
	if err := cacher.Create(ctx, objectKey(cfg, "ns", "after"), newConfigMap("ns", "after", nil), nil, 0); err != nil {
		t.Fatal(err)
	}
	expectEvent(t, w, watch.Added, "after")
	fresh, err := cacher.Watch(ctx, cfg.ResourcePrefix, ListOptions{Recursive: true, ResourceVersion: "0"})
	if err != nil {
		t.Fatal(err)
	}
	defer fresh.Stop()
	expectEvent(t, fresh, watch.Added, "after") // key order: "after" < "before" < "cm-..."
	expectEvent(t, fresh, watch.Added, "before")
	for i := range 3 {
		expectEvent(t, fresh, watch.Added, "cm-0000"+strconv.Itoa(i))
	}

	// The recovery path of a compacted cacher watch: a relist keeps the
	// cache and tells existing watchers to start over with a 410.
	if _, err := cacher.relist(); err != nil {
		t.Fatal(err)
	}
	ev := nextEvent(t, fresh)
	if status, ok := ev.Object.(*metav1.Status); ev.Type != watch.Error || !ok || status.Code != 410 {
		t.Fatalf("after relist: want a 410 error event, got %s %#v", ev.Type, ev.Object)
	}
	if _, open := <-fresh.ResultChan(); open {
		t.Fatal("watcher still open after relist")
	}
	list := &corev1.ConfigMapList{}
	if err := cacher.GetList(ctx, cfg.ResourcePrefix, ListOptions{Recursive: true}, list); err != nil || len(list.Items) != 5 {
		t.Fatalf("list after relist: %d items, %v", len(list.Items), err)
	}
}

func TestCacherSlowWatcherIsTerminated(t *testing.T) {
	ctx := testContext(t)
	cfg := testConfig(t)
	const total = 200
	cacher := newTestCacher(t, cfg, CacherOptions{WatcherBufferSize: 50})
	slow, err := cacher.Watch(ctx, cfg.ResourcePrefix, ListOptions{Recursive: true})
	if err != nil {
		t.Fatal(err)
	}
	defer slow.Stop()
	fast, err := cacher.Watch(ctx, cfg.ResourcePrefix, ListOptions{Recursive: true})
	if err != nil {
		t.Fatal(err)
	}
	defer fast.Stop()
	received := make(chan int)
	go func() {
		n := 0
		for range fast.ResultChan() {
			if n++; n == total {
				break
			}
		}
		received <- n
	}()
	createConfigMaps(t, cacher, cfg, "ns", total, nil)
	select {
	case n := <-received:
		if n != total {
			t.Fatalf("fast watcher got %d events", n)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("fast watcher held up")
	}
	if n := cacher.WatcherCount(); n != 1 {
		t.Fatalf("WatcherCount = %d, want 1 (slow one terminated)", n)
	}
	// The slow watcher's channel ends after what was queued.
	for i := 0; ; i++ {
		if i > 60 {
			t.Fatal("slow watcher never closed")
		}
		if _, open := <-slow.ResultChan(); !open {
			break
		}
	}
}

// Events beyond a watcher's channel wait in its queue, in order, up to
// WatcherBufferSize in all; a watcher that falls further behind is
// terminated, and its channel ends after exactly what was queued.
func TestCacherWatcherOverflow(t *testing.T) {
	ctx := testContext(t)
	cfg := testConfig(t)
	const buffer = 100 // a channel of watcherChannelSize and the rest queued
	cacher := newReadyTestCacher(t, cfg, CacherOptions{WatcherBufferSize: buffer})
	behind, err := cacher.Watch(ctx, cfg.ResourcePrefix, ListOptions{Recursive: true})
	if err != nil {
		t.Fatal(err)
	}
	defer behind.Stop()
	tooFar, err := cacher.Watch(ctx, cfg.ResourcePrefix, ListOptions{Recursive: true})
	if err != nil {
		t.Fatal(err)
	}
	defer tooFar.Stop()
	createConfigMaps(t, cacher, cfg, "ns", buffer-10, nil)
	rev, err := cacher.CurrentRevision(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := cacher.waitForRevision(ctx, rev); err != nil {
		t.Fatal(err)
	}
	if n := len(behind.ResultChan()); n != watcherChannelSize {
		t.Fatalf("%d events in the channel, want %d", n, watcherChannelSize)
	}
	// behind catches up now; tooFar never reads until it is cut off.
	for i := range buffer - 10 {
		expectEvent(t, behind, watch.Added, fmt.Sprintf("cm-%05d", i))
	}
	for i := buffer - 10; i < buffer+10; i++ {
		name := fmt.Sprintf("cm-%05d", i)
		if err := cacher.Create(ctx, objectKey(cfg, "ns", name), newConfigMap("ns", name, nil), &corev1.ConfigMap{}, 0); err != nil {
			t.Fatal(err)
		}
		expectEvent(t, behind, watch.Added, fmt.Sprintf("cm-%05d", i))
	}
	if n := cacher.WatcherCount(); n != 1 {
		t.Fatalf("WatcherCount = %d, want 1 (the one too far behind terminated)", n)
	}
	for i := range buffer {
		expectEvent(t, tooFar, watch.Added, fmt.Sprintf("cm-%05d", i))
	}
	select {
	case ev, open := <-tooFar.ResultChan():
		if open {
			t.Fatalf("after the %d queued events: %s, want the channel closed", buffer, ev.Type)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("terminated watcher's channel never closed")
	}
}

func TestCacherStopClosesWatchers(t *testing.T) {
	ctx := testContext(t)
	cfg := testConfig(t)
	cacher, err := NewCacher(NewStore(testClient, cfg), cfg, CacherOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var watchers []watch.Interface
	for range 3 {
		w, err := cacher.Watch(ctx, cfg.ResourcePrefix, ListOptions{Recursive: true})
		if err != nil {
			t.Fatal(err)
		}
		watchers = append(watchers, w)
	}
	cacher.Stop()
	for _, w := range watchers {
		select {
		case _, open := <-w.ResultChan():
			if open {
				t.Fatal("event after Stop")
			}
		case <-time.After(5 * time.Second):
			t.Fatal("watcher not closed by Stop")
		}
	}
	if _, err := cacher.Watch(ctx, cfg.ResourcePrefix, ListOptions{Recursive: true, ResourceVersion: "0"}); err == nil {
		t.Fatal("Watch after Stop succeeded")
	}
}

// A list served from the cache hands out each item's protobuf message in
// list order (made once per object version, the same bytes every time);
// a list served from etcd does not.
func TestCacherEncodedItems(t *testing.T) {
	ctx := testContext(t)
	cfg := testConfig(t)
	cacher := newTestCacher(t, cfg, CacherOptions{})
	createConfigMaps(t, cacher, cfg, "ns", 3, nil)
	list := func(opts ListOptions) (*corev1.ConfigMapList, *EncodedItems) {
		t.Helper()
		enc := &EncodedItems{}
		out := &corev1.ConfigMapList{}
		opts.Recursive = true
		if err := cacher.GetList(WithEncodedItems(ctx, enc), cfg.ResourcePrefix, opts, out); err != nil {
			t.Fatal(err)
		}
		return out, enc
	}
	check := func(out *corev1.ConfigMapList, enc *EncodedItems) {
		t.Helper()
		if !enc.Valid || len(enc.Proto) != len(out.Items) {
			t.Fatalf("valid %v, %d messages for %d items", enc.Valid, len(enc.Proto), len(out.Items))
		}
		for i := range out.Items {
			want, _ := out.Items[i].Marshal()
			if !bytes.Equal(enc.Proto[i], want) {
				t.Errorf("item %d (%s): cached message differs from the item's", i, out.Items[i].Name)
			}
		}
	}
	out, first := list(ListOptions{})
	check(out, first)
	out, second := list(ListOptions{})
	check(out, second)
	if &first.Proto[0][0] != &second.Proto[0][0] {
		t.Error("the second list marshalled the object again")
	}
	// An update makes a new message for that object only.
	key := objectKey(cfg, "ns", "cm-00001")
	if err := cacher.GuaranteedUpdate(ctx, key, &corev1.ConfigMap{}, false, nil, func(in runtime.Object) (runtime.Object, error) {
		cm := in.(*corev1.ConfigMap).DeepCopy()
		cm.Data = map[string]string{"changed": "yes"}
		return cm, nil
	}); err != nil {
		t.Fatal(err)
	}
	out, third := list(ListOptions{}) // consistent: sees the update
	check(out, third)
	if out.Items[1].Data["changed"] != "yes" {
		t.Fatalf("update not listed: %v", out.Items[1].Data)
	}
	// Served from etcd (a page): nothing handed out.
	if _, enc := list(ListOptions{Predicate: SelectionPredicate{Limit: 2}}); enc.Valid {
		t.Error("a paginated list from etcd reported cached messages")
	}
}

// Caches on one client share the hub's etcd watch: an idle cache costs no
// goroutine, each gets its own changes, a quiet one is as current as the
// hub, and the hub goes with the last cache.
func TestCachersShareOneWatchHub(t *testing.T) {
	ctx := testContext(t)
	base := testConfig(t)
	root := hubRoot(base.ResourcePrefix)
	goDrain(func() {}) // the process's drainers are there before counting
	before := goruntime.NumGoroutine()
	const n = 50
	cachers := make([]*Cacher, n)
	configs := make([]Config, n)
	for i := range cachers {
		configs[i] = base
		configs[i].ResourcePrefix = fmt.Sprintf("%sres-%d", root, i)
		cachers[i] = newReadyTestCacher(t, configs[i], CacherOptions{})
	}
	time.Sleep(100 * time.Millisecond) // their list goroutines have ended
	if grown := goruntime.NumGoroutine() - before; grown > 10 {
		t.Errorf("%d idle caches added %d goroutines, want at most 10 (the hub's watch)", n, grown)
	}
	hubs.mu.Lock()
	h := hubs.byKey[hubKey{testClient, root}]
	hubs.mu.Unlock()
	if h == nil || h.refs != n {
		t.Fatalf("hub for %s: %+v, want one with %d subscribers", root, h, n)
	}

	// Each cache sees its own objects only.
	for _, i := range []int{3, 17} {
		w, err := cachers[i].Watch(ctx, configs[i].ResourcePrefix, ListOptions{Recursive: true, ResourceVersion: strconv.FormatInt(cachers[i].Revision(), 10)})
		if err != nil {
			t.Fatal(err)
		}
		defer w.Stop()
		name := fmt.Sprintf("only-%d", i)
		if err := cachers[i].Create(ctx, objectKey(configs[i], "ns", name), newConfigMap("ns", name, nil), nil, 0); err != nil {
			t.Fatal(err)
		}
		expectEvent(t, w, watch.Added, name)
	}
	list := &corev1.ConfigMapList{}
	if err := cachers[5].GetList(ctx, configs[5].ResourcePrefix, ListOptions{Recursive: true}, list); err != nil {
		t.Fatal(err)
	}
	if len(list.Items) != 0 {
		t.Fatalf("cache 5 lists %d objects of other caches", len(list.Items))
	}
	// A consistent list of a quiet cache answers at the latest revision.
	latest, err := cachers[5].CurrentRevision(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if rv := mustRV(t, list.ResourceVersion); rv < latest {
		t.Fatalf("consistent list of a quiet cache at %d, etcd at %d", rv, latest)
	}

	for _, c := range cachers {
		c.Stop()
	}
	hubs.mu.Lock()
	_, still := hubs.byKey[hubKey{testClient, root}]
	hubs.mu.Unlock()
	if still {
		t.Fatal("the hub outlived its last cache")
	}
}

// TestCacherCompactsWhatItDecodes: every object the cache holds, from its
// initial list or from events, went through Config.Compact once.
func TestCacherCompactsWhatItDecodes(t *testing.T) {
	ctx := testContext(t)
	cfg := testConfig(t)
	createConfigMaps(t, NewStore(testClient, cfg), cfg, "ns", 3, nil)
	cfg.Compact = func(obj runtime.Object) {
		cm := obj.(*corev1.ConfigMap)
		if cm.Annotations["compacted"] != "" {
			t.Errorf("%s compacted twice", cm.Name)
		}
		cm.Annotations = map[string]string{"compacted": "yes"}
	}
	cacher := newReadyTestCacher(t, cfg, CacherOptions{})
	w, err := cacher.Watch(ctx, cfg.ResourcePrefix, ListOptions{Recursive: true, ResourceVersion: "0"})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	if err := cacher.Create(ctx, objectKey(cfg, "ns", "new"), newConfigMap("ns", "new", nil), &corev1.ConfigMap{}, 0); err != nil {
		t.Fatal(err)
	}
	for seen := 0; seen < 4; seen++ {
		select {
		case ev := <-w.ResultChan():
			if cm := ev.Object.(*corev1.ConfigMap); cm.Annotations["compacted"] != "yes" {
				t.Errorf("watch event %s %s: not compacted", ev.Type, cm.Name)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("%d of 4 watch events", seen)
		}
	}
	list := &corev1.ConfigMapList{}
	if err := cacher.GetList(ctx, cfg.ResourcePrefix, ListOptions{Recursive: true}, list); err != nil {
		t.Fatal(err)
	}
	if len(list.Items) != 4 {
		t.Fatalf("list: %d items, want 4", len(list.Items))
	}
	for _, cm := range list.Items {
		if cm.Annotations["compacted"] != "yes" {
			t.Errorf("listed %s: not compacted", cm.Name)
		}
	}
}

// A JSON list hands out each item's JSON (encoding/json's) only when JSON
// lists of the resource recur: the first after a quiet window gets none
// and keeps nothing; the next keeps each listed object's JSON, reused by
// later lists until none came for the window, when all of it is dropped.
func TestCacherJSONItems(t *testing.T) {
	ctx := testContext(t)
	cfg := testConfig(t)
	const window = 300 * time.Millisecond
	cacher := newReadyTestCacher(t, cfg, CacherOptions{JSONListWindow: window})
	createConfigMaps(t, cacher, cfg, "ns", 3, func(i int) map[string]string {
		return map[string]string{"html": "<&>", "even": strconv.FormatBool(i%2 == 0)}
	})
	list := func(opts ListOptions) (*corev1.ConfigMapList, *EncodedItems) {
		t.Helper()
		enc := &EncodedItems{WantJSON: true}
		out := &corev1.ConfigMapList{}
		opts.Recursive = true
		if err := cacher.GetList(WithEncodedItems(ctx, enc), cfg.ResourcePrefix, opts, out); err != nil {
			t.Fatal(err)
		}
		if enc.Proto != nil {
			t.Error("a JSON list asked for protobuf messages")
		}
		return out, enc
	}
	check := func(out *corev1.ConfigMapList, enc *EncodedItems) {
		t.Helper()
		if !enc.Valid || len(enc.JSON) != len(out.Items) {
			t.Fatalf("valid %v, %d JSON items for %d items", enc.Valid, len(enc.JSON), len(out.Items))
		}
		for i := range out.Items {
			item := out.Items[i]
			item.TypeMeta = metav1.TypeMeta{} // list items are written without it
			want, _ := json.Marshal(&item)
			if !bytes.Equal(enc.JSON[i], want) {
				t.Errorf("item %d: cached JSON %s, want %s", i, enc.JSON[i], want)
			}
		}
	}
	if _, enc := list(ListOptions{}); enc.JSON != nil {
		t.Fatal("the first JSON list got item JSON")
	}
	if n, _ := cacher.KeptJSON(); n != 0 {
		t.Fatalf("the first JSON list kept %d objects' JSON", n)
	}
	out, second := list(ListOptions{})
	check(out, second)
	out, third := list(ListOptions{})
	check(out, third)
	if &second.JSON[0][0] != &third.JSON[0][0] {
		t.Error("the third list encoded the object again")
	}
	// A selection keeps (and gets) only what it lists.
	out, selected := list(ListOptions{Predicate: SelectionPredicate{Label: labels.SelectorFromSet(labels.Set{"even": "true"})}})
	check(out, selected)
	if len(out.Items) != 2 {
		t.Fatalf("selected %d items, want 2", len(out.Items))
	}
	if n, size := cacher.KeptJSON(); n != 3 || size == 0 {
		t.Fatalf("kept the JSON of %d objects (%d bytes), want 3", n, size)
	}
	// An update: the new version's JSON, the others' reused.
	key := objectKey(cfg, "ns", "cm-00001")
	if err := cacher.GuaranteedUpdate(ctx, key, &corev1.ConfigMap{}, false, nil, func(in runtime.Object) (runtime.Object, error) {
		cm := in.(*corev1.ConfigMap).DeepCopy()
		cm.Data = map[string]string{"changed": "yes"}
		return cm, nil
	}); err != nil {
		t.Fatal(err)
	}
	out, fourth := list(ListOptions{})
	check(out, fourth)
	if !bytes.Contains(fourth.JSON[1], []byte(`"changed":"yes"`)) || &fourth.JSON[0][0] != &third.JSON[0][0] {
		t.Errorf("after an update: %s", fourth.JSON[1])
	}
	// Served from etcd (a page): nothing handed out.
	if _, enc := list(ListOptions{Predicate: SelectionPredicate{Limit: 2}}); enc.Valid || enc.JSON != nil {
		t.Error("a paginated list from etcd reported cached JSON")
	}
	// Quiet for the window: all dropped, the next list is a first one again.
	deadline := time.Now().Add(5 * window)
	for n, _ := cacher.KeptJSON(); n > 0; n, _ = cacher.KeptJSON() {
		if time.Now().After(deadline) {
			t.Fatalf("%d objects keep their JSON %v after the last JSON list", n, 5*window)
		}
		time.Sleep(window / 10)
	}
	cacher.mu.RLock()
	for _, ev := range cacher.ring {
		for _, cached := range []*cachedObject{ev.cur, ev.prev} {
			if cached != nil && cached.json.Load() != nil {
				t.Errorf("an event's object (%s) keeps its JSON", ev.key)
			}
		}
	}
	cacher.mu.RUnlock()
	if _, enc := list(ListOptions{}); enc.JSON != nil {
		t.Error("the first JSON list after the window got item JSON")
	}
}

// A cached object's JSON for list items has no apiVersion and kind (kube
// writes a built-in kind's list items without them), and the shared cached
// object keeps its own.
func TestCachedItemJSONWithoutKind(t *testing.T) {
	cm := &corev1.ConfigMap{TypeMeta: metav1.TypeMeta{Kind: "ConfigMap", APIVersion: "v1"},
		ObjectMeta: metav1.ObjectMeta{Name: "a"}, Data: map[string]string{"k": "v"}}
	cached := &cachedObject{obj: cm}
	if got, want := string(cached.jsonEncoding()), `{"metadata":{"name":"a"},"data":{"k":"v"}}`; got != want {
		t.Fatalf("item JSON %s, want %s", got, want)
	}
	if cm.Kind != "ConfigMap" || cm.APIVersion != "v1" {
		t.Fatalf("the cached object was written to: %+v", cm.TypeMeta)
	}
}

// A watch read through ResultChan gets its events in a channel: what was
// queued before the first call moves into it, and initial events beyond
// its room wait in the queue and are relayed in order. Either way the initial events come first, and ending
// the watch's context, without Stop, unregisters it and closes its channel.
func TestCacherWatchDelivery(t *testing.T) {
	cfg := testConfig(t)
	createConfigMaps(t, NewStore(testClient, cfg), cfg, "ns", 3, nil)
	// A channel of 2: of the 3 initial events and their bookmark, 2 wait in the queue.
	cacher := newReadyTestCacher(t, cfg, CacherOptions{WatcherBufferSize: 2})
	for _, tc := range []struct {
		name    string
		initial bool
		relayed bool
	}{{"no initial events", false, false}, {"initial events relayed", true, true}} {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(testContext(t))
			defer cancel()
			opts := ListOptions{Recursive: true, SendInitialEvents: &tc.initial,
				ResourceVersionMatch: metav1.ResourceVersionMatchNotOlderThan}
			before := cacher.WatcherCount()
			w, err := cacher.Watch(ctx, cfg.ResourcePrefix, opts)
			if err != nil {
				t.Fatal(err)
			}
			if cacher.WatcherCount() != before+1 {
				t.Fatalf("WatcherCount = %d, want %d", cacher.WatcherCount(), before+1)
			}
			if n := len(w.ResultChan()); tc.initial && n != 2 {
				t.Fatalf("%d initial events in the channel, want 2 (the rest queued)", n)
			}
			if tc.initial {
				for i := range 3 {
					expectEvent(t, w, watch.Added, "cm-0000"+strconv.Itoa(i))
				}
				if ev := nextEvent(t, w); ev.Type != watch.Bookmark {
					t.Fatalf("got %s, want the initial-events-end bookmark", ev.Type)
				}
			}
			name := "live-" + strconv.FormatBool(tc.relayed)
			updateData(t, cacher, objectKey(cfg, "ns", "cm-00000"), name)
			rev, err := cacher.CurrentRevision(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if err := cacher.waitForRevision(ctx, rev); err != nil {
				t.Fatal(err)
			}
			if !tc.relayed {
				if n := len(w.ResultChan()); n != 1 {
					t.Fatalf("%d events queued in the result channel, want the 1 waiting", n)
				}
			}
			cm := expectEvent(t, w, watch.Modified, "cm-00000")
			if cm.Data["v"] != name {
				t.Fatalf("data = %v, want %q", cm.Data, name)
			}
			cancel()
			select {
			case _, open := <-w.ResultChan():
				if open {
					t.Fatal("event after the context ended")
				}
			case <-time.After(5 * time.Second):
				t.Fatal("watch not closed when its context ended")
			}
			if n := cacher.WatcherCount(); n != before {
				t.Fatalf("WatcherCount = %d after the context ended, want %d", n, before)
			}
		})
	}
}

// Pages of a list through the cache read etcd at the list's revision in
// ranges bounded by the cache's keys. When keys are created and deleted
// between pages, so that the cache's keys are no longer the revision's,
// the pages still hold exactly what the Store's unbounded reads give at
// that revision, with a continue token exactly while more remain.
func TestCacherPagesReadTheListRevision(t *testing.T) {
	ctx := testContext(t)
	cfg := testConfig(t)
	store := NewStore(testClient, cfg)
	createConfigMaps(t, store, cfg, "ns", 40, nil)
	cacher := newReadyTestCacher(t, cfg, CacherOptions{})
	names := func(l *corev1.ConfigMapList) []string {
		var out []string
		for _, cm := range l.Items {
			out = append(out, cm.Name)
		}
		return out
	}
	pages := func(s Interface, limit int64, between func(page int)) ([]string, []int64) {
		var all []string
		var remaining []int64
		token := ""
		for page := 0; ; page++ {
			l := &corev1.ConfigMapList{}
			if err := s.GetList(ctx, cfg.ResourcePrefix+"/ns", ListOptions{Recursive: true,
				Predicate: SelectionPredicate{Limit: limit, Continue: token}}, l); err != nil {
				t.Fatal(err)
			}
			if l.Continue != "" && int64(len(l.Items)) != limit {
				t.Fatalf("page %d: %d items with a continue token, want %d", page, len(l.Items), limit)
			}
			all = append(all, names(l)...)
			if l.RemainingItemCount != nil {
				remaining = append(remaining, *l.RemainingItemCount)
			}
			if token = l.Continue; token == "" {
				return all, remaining
			}
			if between != nil {
				between(page)
			}
		}
	}
	want, _ := pages(store, 7, nil)
	if len(want) != 40 {
		t.Fatalf("store listed %d, want 40", len(want))
	}
	got, remaining := pages(cacher, 7, nil)
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("cached pages %v, want %v", got, want)
	}
	// Quiet, the cache's keys are the revision's: remainingItemCount is exact.
	if fmt.Sprint(remaining) != "[33 26 19 12 5]" {
		t.Fatalf("remainingItemCount %v, want [33 26 19 12 5]", remaining)
	}
	// Between pages: ten new keys, among the next page's and later ones,
	// and four keys deleted, two of each. The list keeps its revision's keys and
	// counts: through a ring that holds every change since, and through
	// one too small for that (etcd counts instead).
	small := newReadyTestCacher(t, cfg, CacherOptions{EventRingSize: 4})
	for round, c := range []*Cacher{cacher, small} {
		want, wantRemaining := pages(store, 7, nil)
		got, remaining := pages(c, 7, func(page int) {
			if page != 0 {
				return
			}
			for i := range 10 {
				name := fmt.Sprintf("cm-%05d-%d-%d", []int{7 + 2*round, 25 + round}[i%2], round, i)
				if err := store.Create(ctx, objectKey(cfg, "ns", name), newConfigMap("ns", name, nil), nil, 0); err != nil {
					t.Fatal(err)
				}
			}
			for _, i := range []int{9 + 4*round, 10 + 4*round, 30 + 2*round, 31 + 2*round} {
				if err := store.Delete(ctx, objectKey(cfg, "ns", fmt.Sprintf("cm-%05d", i)), &corev1.ConfigMap{}, nil, nil); err != nil {
					t.Fatal(err)
				}
			}
			if err := c.waitConsistent(ctx); err != nil {
				t.Fatal(err)
			}
		})
		if fmt.Sprint(got) != fmt.Sprint(want) || fmt.Sprint(remaining) != fmt.Sprint(wantRemaining) {
			t.Fatalf("round %d, cached pages after changes %v, remaining %v; want %v, %v", round, got, remaining, want, wantRemaining)
		}
	}
	// A page ending where the cache's keys end is the last, with no token.
	got, _ = pages(cacher, 52, nil)
	if len(got) != 52 {
		t.Fatalf("one page of 52 listed %d", len(got))
	}
}

// takeEvents takes a Batched watch's events until it has want of them
// (waiting for its signal between takes), and whether it ended.
func takeEvents(t *testing.T, b Batched, want int) ([]watch.Event, bool) {
	t.Helper()
	var got []watch.Event
	deadline := time.After(10 * time.Second)
	for {
		var ended bool
		got, ended = b.Take(got)
		if len(got) >= want || ended {
			return got, ended
		}
		select {
		case <-b.Waiting():
		case <-deadline:
			t.Fatalf("took %d events in 10s, want %d", len(got), want)
		}
	}
}

func eventNames(evs []watch.Event) []string {
	var names []string
	for _, ev := range evs {
		name := string(ev.Type)
		if cm, ok := ev.Object.(*corev1.ConfigMap); ok && cm.Name != "" {
			name += " " + cm.Name
		}
		names = append(names, name)
	}
	return names
}

// A watch read with Take gets its initial events, then live ones, in
// order and each once; a bookmark never passes events still queued; a
// client that takes nothing is cut off after exactly its buffer, which it
// can still take, then sees the end.
func TestCacherBatchedWatch(t *testing.T) {
	ctx := testContext(t)
	cfg := testConfig(t)
	createConfigMaps(t, NewStore(testClient, cfg), cfg, "ns", 3, nil)
	const buffer = 20
	cacher := newReadyTestCacher(t, cfg, CacherOptions{WatcherBufferSize: buffer})
	yes := true
	wi, err := cacher.Watch(ctx, cfg.ResourcePrefix, ListOptions{Recursive: true, SendInitialEvents: &yes,
		ResourceVersionMatch: metav1.ResourceVersionMatchNotOlderThan, ProgressNotify: true})
	if err != nil {
		t.Fatal(err)
	}
	defer wi.Stop()
	b, ok := wi.(Batched)
	if !ok {
		t.Fatalf("%T is not Batched", wi)
	}
	select {
	case <-b.Waiting():
	case <-time.After(10 * time.Second):
		t.Fatal("no signal for the initial events")
	}
	got, ended := takeEvents(t, b, 4)
	want := "[ADDED cm-00000 ADDED cm-00001 ADDED cm-00002 BOOKMARK]"
	if fmt.Sprint(eventNames(got)) != want || ended {
		t.Fatalf("initial events %v (ended %v), want %s", eventNames(got), ended, want)
	}
	if again, _ := b.Take(nil); len(again) != 0 {
		t.Fatalf("taken twice: %v", eventNames(again))
	}

	// Live events, signalled, and a bookmark offered while they wait: it
	// waits for a later round, when nothing is queued.
	select {
	case <-b.Waiting(): // a signal from before the take
	default:
	}
	updateData(t, cacher, objectKey(cfg, "ns", "cm-00001"), "a")
	updateData(t, cacher, objectKey(cfg, "ns", "cm-00002"), "b")
	rev, err := cacher.CurrentRevision(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := cacher.waitForRevision(ctx, rev); err != nil {
		t.Fatal(err)
	}
	select {
	case <-b.Waiting():
	case <-time.After(10 * time.Second):
		t.Fatal("no signal for live events")
	}
	cacher.sendBookmarks()
	got, _ = takeEvents(t, b, 2)
	if want := "[MODIFIED cm-00001 MODIFIED cm-00002]"; fmt.Sprint(eventNames(got)) != want {
		t.Fatalf("live events %v, want %s", eventNames(got), want)
	}
	cacher.sendBookmarks()
	got, _ = takeEvents(t, b, 1)
	if len(got) != 1 || got[0].Type != watch.Bookmark {
		t.Fatalf("after the queue emptied: %v, want a bookmark", eventNames(got))
	}

	// Fall behind: its buffer (which counts the 4 initial events on top of
	// WatcherBufferSize) fills, and the next event cuts the watch off.
	limit := buffer + 4
	for i := range limit + 1 {
		updateData(t, cacher, objectKey(cfg, "ns", "cm-00000"), strconv.Itoa(i))
	}
	eventually(t, func() bool { return cacher.WatcherCount() == 0 })
	got, ended = b.Take(nil)
	if len(got) != limit || !ended {
		t.Fatalf("took %d events (ended %v) after being cut off, want the %d queued and the end", len(got), ended, limit)
	}
	for i, ev := range got {
		if cm := ev.Object.(*corev1.ConfigMap); ev.Type != watch.Modified || cm.Data["v"] != strconv.Itoa(i) {
			t.Fatalf("event %d: %s %v, want MODIFIED with value %d", i, ev.Type, cm.Data, i)
		}
	}

	// A client waiting with nothing queued is woken when its watch ends.
	if rev, err = cacher.CurrentRevision(ctx); err != nil {
		t.Fatal(err)
	}
	wi2, err := cacher.Watch(ctx, cfg.ResourcePrefix, ListOptions{Recursive: true, ResourceVersion: strconv.FormatInt(rev, 10)})
	if err != nil {
		t.Fatal(err)
	}
	b2 := wi2.(Batched)
	if got, ended := b2.Take(nil); len(got) != 0 || ended {
		t.Fatalf("a new watch from the current revision took %v (ended %v)", eventNames(got), ended)
	}
	select {
	case <-b2.Waiting():
		t.Fatal("signalled with nothing queued")
	default:
	}
	wi2.Stop()
	select {
	case <-b2.Waiting():
	case <-time.After(10 * time.Second):
		t.Fatal("no signal when the watch ended")
	}
	if got, ended := b2.Take(nil); len(got) != 0 || !ended {
		t.Fatalf("after Stop: %v (ended %v), want nothing and the end", eventNames(got), ended)
	}
}

func eventually(t *testing.T, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); !cond(); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("condition not met within 10s")
		}
	}
}

// A watcher read with Take keeps no large array once it has taken what
// filled it (a thousand watchers' initial events would stay in memory).
func TestBatchedWatcherDropsLargeQueue(t *testing.T) {
	w := &cacheWatcher{took: make(chan struct{}, 1), waiting: make(chan struct{}, 1), limit: 2000}
	w.queueInitial(make([]watch.Event, 1000))
	if got, _ := w.Take(nil); len(got) != 1000 {
		t.Fatalf("took %d, want 1000", len(got))
	}
	if cap(w.queue) != 0 {
		t.Fatalf("queue kept an array of %d after the take", cap(w.queue))
	}
	for range 3 {
		if !w.offer(watch.Event{Type: watch.Added}) {
			t.Fatal("offer refused")
		}
	}
	if got, _ := w.Take(nil); len(got) != 3 || cap(w.queue) == 0 {
		t.Fatalf("took %d (queue cap %d), want 3 and a small array kept", len(got), cap(w.queue))
	}
}

// The cache keeps each object's fields as values beside names its objects
// share; selectors must see exactly what the AttrFunc's sets say, fields
// an object lacks included.
func TestCacherFieldSelectors(t *testing.T) {
	ctx := testContext(t)
	cfg := testConfig(t)
	cfg.GetAttrs = func(obj runtime.Object) (labels.Set, fields.Set, error) {
		l, f, err := configMapAttrs(obj)
		if tier, ok := obj.(*corev1.ConfigMap).Data["tier"]; ok {
			f["data.tier"] = tier
		}
		return l, f, err
	}
	cacher := newReadyTestCacher(t, cfg, CacherOptions{})
	// In this order: objects decoded one after the other with the same
	// field names share them.
	for _, o := range []struct {
		name string
		data map[string]string
	}{{"plain", nil}, {"gold-1", map[string]string{"tier": "gold"}}, {"gold-2", map[string]string{"tier": "gold"}}, {"bronze", map[string]string{"tier": "bronze"}}} {
		if err := cacher.Create(ctx, objectKey(cfg, "ns", o.name), newConfigMap("ns", o.name, o.data), nil, 0); err != nil {
			t.Fatal(err)
		}
	}
	names := func(selector string) []string {
		t.Helper()
		sel, err := fields.ParseSelector(selector)
		if err != nil {
			t.Fatal(err)
		}
		list := &corev1.ConfigMapList{}
		opts := ListOptions{Recursive: true, Predicate: SelectionPredicate{Field: sel, GetAttrs: cfg.GetAttrs}}
		if err := cacher.GetList(ctx, cfg.ResourcePrefix, opts, list); err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, cm := range list.Items {
			out = append(out, cm.Name)
		}
		return out
	}
	for selector, want := range map[string]string{
		"data.tier=gold":                        "[gold-1 gold-2]",
		"data.tier!=gold":                       "[bronze plain]",
		"data.tier=":                            "[plain]",
		"metadata.name=bronze,data.tier=bronze": "[bronze]",
		"metadata.namespace=other":              "[]",
	} {
		if got := fmt.Sprint(names(selector)); got != want {
			t.Errorf("%s: got %s, want %s", selector, got, want)
		}
	}

	// Consecutive objects with the same field names share one slice of them.
	cacher.mu.RLock()
	gold1, gold2 := cacher.objects[objectKey(cfg, "ns", "gold-1")], cacher.objects[objectKey(cfg, "ns", "gold-2")]
	cacher.mu.RUnlock()
	if &gold1.fields.names[0] != &gold2.fields.names[0] {
		t.Errorf("gold-1 and gold-2 keep field names %v and %v apart", gold1.fields.names, gold2.fields.names)
	}

	// A watch follows an object in and out of a field selector.
	sel := fields.OneTermEqualSelector("data.tier", "gold")
	from := strconv.FormatInt(cacher.Revision(), 10)
	w, err := cacher.Watch(ctx, cfg.ResourcePrefix, ListOptions{Recursive: true, ResourceVersion: from, Predicate: SelectionPredicate{Field: sel, GetAttrs: cfg.GetAttrs}})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	setTier := func(name string, data map[string]string) {
		err := cacher.GuaranteedUpdate(ctx, objectKey(cfg, "ns", name), &corev1.ConfigMap{}, false, nil, func(in runtime.Object) (runtime.Object, error) {
			cm := in.(*corev1.ConfigMap).DeepCopy()
			cm.Data = data
			return cm, nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	setTier("plain", map[string]string{"tier": "gold"})
	setTier("gold-1", nil)
	expectEvent(t, w, watch.Added, "plain")
	expectEvent(t, w, watch.Deleted, "gold-1")
}

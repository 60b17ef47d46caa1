package controllers

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/retry"
	"k8s.io/client-go/util/workqueue"

	"github.com/devplane/devplane/apiserver/storage"
)

// gcIgnoredResources are never watched: events are numerous, short-lived
// and never owners (kube's GC ignores them too).
var gcIgnoredResources = map[schema.GroupResource]bool{
	{Group: "", Resource: "events"}:              true,
	{Group: "events.k8s.io", Resource: "events"}: true,
}

// gcWork is one queued task: attempt to delete (or finish deleting) the
// object, or orphan its dependents.
type gcWork struct {
	uid    types.UID
	orphan bool
}

// GarbageCollector deletes objects whose owners are gone, and carries out
// foreground and orphan deletion, for every resource the API serves
// (custom resources included: Resync re-reads discovery when CRDs change).
type GarbageCollector struct {
	metadata  metadata.Interface
	client    kubernetes.Interface
	reads     reads
	discovery discovery.DiscoveryInterface
	logger    *slog.Logger

	// DiscoveryInterval is how often resources are re-discovered (30s, as
	// kube-controller-manager). CRD changes call Resync at once, so only
	// aggregated APIs wait for it.
	DiscoveryInterval time.Duration

	graph    *dependencyGraph
	queue    workqueue.TypedRateLimitingInterface[gcWork]
	resync   chan struct{}
	synced   atomic.Bool
	monitors map[schema.GroupVersionResource]*gcMonitor

	mu sync.Mutex
	// kinds maps every discovered kind to its resource, for owner lookups.
	kinds map[schema.GroupKind]metav1.APIResource
	// absentOwners remembers UIDs confirmed gone: UIDs never come back,
	// so a thousand dependents of one deleted owner need one GET.
	absentOwners map[types.UID]struct{}
	// reported avoids one event per retry for an invalid owner reference.
	reported map[[2]types.UID]struct{}
}

type gcMonitor struct {
	hasSynced func() bool
	cancel    context.CancelFunc
	done      chan struct{}
}

// NewGarbageCollector builds the garbage collector. With local set, its
// monitors read the server's watch caches in-process.
func NewGarbageCollector(cfg *rest.Config, local Local, logger *slog.Logger) (*GarbageCollector, error) {
	c, err := clientsFor(cfg, local, "garbage-collector")
	if err != nil {
		return nil, err
	}
	return &GarbageCollector{
		metadata:          c.metadata,
		client:            c.client,
		reads:             c.reads,
		discovery:         c.client.Discovery(),
		logger:            loggerOr(logger, "garbage-collector"),
		DiscoveryInterval: 30 * time.Second,
		resync:            make(chan struct{}, 1),
	}, nil
}

func (gc *GarbageCollector) Name() string    { return "garbage-collector" }
func (gc *GarbageCollector) HasSynced() bool { return gc.synced.Load() }

// Resync asks for discovery to be re-read now (e.g. after a CRD changed).
func (gc *GarbageCollector) Resync() {
	select {
	case gc.resync <- struct{}{}:
	default:
	}
}

// Run builds the graph from every resource, then processes it until ctx
// ends. Objects whose owners vanished while devplane was stopped are
// found by the initial sync.
func (gc *GarbageCollector) Run(ctx context.Context) error {
	defer gc.synced.Store(false)
	gc.graph = newDependencyGraph()
	gc.monitors = map[schema.GroupVersionResource]*gcMonitor{}
	gc.kinds = map[schema.GroupKind]metav1.APIResource{}
	gc.absentOwners = map[types.UID]struct{}{}
	gc.reported = map[[2]types.UID]struct{}{}
	gc.queue = newQueue[gcWork]("garbage-collector", 5*time.Millisecond, 5*time.Second)
	defer gc.stopMonitors(nil)

	// Retry the first discovery until it works: nothing can be done before.
	for {
		if err := gc.syncMonitors(ctx); err == nil {
			break
		} else if ctx.Err() == nil {
			gc.logger.Warn("discovery failed, retrying", "err", err)
		}
		select {
		case <-ctx.Done():
			gc.queue.ShutDown()
			return nil
		case <-time.After(time.Second):
		}
	}
	if !gc.waitForMonitors(ctx, 30*time.Second) {
		gc.logger.Warn("not every resource synced; collecting anyway")
	}
	if ctx.Err() != nil {
		gc.queue.ShutDown()
		return nil
	}
	gc.synced.Store(true)
	// Dependents seen before their owners were enqueued as orphans-to-be;
	// re-check everything with owners now that the graph is complete.
	for _, n := range gc.graph.withOwners() {
		gc.queue.Add(gcWork{uid: n.uid})
	}

	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		gc.rediscoverLoop(ctx)
	}()
	runWorkers(ctx, gc.queue, 8, gc.logger, gc.process)
	wg.Wait()
	return nil
}

func (gc *GarbageCollector) rediscoverLoop(ctx context.Context) {
	ticker := time.NewTicker(gc.DiscoveryInterval)
	defer ticker.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-ticker.C:
		case <-gc.resync:
			gc.settle(ctx)
		}
		if err := gc.syncMonitors(ctx); err != nil && ctx.Err() == nil {
			gc.logger.Debug("rediscovery failed", "err", err)
		}
	}
}

// settle waits for resources to stop changing (no resync asked for
// 100ms, at most a second): applying hundreds of CRDs asks once per CRD,
// and each rediscovery reads every served resource.
func (gc *GarbageCollector) settle(ctx context.Context) {
	deadline := time.NewTimer(time.Second)
	defer deadline.Stop()
	for {
		quiet := time.NewTimer(100 * time.Millisecond)
		select {
		case <-ctx.Done():
		case <-deadline.C:
		case <-gc.resync:
			quiet.Stop()
			continue
		case <-quiet.C:
		}
		quiet.Stop()
		return
	}
}

// syncMonitors starts an informer for each new listable+watchable resource
// and stops the ones for resources no longer served.
func (gc *GarbageCollector) syncMonitors(ctx context.Context) error {
	all, err := discoverResources(gc.discovery, false)
	if all == nil {
		return err
	}
	kinds := map[schema.GroupKind]metav1.APIResource{}
	wanted := map[schema.GroupVersionResource]metav1.APIResource{}
	for gvr, r := range all {
		kinds[schema.GroupKind{Group: gvr.Group, Kind: r.Kind}] = r
		if hasVerb(r, "list") && hasVerb(r, "watch") && !gcIgnoredResources[gvr.GroupResource()] {
			wanted[gvr] = r
		}
	}
	gc.mu.Lock()
	gc.kinds = kinds
	gc.mu.Unlock()

	// A group whose discovery failed keeps its monitors: a passing error
	// must not look like every object in it was deleted.
	failed := map[schema.GroupVersion]bool{}
	if fe, ok := err.(*discovery.ErrGroupDiscoveryFailed); ok {
		for gv := range fe.Groups {
			failed[gv] = true
		}
	}
	var gone []schema.GroupVersionResource
	for gvr := range gc.monitors {
		if _, ok := wanted[gvr]; !ok && !failed[gvr.GroupVersion()] {
			gone = append(gone, gvr)
		}
	}
	gc.stopMonitors(gone)
	for gvr, r := range wanted {
		if _, ok := gc.monitors[gvr]; !ok {
			gc.startMonitor(ctx, gvr, r.Kind)
		}
	}
	return nil
}

func (gc *GarbageCollector) startMonitor(ctx context.Context, gvr schema.GroupVersionResource, kind string) {
	lr, local := gc.reads.lookup(gvr)
	if obs, ok := lr.(observable); local && ok {
		var synced atomic.Bool
		stop, ok := obs.Observe(&storage.Observer{
			Replace: func(objects []runtime.Object) {
				gc.replace(gvr, kind, objects)
				synced.Store(true)
			},
			Change: func(ev watch.Event) {
				if ev.Type == watch.Deleted {
					gc.forget(ev.Object)
				} else {
					gc.observe(gvr, kind, ev.Object)
				}
			},
		})
		if ok {
			done := make(chan struct{})
			close(done)
			gc.monitors[gvr] = &gcMonitor{hasSynced: synced.Load, cancel: stop, done: done}
			return
		}
	}
	if local {
		mctx, cancel := context.WithCancel(ctx)
		var synced atomic.Bool
		m := &gcMonitor{hasSynced: synced.Load, cancel: cancel, done: make(chan struct{})}
		gc.monitors[gvr] = m
		go func() {
			defer close(m.done)
			gc.runLocalMonitor(mctx, gvr, kind, lr, &synced)
		}()
		return
	}
	// An aggregated API: an informer over HTTP, as any client.
	informer := cache.NewSharedIndexInformer(gc.reads.metadataOnly(gvr), &metav1.PartialObjectMetadata{}, 0, cache.Indexers{})
	_, err := informer.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { gc.observe(gvr, kind, obj) },
		UpdateFunc: func(_, obj any) { gc.observe(gvr, kind, obj) },
		DeleteFunc: func(obj any) { gc.forget(obj) },
	})
	if err != nil {
		gc.logger.Error("cannot watch resource", "resource", gvr, "err", err)
		return
	}
	mctx, cancel := context.WithCancel(ctx)
	m := &gcMonitor{hasSynced: informer.HasSynced, cancel: cancel, done: make(chan struct{})}
	gc.monitors[gvr] = m
	go func() {
		defer close(m.done)
		informer.RunWithContext(mctx)
	}()
}

// observable is a local reader whose watch cache the graph can follow in
// place (registry.Store over a storage.Cacher): no watch, no goroutine per
// resource; hundreds of CRDs each add a resource to follow.
type observable interface {
	Observe(o *storage.Observer) (stop func(), ok bool)
}

// replace observes objects, all of gvr's there are, and forgets the
// graph's other objects of gvr.
func (gc *GarbageCollector) replace(gvr schema.GroupVersionResource, kind string, objects []runtime.Object) {
	present := make(map[types.UID]struct{}, len(objects))
	for _, obj := range objects {
		if acc, ok := obj.(metav1.Object); ok {
			present[acc.GetUID()] = struct{}{}
			gc.observe(gvr, kind, obj)
		}
	}
	for _, n := range gc.graph.nodesOf(gvr) {
		if _, ok := present[n.uid]; !ok {
			gc.forgetUID(n.uid)
		}
	}
}

// runLocalMonitor feeds the graph from one resource's watch cache, in
// process: a list, then a watch from its resourceVersion. The cache's
// objects are read in place (the graph copies what it keeps), so there is
// no informer, no second copy of every object and one goroutine per
// resource. When the watch ends (revision compacted, cache restarted) a
// fresh list follows, which also forgets what vanished in between.
func (gc *GarbageCollector) runLocalMonitor(ctx context.Context, gvr schema.GroupVersionResource, kind string, lr LocalReader, synced *atomic.Bool) {
	backoff := 10 * time.Millisecond
	for ctx.Err() == nil {
		rv, err := gc.relist(ctx, gvr, kind, lr)
		watched := time.Now()
		if err == nil {
			synced.Store(true)
			err = gc.watchFrom(ctx, gvr, kind, lr, rv)
		}
		if ctx.Err() != nil {
			return
		}
		if err == nil && time.Since(watched) > time.Second {
			backoff = 10 * time.Millisecond // a long watch ended: relist now
			continue
		}
		// An error, or a watch that ended at once: do not spin.
		gc.logger.Debug("monitor relisting", "resource", gvr, "err", err)
		select {
		case <-ctx.Done():
		case <-time.After(backoff):
		}
		backoff = min(2*backoff, 5*time.Second)
	}
}

// relist observes every object of gvr and forgets the graph's objects of
// gvr that are gone; it returns the list's resourceVersion.
func (gc *GarbageCollector) relist(ctx context.Context, gvr schema.GroupVersionResource, kind string, lr LocalReader) (string, error) {
	list, err := lr.List(ctx, metav1.NamespaceAll, metav1.ListOptions{ResourceVersion: "0"})
	if err != nil {
		return "", err
	}
	listMeta, err := meta.ListAccessor(list)
	if err != nil {
		return "", err
	}
	objects, err := meta.ExtractList(list)
	if err != nil {
		return "", err
	}
	gc.replace(gvr, kind, objects)
	return listMeta.GetResourceVersion(), nil
}

// watchFrom applies gvr's changes after rv until the watch ends: nil when
// it simply closed, an error when it reported one.
func (gc *GarbageCollector) watchFrom(ctx context.Context, gvr schema.GroupVersionResource, kind string, lr LocalReader, rv string) error {
	w, err := lr.Watch(ctx, metav1.NamespaceAll, metav1.ListOptions{ResourceVersion: rv, AllowWatchBookmarks: true})
	if err != nil {
		return err
	}
	defer w.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case ev, ok := <-w.ResultChan():
			if !ok {
				return nil
			}
			switch ev.Type {
			case watch.Added, watch.Modified:
				gc.observe(gvr, kind, ev.Object)
			case watch.Deleted:
				gc.forget(ev.Object)
			case watch.Error:
				return apierrors.FromObject(ev.Object)
			}
		}
	}
}

// stopMonitors stops the given monitors (all when gvrs is nil) and drops
// their objects from the graph, as if deleted (unless stopping the GC).
func (gc *GarbageCollector) stopMonitors(gvrs []schema.GroupVersionResource) {
	stopping := gvrs == nil
	if stopping {
		gvrs = slices.Collect(maps.Keys(gc.monitors))
	}
	for _, gvr := range gvrs {
		m := gc.monitors[gvr]
		m.cancel()
		<-m.done
		delete(gc.monitors, gvr)
		if !stopping {
			for _, n := range gc.graph.nodesOf(gvr) {
				gc.forgetUID(n.uid)
			}
		}
	}
}

func (gc *GarbageCollector) waitForMonitors(ctx context.Context, timeout time.Duration) bool {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var synced []cache.InformerSynced
	for _, m := range gc.monitors {
		synced = append(synced, m.hasSynced)
	}
	return waitForSync(ctx, synced...)
}

// observe records an added or updated object and queues what it implies.
func (gc *GarbageCollector) observe(gvr schema.GroupVersionResource, kind string, obj any) {
	accessor, ok := obj.(metav1.Object)
	if !ok {
		return
	}
	n := newObjectNode(gvr, kind, accessor)
	old := gc.graph.upsert(n)
	if n.orphaning {
		gc.queue.Add(gcWork{uid: n.uid, orphan: true})
	}
	if n.deletingDependents {
		gc.queue.Add(gcWork{uid: n.uid})
		for _, d := range gc.graph.dependentsOf(n.uid) {
			gc.queue.Add(gcWork{uid: d.uid})
		}
	}
	for _, ref := range n.owners {
		owner := gc.graph.get(ref.UID)
		if owner == nil || owner.deletingDependents || owner.namespace != n.namespace && owner.namespace != "" {
			gc.queue.Add(gcWork{uid: n.uid})
			break
		}
	}
	// A changed reference may unblock an owner deleting in the foreground.
	if old != nil {
		for _, ref := range old.owners {
			if owner := gc.graph.get(ref.UID); owner != nil && owner.deletingDependents {
				gc.queue.Add(gcWork{uid: owner.uid})
			}
		}
	}
}

func (gc *GarbageCollector) forget(obj any) {
	if tomb, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = tomb.Obj
	}
	if accessor, ok := obj.(metav1.Object); ok {
		gc.forgetUID(accessor.GetUID())
	}
}

// forgetUID drops a deleted object: its dependents may now be garbage and
// an owner deleting in the foreground may be unblocked.
func (gc *GarbageCollector) forgetUID(uid types.UID) {
	n := gc.graph.remove(uid)
	if n == nil {
		return
	}
	for _, d := range gc.graph.dependentsOf(uid) {
		gc.queue.Add(gcWork{uid: d.uid})
	}
	for _, ref := range n.owners {
		if owner := gc.graph.get(ref.UID); owner != nil && owner.deletingDependents {
			gc.queue.Add(gcWork{uid: owner.uid})
		}
	}
}

func (gc *GarbageCollector) process(ctx context.Context, w gcWork) error {
	n := gc.graph.get(w.uid)
	if n == nil {
		return nil
	}
	if w.orphan {
		return gc.orphanDependents(ctx, n)
	}
	return gc.attemptToDelete(ctx, n)
}

// ownerState is what a dependent's owner reference points at.
type ownerState int

const (
	ownerSolid   ownerState = iota // exists, not deleting in the foreground
	ownerWaiting                   // deleting in the foreground
	ownerAbsent                    // gone, never existed, or another object
)

// attemptToDelete deletes n if none of its owners remain, and finishes
// n's own foreground deletion when its blocking dependents are gone.
func (gc *GarbageCollector) attemptToDelete(ctx context.Context, n *objectNode) error {
	client := gc.metadata.Resource(n.gvr).Namespace(n.namespace)
	latest, err := client.Get(ctx, n.name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		gc.forgetUID(n.uid) // the watch will say so too; do not wait for it
		return nil
	}
	if err != nil {
		return err
	}
	if latest.UID != n.uid {
		return nil
	}
	n = newObjectNode(n.gvr, n.kind, latest)
	if n.deletingDependents {
		return gc.finishForeground(ctx, n)
	}
	if n.deleting || len(n.owners) == 0 {
		return nil
	}

	var solid, waiting, absent []metav1.OwnerReference
	for _, ref := range n.owners {
		state, err := gc.ownerState(ctx, n, ref)
		if err != nil {
			return err
		}
		switch state {
		case ownerSolid:
			solid = append(solid, ref)
		case ownerWaiting:
			waiting = append(waiting, ref)
		default:
			absent = append(absent, ref)
		}
	}
	switch {
	case len(solid) > 0:
		if len(absent)+len(waiting) == 0 {
			return nil
		}
		// Still owned: only drop the references that no longer hold it.
		drop := map[types.UID]bool{}
		for _, ref := range append(absent, waiting...) {
			drop[ref.UID] = true
		}
		return gc.patchOwnerRefs(ctx, n, func(refs []metav1.OwnerReference) []metav1.OwnerReference {
			return slices.DeleteFunc(refs, func(r metav1.OwnerReference) bool { return drop[r.UID] })
		})
	case len(waiting) > 0 && len(gc.graph.dependentsOf(n.uid)) > 0:
		// An owner deleting in the foreground waits for n, and n has its
		// own dependents: delete n in the foreground too, after unblocking
		// the owners so that a reference cycle cannot deadlock.
		unblock := map[types.UID]bool{}
		for _, ref := range waiting {
			unblock[ref.UID] = true
		}
		err := gc.patchOwnerRefs(ctx, n, func(refs []metav1.OwnerReference) []metav1.OwnerReference {
			for i := range refs {
				if unblock[refs[i].UID] && refs[i].BlockOwnerDeletion != nil && *refs[i].BlockOwnerDeletion {
					f := false
					refs[i].BlockOwnerDeletion = &f
				}
			}
			return refs
		})
		if err != nil {
			return err
		}
		return gc.deleteObject(ctx, n, metav1.DeletePropagationForeground)
	default:
		policy := metav1.DeletePropagationBackground
		if slices.Contains(latest.Finalizers, metav1.FinalizerOrphanDependents) {
			policy = metav1.DeletePropagationOrphan
		} else if slices.Contains(latest.Finalizers, metav1.FinalizerDeleteDependents) {
			policy = metav1.DeletePropagationForeground
		}
		gc.logger.Debug("deleting object whose owners are gone", "object", n.String(), "policy", policy)
		return gc.deleteObject(ctx, n, policy)
	}
}

// ownerState finds what ref (an owner reference of dependent) points at:
// the graph answers when it knows the owner, a live GET otherwise (the
// owner's informer may lag, or the owner never existed).
func (gc *GarbageCollector) ownerState(ctx context.Context, dependent *objectNode, ref metav1.OwnerReference) (ownerState, error) {
	gc.mu.Lock()
	_, known := gc.absentOwners[ref.UID]
	gc.mu.Unlock()
	if known {
		return ownerAbsent, nil
	}
	gv, err := schema.ParseGroupVersion(ref.APIVersion)
	if err != nil {
		return ownerAbsent, nil // an unparsable reference cannot name an owner
	}
	gk := schema.GroupKind{Group: gv.Group, Kind: ref.Kind}
	gc.mu.Lock()
	resource, found := gc.kinds[gk]
	gc.mu.Unlock()
	if !found {
		// Perhaps a custom resource not discovered yet: look again soon.
		gc.Resync()
		return 0, fmt.Errorf("owner kind %s of %s is not served", gk, dependent)
	}
	namespace := ""
	if resource.Namespaced {
		if dependent.namespace == "" {
			gc.reportInvalidNamespace(ctx, dependent, ref, "cluster-scoped dependent has a namespaced owner")
			return ownerAbsent, nil
		}
		namespace = dependent.namespace // owner references never cross namespaces
	}
	if owner := gc.graph.get(ref.UID); owner != nil {
		if owner.groupKind() == gk && owner.namespace == namespace {
			if owner.deletingDependents {
				return ownerWaiting, nil
			}
			return ownerSolid, nil
		}
		if owner.namespace != namespace {
			gc.reportInvalidNamespace(ctx, dependent, ref, fmt.Sprintf("ownerRef %s does not exist in namespace %q", describeRef(ref), dependent.namespace))
		}
	}
	gvr := schema.GroupVersionResource{Group: resource.Group, Version: resource.Version, Resource: resource.Name}
	owner, err := gc.metadata.Resource(gvr).Namespace(namespace).Get(ctx, ref.Name, metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err) || err == nil && owner.UID != ref.UID:
		gc.mu.Lock()
		if len(gc.absentOwners) > 100_000 {
			clear(gc.absentOwners)
		}
		gc.absentOwners[ref.UID] = struct{}{}
		gc.mu.Unlock()
		return ownerAbsent, nil
	case err != nil:
		return 0, err
	case owner.DeletionTimestamp != nil && slices.Contains(owner.Finalizers, metav1.FinalizerDeleteDependents):
		return ownerWaiting, nil
	default:
		return ownerSolid, nil
	}
}

func describeRef(ref metav1.OwnerReference) string {
	return fmt.Sprintf("[%s/%s, name: %s, uid: %s]", ref.APIVersion, ref.Kind, ref.Name, ref.UID)
}

// reportInvalidNamespace records a Warning event on the dependent, once
// per dependent and owner, as kube's garbage collector does.
func (gc *GarbageCollector) reportInvalidNamespace(ctx context.Context, dependent *objectNode, ref metav1.OwnerReference, message string) {
	key := [2]types.UID{dependent.uid, ref.UID}
	gc.mu.Lock()
	_, done := gc.reported[key]
	gc.reported[key] = struct{}{}
	gc.mu.Unlock()
	if done {
		return
	}
	namespace := dependent.namespace
	if namespace == "" {
		namespace = metav1.NamespaceDefault
	}
	now := metav1.Now()
	event := &corev1.Event{
		// Named as client-go's event recorder names events.
		ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("%s.%x", dependent.name, now.UnixNano()), Namespace: namespace},
		InvolvedObject: corev1.ObjectReference{
			APIVersion: dependent.gvr.GroupVersion().String(), Kind: dependent.kind,
			Namespace: dependent.namespace, Name: dependent.name, UID: dependent.uid,
		},
		Reason:         "OwnerRefInvalidNamespace",
		Message:        message,
		Type:           corev1.EventTypeWarning,
		Source:         corev1.EventSource{Component: "garbage-collector-controller"},
		FirstTimestamp: now,
		LastTimestamp:  now,
		Count:          1,
	}
	if _, err := gc.client.CoreV1().Events(namespace).Create(ctx, event, metav1.CreateOptions{}); err != nil {
		gc.logger.Warn("cannot record event", "object", dependent.String(), "err", err)
	}
}

// finishForeground removes the foregroundDeletion finalizer of owner once
// no dependent blocks it; the other dependents are deleted as they are
// processed (their owner is waiting for them).
func (gc *GarbageCollector) finishForeground(ctx context.Context, owner *objectNode) error {
	for _, d := range gc.graph.dependentsOf(owner.uid) {
		if !d.deleting {
			gc.queue.Add(gcWork{uid: d.uid})
		}
	}
	if blocking := gc.graph.blockingDependents(owner.uid); len(blocking) > 0 {
		return errRequeue // each blocking dependent's deletion requeues too
	}
	return gc.removeFinalizer(ctx, owner, metav1.FinalizerDeleteDependents)
}

// orphanDependents removes owner from its dependents' owner references,
// then removes its orphan finalizer.
func (gc *GarbageCollector) orphanDependents(ctx context.Context, owner *objectNode) error {
	for _, d := range gc.graph.dependentsOf(owner.uid) {
		err := gc.patchOwnerRefs(ctx, d, func(refs []metav1.OwnerReference) []metav1.OwnerReference {
			return slices.DeleteFunc(refs, func(r metav1.OwnerReference) bool { return r.UID == owner.uid })
		})
		if err != nil {
			return err
		}
	}
	return gc.removeFinalizer(ctx, owner, metav1.FinalizerOrphanDependents)
}

func (gc *GarbageCollector) deleteObject(ctx context.Context, n *objectNode, policy metav1.DeletionPropagation) error {
	uid := n.uid
	err := gc.metadata.Resource(n.gvr).Namespace(n.namespace).Delete(ctx, n.name, metav1.DeleteOptions{
		PropagationPolicy: &policy,
		Preconditions:     &metav1.Preconditions{UID: &uid},
	})
	if apierrors.IsNotFound(err) || apierrors.IsConflict(err) {
		return nil // gone already, or replaced by another object
	}
	return err
}

// patchOwnerRefs rewrites n's owner references with edit, guarded by the
// resourceVersion it read (a JSON merge patch works for every resource,
// custom ones included).
func (gc *GarbageCollector) patchOwnerRefs(ctx context.Context, n *objectNode, edit func([]metav1.OwnerReference) []metav1.OwnerReference) error {
	return gc.patchMetadata(ctx, n, func(m *metav1.PartialObjectMetadata) (map[string]any, bool) {
		refs := edit(slices.Clone(m.OwnerReferences))
		if slices.EqualFunc(refs, m.OwnerReferences, ownerRefEqual) {
			return nil, false
		}
		if len(refs) == 0 {
			return map[string]any{"ownerReferences": nil}, true
		}
		return map[string]any{"ownerReferences": refs}, true
	})
}

func ownerRefEqual(a, b metav1.OwnerReference) bool {
	blocks := func(r metav1.OwnerReference) bool { return r.BlockOwnerDeletion != nil && *r.BlockOwnerDeletion }
	return a.UID == b.UID && blocks(a) == blocks(b)
}

func (gc *GarbageCollector) removeFinalizer(ctx context.Context, n *objectNode, finalizer string) error {
	return gc.patchMetadata(ctx, n, func(m *metav1.PartialObjectMetadata) (map[string]any, bool) {
		if !slices.Contains(m.Finalizers, finalizer) {
			return nil, false
		}
		rest := slices.DeleteFunc(slices.Clone(m.Finalizers), func(f string) bool { return f == finalizer })
		if len(rest) == 0 {
			return map[string]any{"finalizers": nil}, true
		}
		return map[string]any{"finalizers": rest}, true
	})
}

// patchMetadata reads n, lets change compute new metadata fields and
// merge-patches them with the read resourceVersion, retrying conflicts.
func (gc *GarbageCollector) patchMetadata(ctx context.Context, n *objectNode, change func(*metav1.PartialObjectMetadata) (map[string]any, bool)) error {
	client := gc.metadata.Resource(n.gvr).Namespace(n.namespace)
	return retry.RetryOnConflict(retry.DefaultRetry, func() error {
		m, err := client.Get(ctx, n.name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return nil
		}
		if err != nil {
			return err
		}
		if m.UID != n.uid {
			return nil
		}
		fields, ok := change(m)
		if !ok {
			return nil
		}
		fields["resourceVersion"] = m.ResourceVersion
		fields["uid"] = string(m.UID)
		patch, err := json.Marshal(map[string]any{"metadata": fields})
		if err != nil {
			return err
		}
		_, err = client.Patch(ctx, n.name, types.MergePatchType, patch, metav1.PatchOptions{})
		if apierrors.IsNotFound(err) {
			return nil
		}
		return err
	})
}

// Observed reports whether the collector's graph holds the object with uid
// (it has seen the object through its informers).
func (gc *GarbageCollector) Observed(uid types.UID) bool { return gc.graph.get(uid) != nil }

package extensions

import (
	"context"
	"fmt"
	"reflect"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/devplane/devplane/apiserver/crdschema"
	"github.com/devplane/devplane/apiserver/registry"
	"github.com/devplane/devplane/apiserver/request"
	"github.com/devplane/devplane/apiserver/storage"
)

// runController lists and watches CRDs and reconciles each change: names,
// serving, conditions and deletion. It runs until ctx ends.
func (e *Extensions) runController(ctx context.Context) {
	ctx = request.AsAPIServer(ctx)
	delay := 50 * time.Millisecond
	for ctx.Err() == nil {
		err := e.listAndWatch(ctx)
		if ctx.Err() != nil {
			return
		}
		e.logger.Info("CRD watch ended, relisting", "err", err)
		select {
		case <-ctx.Done():
			return
		case <-time.After(delay):
		}
		if delay < 2*time.Second {
			delay *= 2
		}
	}
}

func (e *Extensions) listAndWatch(ctx context.Context) error {
	list := &apiextensionsv1.CustomResourceDefinitionList{}
	if err := e.crdCacher.GetList(ctx, crdPrefix+"/", storage.ListOptions{Recursive: true}, list); err != nil {
		return err
	}
	seen := map[string]bool{}
	all := make([]*apiextensionsv1.CustomResourceDefinition, len(list.Items))
	for i := range list.Items {
		all[i] = &list.Items[i]
	}
	for _, crd := range all {
		seen[crd.Name] = true
		// Each against the one list: hundreds of CRDs at start-up would
		// otherwise list all of them once each.
		e.reconcile(ctx, crd, all)
	}
	// CRDs deleted while we were not watching.
	e.mu.Lock()
	var gone []string
	for name := range e.served {
		if !seen[name] {
			gone = append(gone, name)
		}
	}
	e.mu.Unlock()
	for _, name := range gone {
		e.teardown(name)
	}
	e.syncedOnce.Do(func() { close(e.synced) })

	// Names each CRD was last seen holding: only a CRD that gives names
	// up (deleted, or accepted others) can let others of its group have
	// theirs, so only then is its group requeued (a burst of new CRDs in
	// one group would otherwise reconcile the group once per CRD).
	held := map[string]apiextensionsv1.CustomResourceDefinitionNames{}
	for i := range list.Items {
		held[list.Items[i].Name] = list.Items[i].Status.AcceptedNames
	}
	w, err := e.crdCacher.Watch(ctx, crdPrefix+"/", storage.ListOptions{ResourceVersion: list.ResourceVersion, Recursive: true})
	if err != nil {
		return err
	}
	defer w.Stop()
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case ev, ok := <-w.ResultChan():
			if !ok {
				return fmt.Errorf("watch closed")
			}
			crd, isCRD := ev.Object.(*apiextensionsv1.CustomResourceDefinition)
			switch {
			case ev.Type == watch.Error:
				return apierrors.FromObject(ev.Object)
			case !isCRD:
			case ev.Type == watch.Deleted:
				e.teardown(crd.Name)
				delete(held, crd.Name)
				e.requeueGroup(ctx, crd)
			case ev.Type == watch.Added || ev.Type == watch.Modified:
				e.reconcile(ctx, crd, e.allCRDs(ctx)) // read only: shared with the cache
				prev, seen := held[crd.Name]
				held[crd.Name] = crd.Status.AcceptedNames
				if seen && prev.Plural != "" && !reflect.DeepEqual(prev, crd.Status.AcceptedNames) {
					e.requeueGroup(ctx, crd)
				}
			}
		}
	}
}

// requeueGroup reconciles the CRDs of crd's group still waiting for their
// names, as kube's naming controller does: a CRD that went away or changed
// its names may have freed them.
func (e *Extensions) requeueGroup(ctx context.Context, crd *apiextensionsv1.CustomResourceDefinition) {
	all := e.allCRDs(ctx)
	for _, other := range all {
		if other.Spec.Group != crd.Spec.Group || other.Name == crd.Name {
			continue
		}
		if c := findCondition(other, apiextensionsv1.NamesAccepted); c != nil && c.Status == apiextensionsv1.ConditionTrue {
			continue
		}
		e.reconcile(ctx, other, all)
	}
}

// builtinResource reports resources of the built-in APIs (and CRDs).
func (e *Extensions) builtinResource(group, resource string) bool {
	if group == CRDResource.Group && resource == CRDResource.Resource {
		return true
	}
	if e.core() == nil {
		return false
	}
	for _, r := range e.core().Resources() {
		if r.GVR.Group == group && r.GVR.Resource == resource {
			return true
		}
	}
	return false
}

func (e *Extensions) allCRDs(ctx context.Context) []*apiextensionsv1.CustomResourceDefinition {
	list := &apiextensionsv1.CustomResourceDefinitionList{}
	if err := e.crdCacher.GetList(ctx, crdPrefix+"/", storage.ListOptions{ResourceVersion: "0", Recursive: true}, list); err != nil {
		return nil
	}
	out := make([]*apiextensionsv1.CustomResourceDefinition, len(list.Items))
	for i := range list.Items {
		out[i] = &list.Items[i]
	}
	return out
}

// reconcile brings serving and status in line with crd; all are the CRDs
// whose names it must not take.
func (e *Extensions) reconcile(ctx context.Context, crd *apiextensionsv1.CustomResourceDefinition, all []*apiextensionsv1.CustomResourceDefinition) {
	names, namesCond := crdschema.AcceptNames(crd, all, e.builtinResource)
	namesCond.LastTransitionTime = metav1.Now()
	accepted := namesCond.Status == apiextensionsv1.ConditionTrue
	established := findCondition(crd, apiextensionsv1.Established)
	wasEstablished := established != nil && established.Status == apiextensionsv1.ConditionTrue

	// Only the status changes: the spec (schemas, most of a CRD's size)
	// stays shared with the cache's object rather than copied.
	desired := withStatusCopy(crd)
	if accepted || !wasEstablished {
		desired.Status.AcceptedNames = names
	}
	setCondition(desired, namesCond)
	serve := accepted || wasEstablished
	if serve {
		if err := e.serve(desired); err != nil {
			e.logger.Error("serving CRD", "crd", crd.Name, "err", err)
			serve = false
		}
	}
	now := metav1.Now()
	if serve {
		setCondition(desired, apiextensionsv1.CustomResourceDefinitionCondition{Type: apiextensionsv1.Established,
			Status: apiextensionsv1.ConditionTrue, Reason: "InitialNamesAccepted", Message: "the initial names have been accepted",
			LastTransitionTime: now})
	} else {
		setCondition(desired, apiextensionsv1.CustomResourceDefinitionCondition{Type: apiextensionsv1.Established,
			Status: apiextensionsv1.ConditionFalse, Reason: "NotAccepted", Message: "not all names are accepted",
			LastTransitionTime: now})
	}
	if crd.DeletionTimestamp != nil {
		setCondition(desired, apiextensionsv1.CustomResourceDefinitionCondition{Type: apiextensionsv1.Terminating,
			Status: apiextensionsv1.ConditionTrue, Reason: "InstanceDeletionInProgress",
			Message: "CustomResource deletion is in progress", LastTransitionTime: now})
	}
	if v := storageVersion(desired); v != "" && !hasString(desired.Status.StoredVersions, v) {
		desired.Status.StoredVersions = append(desired.Status.StoredVersions, v)
	}
	if !statusEqual(crd.Status, desired.Status) {
		e.updateStatus(ctx, crd, desired.Status)
	}
	if crd.DeletionTimestamp != nil {
		e.startCleanup(ctx, crd)
	}
}

// withStatusCopy is crd with its status deep-copied and everything else
// shared: the copy's status may change, nothing else.
func withStatusCopy(crd *apiextensionsv1.CustomResourceDefinition) *apiextensionsv1.CustomResourceDefinition {
	c := *crd
	c.Status = *crd.Status.DeepCopy()
	return &c
}

// statusEqual ignores condition transition times.
func statusEqual(a, b apiextensionsv1.CustomResourceDefinitionStatus) bool {
	strip := func(s apiextensionsv1.CustomResourceDefinitionStatus) apiextensionsv1.CustomResourceDefinitionStatus {
		s = *s.DeepCopy()
		for i := range s.Conditions {
			s.Conditions[i].LastTransitionTime = metav1.Time{}
		}
		return s
	}
	return reflect.DeepEqual(strip(a), strip(b))
}

func (e *Extensions) updateStatus(ctx context.Context, crd *apiextensionsv1.CustomResourceDefinition, status apiextensionsv1.CustomResourceDefinitionStatus) {
	_, _, err := e.crdStore.Update(ctx, "", crd.Name, "status", func(_ context.Context, current runtime.Object) (runtime.Object, error) {
		cur := current.(*apiextensionsv1.CustomResourceDefinition)
		if cur.UID != crd.UID {
			return nil, apierrors.NewConflict(CRDResource.GroupResource(), crd.Name, fmt.Errorf("the CRD was replaced"))
		}
		cur.Status = *status.DeepCopy() // current is the store's own copy
		return cur, nil
	}, metav1.UpdateOptions{})
	if err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
		e.logger.Error("updating CRD status", "crd", crd.Name, "err", err)
	}
}

// serve (re)builds the served resources of crd when its spec or accepted
// names changed.
func (e *Extensions) serve(crd *apiextensionsv1.CustomResourceDefinition) error {
	e.mu.Lock()
	prev := e.served[crd.Name]
	if prev != nil && prev.key == servingKey(crd) {
		prev.crd = crd
		if crd.DeletionTimestamp != nil {
			prev.terminating = true
		}
		e.mu.Unlock()
		return nil
	}
	e.mu.Unlock()
	if prev != nil && prev.uid != crd.UID {
		e.teardown(crd.Name)
		prev = nil
	}
	sc, err := e.buildServed(crd, prev)
	if err != nil {
		if sc != nil && sc.cacher != nil && (prev == nil || sc.cacher != prev.cacher) {
			sc.cacher.Stop()
		}
		return err
	}
	sc.terminating = crd.DeletionTimestamp != nil
	e.mu.Lock()
	e.served[crd.Name] = sc
	if prev != nil {
		for _, gvr := range prev.gvrs {
			delete(e.versions, gvr)
		}
	}
	for _, sv := range sc.versions {
		if sv.served {
			e.versions[sv.res.GVR] = sv
		}
	}
	e.mu.Unlock()
	keep := map[string]bool{}
	var served []*registry.Resource
	for _, sv := range sc.versions {
		if sv.served {
			keep[sv.res.GVR.String()] = true
			served = append(served, sv.res)
		}
	}
	e.reg.Add(served...) // together: discovery never shows half a CRD
	if prev != nil {
		for _, gvr := range prev.gvrs {
			if !keep[gvr.String()] {
				e.reg.Remove(gvr)
			}
		}
	}
	return nil
}

// teardown stops serving a deleted CRD.
func (e *Extensions) teardown(name string) {
	e.mu.Lock()
	sc := e.served[name]
	delete(e.served, name)
	if sc != nil {
		for _, gvr := range sc.gvrs {
			delete(e.versions, gvr)
		}
	}
	e.mu.Unlock()
	if sc == nil {
		return
	}
	for _, gvr := range sc.gvrs {
		e.reg.Remove(gvr)
	}
	sc.cacher.Stop()
	crdschema.Forget(sc.uid)
}

// stopAll stops every cache at shutdown, once requests have drained. What
// is served stays in the registry: taking it out would make the aggregator
// delete the CRDs' APIServices as stale, for the next start to make again.
func (e *Extensions) stopAll() {
	e.mu.Lock()
	var served []*servedCRD
	for _, sc := range e.served {
		served = append(served, sc)
	}
	e.mu.Unlock()
	for _, sc := range served {
		sc.cacher.Stop()
		crdschema.Forget(sc.uid)
	}
	e.crdCacher.Stop()
}

// startCleanup deletes the custom resources of a CRD being deleted, then
// removes the cleanup finalizer so the CRD goes.
func (e *Extensions) startCleanup(ctx context.Context, crd *apiextensionsv1.CustomResourceDefinition) {
	if !hasString(crd.Finalizers, CleanupFinalizer) {
		return
	}
	e.mu.Lock()
	if e.cleaning[crd.Name] {
		e.mu.Unlock()
		return
	}
	e.cleaning[crd.Name] = true
	sc := e.served[crd.Name]
	e.mu.Unlock()
	go func() {
		defer func() {
			e.mu.Lock()
			delete(e.cleaning, crd.Name)
			e.mu.Unlock()
		}()
		for ctx.Err() == nil {
			done, err := e.deleteInstances(ctx, sc)
			if err != nil {
				e.logger.Error("deleting custom resources", "crd", crd.Name, "err", err)
			}
			if done {
				break
			}
			select {
			case <-ctx.Done():
				return
			case <-time.After(500 * time.Millisecond):
			}
		}
		// Through /status, as kube's finalizer controller does: the spec is
		// the stored one, and revalidating its schemas would cost far more
		// than the write.
		_, _, err := e.crdStore.Update(ctx, "", crd.Name, "status", func(_ context.Context, current runtime.Object) (runtime.Object, error) {
			cur := current.(*apiextensionsv1.CustomResourceDefinition) // the store's own copy
			if cur.UID != crd.UID {
				return nil, apierrors.NewConflict(CRDResource.GroupResource(), crd.Name, fmt.Errorf("the CRD was replaced"))
			}
			var keep []string
			for _, f := range cur.Finalizers {
				if f != CleanupFinalizer {
					keep = append(keep, f)
				}
			}
			cur.Finalizers = keep
			return cur, nil
		}, metav1.UpdateOptions{})
		if err != nil && !apierrors.IsNotFound(err) {
			e.logger.Error("removing the CRD cleanup finalizer", "crd", crd.Name, "err", err)
		}
	}()
}

// deleteInstances deletes every custom resource of sc and reports whether
// none is left (finalizers on them may keep some for a while).
func (e *Extensions) deleteInstances(ctx context.Context, sc *servedCRD) (bool, error) {
	if sc == nil {
		return true, nil
	}
	store := sc.storageStore()
	if store == nil {
		return true, nil
	}
	if _, err := store.DeleteCollection(ctx, "", &metav1.DeleteOptions{}, metav1.ListOptions{}); err != nil {
		return false, err
	}
	list, err := store.List(ctx, "", metav1.ListOptions{})
	if err != nil {
		return false, err
	}
	return meta.LenList(list) == 0, nil
}

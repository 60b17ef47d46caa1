package controlplane

import (
	"context"
	"sync"

	corev1 "k8s.io/api/core/v1"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/devplane/devplane/apiserver/admission"
	"github.com/devplane/devplane/apiserver/registry"
	"github.com/devplane/devplane/apiserver/request"
	"github.com/devplane/devplane/apiserver/storage"
)

// installAdmission gives the core and the extensions registries
// kube-apiserver's default admission chain, so webhooks and policies see
// custom resources too.
func (cp *ControlPlane) installAdmission() {
	src := newRegistrySource(cp.localRegistries)
	// The workload controllers (pvc- and pv-protection among them) run
	// with simulated nodes.
	chain, err := admission.NewChain(src, admission.ChainOptions{
		StorageProtection: cp.opts.Nodes > 0 && !cp.opts.DisableControllers,
		Authorizer:        cp.authorizer,
	})
	if err != nil {
		// Only a broken Pod Security policy library gets here.
		panic("controlplane: building the admission chain: " + err.Error())
	}
	cp.CoreRegistry.SetAdmission(chain)
	for _, reg := range cp.extensionRegistries() {
		reg.SetAdmission(chain)
	}
	cp.recordWriters()
}

// recordWriters makes the core and extensions registries' stores tell
// who made each write (object history: apiserver/history).
func (cp *ControlPlane) recordWriters() {
	cp.CoreRegistry.SetWriteRecorder(cp.writers)
	for _, reg := range cp.extensionRegistries() {
		reg.SetWriteRecorder(cp.writers)
	}
}

// registrySource reads what admission needs straight from the local
// registries' stores, built-in and custom (the watch cache unless a
// consistent read is asked). What admission lists on writes it reads from
// mirrors of the watch caches, made on first use.
type registrySource struct {
	regs func() []*registry.Registry
	// mirrors has a slot for each resource admission lists on writes; the
	// map is fixed once made, so every write reads it without a lock.
	mirrors map[schema.GroupVersionResource]*mirrorSlot
}

// mirrorSlot is one resource's mirror, made on first use (nil when its
// store is not a watch cache).
type mirrorSlot struct {
	once   sync.Once
	mirror *storage.Mirror
}

func newRegistrySource(regs func() []*registry.Registry) *registrySource {
	s := &registrySource{regs: regs, mirrors: map[schema.GroupVersionResource]*mirrorSlot{}}
	for _, gvr := range admission.ListedOnWrites() {
		s.mirrors[gvr] = &mirrorSlot{}
	}
	return s
}

// mirror is gvr's mirror when it has one or one can be made.
func (s *registrySource) mirror(gvr schema.GroupVersionResource, st *registry.Store) *storage.Mirror {
	slot, listed := s.mirrors[gvr]
	if !listed {
		return nil
	}
	slot.once.Do(func() { slot.mirror, _ = storage.NewMirror(st) })
	return slot.mirror
}

func (s *registrySource) store(gvr schema.GroupVersionResource) (*registry.Store, error) {
	for _, reg := range s.regs() {
		if res, ok := reg.Lookup(gvr.Group, gvr.Version, gvr.Resource); ok && res.Store != nil {
			return res.Store, nil
		}
	}
	return nil, apierrors.NewNotFound(gvr.GroupResource(), "")
}

// Resource finds the stored resource of a kind (a policy's paramKind).
func (s *registrySource) Resource(gvk schema.GroupVersionKind) (schema.GroupVersionResource, bool, bool) {
	for _, reg := range s.regs() {
		for _, r := range reg.Resources() {
			if r.GVR.GroupVersion() == gvk.GroupVersion() && r.Kind == gvk.Kind && r.Store != nil {
				return r.GVR, r.Namespaced, true
			}
		}
	}
	return schema.GroupVersionResource{}, false, false
}

func (s *registrySource) Get(ctx context.Context, gvr schema.GroupVersionResource, namespace, name string) (runtime.Object, error) {
	st, err := s.store(gvr)
	if err != nil {
		return nil, err
	}
	obj, err := st.Get(ctx, namespace, name, metav1.GetOptions{ResourceVersion: "0"})
	if apierrors.IsNotFound(err) {
		// The cache may not have seen an object created a moment ago (a
		// namespace, then at once a pod in it): like kube's admission
		// plugins, fall back to a live read before believing it is gone.
		obj, err = st.Get(ctx, namespace, name, metav1.GetOptions{})
	}
	return obj, err
}

func (s *registrySource) List(ctx context.Context, gvr schema.GroupVersionResource, namespace string, consistent bool) ([]runtime.Object, error) {
	st, err := s.store(gvr)
	if err != nil {
		return nil, err
	}
	opts := metav1.ListOptions{ResourceVersion: "0"}
	if consistent {
		opts.ResourceVersion = ""
	} else if m := s.mirror(gvr, st); m != nil {
		if objs, ok := m.Objects(namespace); ok {
			return objs, nil
		}
	}
	list, err := st.List(ctx, namespace, opts)
	if err != nil {
		return nil, err
	}
	return meta.ExtractList(list)
}

func (s *registrySource) UpdateStatus(ctx context.Context, gvr schema.GroupVersionResource, obj runtime.Object) (runtime.Object, error) {
	st, err := s.store(gvr)
	if err != nil {
		return nil, err
	}
	acc, err := meta.Accessor(obj)
	if err != nil {
		return nil, err
	}
	stored, _, err := st.Update(admission.WithoutAdmission(request.AsAPIServer(ctx)), acc.GetNamespace(), acc.GetName(), "status",
		func(context.Context, runtime.Object) (runtime.Object, error) { return obj.DeepCopyObject(), nil }, metav1.UpdateOptions{})
	return stored, err
}

// quotaUsage counts what a quota's namespace uses of the resources it
// names, among the objects its scopes take in, from the watch caches of
// every local resource (custom ones included), for the resource quota
// controller.
func (cp *ControlPlane) quotaUsage(ctx context.Context, rq *corev1.ResourceQuota) (corev1.ResourceList, error) {
	resolve := func(group, resource string) (schema.GroupVersionResource, bool) {
		for _, reg := range cp.localRegistries() {
			for _, r := range reg.Resources() {
				if r.GVR.Group == group && r.GVR.Resource == resource && r.Store != nil {
					return r.GVR, true
				}
			}
		}
		return schema.GroupVersionResource{}, false
	}
	return admission.QuotaUsage(request.AsAPIServer(ctx), &registrySource{regs: cp.localRegistries}, resolve, rq)
}

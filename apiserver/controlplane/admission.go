package controlplane

import (
	"context"
	"errors"

	corev1 "k8s.io/api/core/v1"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/devplane/devplane/apiserver/admission"
	"github.com/devplane/devplane/apiserver/registry"
	"github.com/devplane/devplane/apiserver/request"
)

// installAdmission gives the core and the extensions registries
// kube-apiserver's default admission chain, so webhooks and policies see
// custom resources too.
func (cp *ControlPlane) installAdmission() {
	src := &registrySource{reg: cp.CoreRegistry}
	chain, err := admission.NewChain(src)
	if err != nil {
		// Only a broken Pod Security policy library gets here.
		panic("controlplane: building the admission chain: " + err.Error())
	}
	cp.CoreRegistry.SetAdmission(chain)
	for _, reg := range cp.extensionRegistries() {
		reg.SetAdmission(chain)
	}
}

// registrySource reads what admission needs straight from the core
// registry's stores (the watch cache unless a consistent read is asked).
type registrySource struct{ reg *registry.Registry }

func (s *registrySource) store(gvr schema.GroupVersionResource) (*registry.Store, error) {
	res, ok := s.reg.Lookup(gvr.Group, gvr.Version, gvr.Resource)
	if !ok || res.Store == nil {
		return nil, apierrors.NewNotFound(gvr.GroupResource(), "")
	}
	return res.Store, nil
}

func (s *registrySource) Get(ctx context.Context, gvr schema.GroupVersionResource, namespace, name string) (runtime.Object, error) {
	st, err := s.store(gvr)
	if err != nil {
		return nil, err
	}
	return st.Get(ctx, namespace, name, metav1.GetOptions{ResourceVersion: "0"})
}

func (s *registrySource) List(ctx context.Context, gvr schema.GroupVersionResource, namespace string, consistent bool) ([]runtime.Object, error) {
	st, err := s.store(gvr)
	if err != nil {
		return nil, err
	}
	opts := metav1.ListOptions{ResourceVersion: "0"}
	if consistent {
		opts.ResourceVersion = ""
	}
	list, err := st.List(ctx, namespace, opts)
	if err != nil {
		return nil, err
	}
	return meta.ExtractList(list)
}

func (s *registrySource) UpdateStatus(ctx context.Context, gvr schema.GroupVersionResource, obj runtime.Object) error {
	st, err := s.store(gvr)
	if err != nil {
		return err
	}
	acc, err := meta.Accessor(obj)
	if err != nil {
		return err
	}
	_, _, err = st.Update(admission.WithoutAdmission(request.AsAPIServer(ctx)), acc.GetNamespace(), acc.GetName(), "status",
		func(context.Context, runtime.Object) (runtime.Object, error) { return obj.DeepCopyObject(), nil }, metav1.UpdateOptions{})
	return err
}

// quotaUsage counts a namespace's usage of the resources hard names from
// the watch caches of every local resource (custom ones included), for the
// resource quota controller.
func (cp *ControlPlane) quotaUsage(ctx context.Context, namespace string, hard corev1.ResourceList) (corev1.ResourceList, error) {
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
	return admission.QuotaUsage(request.AsAPIServer(ctx), localSource{cp}, resolve, namespace, hard)
}

// localSource lists from the watch caches through LocalReader; the quota
// count only lists.
type localSource struct{ cp *ControlPlane }

func (s localSource) List(ctx context.Context, gvr schema.GroupVersionResource, namespace string, _ bool) ([]runtime.Object, error) {
	lr, ok := s.cp.LocalReader(gvr)
	if !ok {
		return nil, apierrors.NewNotFound(gvr.GroupResource(), "")
	}
	list, err := lr.List(ctx, namespace, metav1.ListOptions{ResourceVersion: "0"})
	if err != nil {
		return nil, err
	}
	return meta.ExtractList(list)
}

func (s localSource) Get(context.Context, schema.GroupVersionResource, string, string) (runtime.Object, error) {
	return nil, errors.New("localSource only lists")
}

func (s localSource) UpdateStatus(context.Context, schema.GroupVersionResource, runtime.Object) error {
	return errors.New("localSource only lists")
}

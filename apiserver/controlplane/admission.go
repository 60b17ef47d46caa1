package controlplane

import (
	"context"

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

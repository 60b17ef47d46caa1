package namespace

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/devplane/devplane/apiserver/kubevalidation"
	"github.com/devplane/devplane/apiserver/registry"
)

// InstallFinalize serves namespaces/finalize as kube's finalize strategy:
// update alone (no get or patch), the request's namespace but for its
// status, validated by kube's ValidateNamespaceFinalizeUpdate (each of
// spec.finalizers a qualified name or a standard one). It is how the
// namespace controller, having emptied a namespace, lets it go.
func InstallFinalize(reg *registry.Registry) {
	res, ok := reg.Lookup("", "v1", "namespaces")
	if !ok || res.Store == nil {
		return
	}
	s := res.Store
	if s.UpdateSubresources == nil {
		s.UpdateSubresources = map[string]registry.SubresourceUpdate{}
	}
	if s.PutOnly == nil {
		s.PutOnly = map[string]bool{}
	}
	s.UpdateSubresources["finalize"] = finalize
	s.PutOnly["finalize"] = true
	if res.FieldManager != nil {
		res.FieldManager.ResetOn("finalize", "status")
	}
}

func finalize(_ context.Context, requested, current runtime.Object) (runtime.Object, error) {
	ns, ok1 := requested.(*corev1.Namespace)
	cur, ok2 := current.(*corev1.Namespace)
	if !ok1 || !ok2 {
		return nil, apierrors.NewBadRequest("finalize takes a Namespace")
	}
	ns.Status = cur.Status
	// The store restores these after the merge; validation must find
	// them unchanged already.
	if ns.UID == "" {
		ns.UID = cur.UID
	}
	ns.CreationTimestamp = cur.CreationTimestamp
	ns.DeletionTimestamp, ns.DeletionGracePeriodSeconds = cur.DeletionTimestamp, cur.DeletionGracePeriodSeconds
	if errs := kubevalidation.NamespaceFinalize(ns, cur); len(errs) > 0 {
		return nil, apierrors.NewInvalid(corev1.SchemeGroupVersion.WithKind("Namespace").GroupKind(), cur.Name, errs)
	}
	return ns, nil
}

// Package namespace is kube's namespace strategy where it differs from the
// generic store's: a namespace goes only once its spec.finalizers are done
// (which only /finalize changes, finalize.go), and is Terminating until
// then.
package namespace

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/devplane/devplane/apiserver/registry"
)

// Configure gives the generic strategy the namespace's differences.
func Configure(s *registry.Strategy) {
	// spec.finalizers change only through /finalize.
	s.PrepareForUpdate = func(obj, old runtime.Object) {
		ns, ok1 := obj.(*corev1.Namespace)
		prev, ok2 := old.(*corev1.Namespace)
		if ok1 && ok2 {
			ns.Spec.Finalizers = prev.Spec.Finalizers
		}
	}
	s.Finalizing = func(obj runtime.Object) bool {
		ns, ok := obj.(*corev1.Namespace)
		return ok && len(ns.Spec.Finalizers) > 0
	}
	s.PrepareForDeletion = func(obj runtime.Object) {
		if ns, ok := obj.(*corev1.Namespace); ok {
			ns.Status.Phase = corev1.NamespaceTerminating
		}
	}
}

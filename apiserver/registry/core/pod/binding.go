// Package pod holds what pods serve beyond the generic store: binding,
// eviction against PodDisruptionBudgets, ephemeral containers, in-place
// resize, and the kubelet's subresources answered with a clear Status.
package pod

import (
	"context"
	"net/http"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/devplane/devplane/apiserver/registry"
)

// InstallBinding serves what a scheduler writes: pods/<name>/binding and
// the older namespaced bindings resource (the Binding names the pod), both
// answered with kube's Success Status.
func InstallBinding(reg *registry.Registry) {
	pods, ok := reg.Lookup("", "v1", "pods")
	if !ok || pods.Store == nil {
		return
	}
	store := pods.Store
	newBinding := func() runtime.Object { return &corev1.Binding{} }
	bind := func(ctx context.Context, namespace, name string, obj runtime.Object) (runtime.Object, error) {
		b := obj.(*corev1.Binding)
		if name == "" {
			name = b.Name
		}
		if err := store.Bind(ctx, namespace, name, b); err != nil {
			return nil, err
		}
		return &metav1.Status{Status: metav1.StatusSuccess, Code: http.StatusCreated}, nil
	}

	reg.AddCreateSubresource(pods.GVR, "binding", &registry.SubresourceCreate{
		Kind: corev1.SchemeGroupVersion.WithKind("Binding"), New: newBinding, Create: bind})

	reg.Add(&registry.Resource{
		GVR:        corev1.SchemeGroupVersion.WithResource("bindings"),
		Kind:       "Binding",
		Singular:   "binding",
		Namespaced: true,
		Verbs:      []string{"create"},
		New:        newBinding,
		Create: func(ctx context.Context, namespace string, obj runtime.Object) (runtime.Object, error) {
			return bind(ctx, namespace, "", obj)
		},
	})
}

package registry

import (
	"context"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Verbs of the connect-style subresources, as kube's discovery lists them.
var (
	ProxyVerbs  = []string{"create", "delete", "get", "patch", "update"}
	StreamVerbs = []string{"create", "get"}
)

// NoRuntime is the answer of everything that would reach a kubelet or a
// container: a clear Status at once, never a hang.
func NoRuntime(what string) error {
	return apierrors.NewBadRequest(what + ": devplane simulates its nodes and has no kubelet or container runtime behind this control plane")
}

// NewConnect makes a connect-style subresource of kind that answers with
// answer once the object exists in store (404 otherwise, as kube).
func NewConnect(store *Store, kind schema.GroupVersionKind, verbs []string, answer func(namespace, name string) error) *ConnectSubresource {
	return &ConnectSubresource{
		Kind:  kind,
		Verbs: verbs,
		Serve: func(ctx context.Context, namespace, name string) error {
			if _, err := store.Get(ctx, namespace, name, metav1.GetOptions{ResourceVersion: "0"}); err != nil {
				return err
			}
			return answer(namespace, name)
		},
	}
}

// SetConnectSubresources replaces the served resource gvr by a copy with
// connects as its connect-style subresources (resources are immutable once
// added); false when gvr is not served from a store.
func (r *Registry) SetConnectSubresources(gvr schema.GroupVersionResource, connects map[string]*ConnectSubresource) bool {
	res, ok := r.Lookup(gvr.Group, gvr.Version, gvr.Resource)
	if !ok || res.Store == nil {
		return false
	}
	copied := *res
	copied.ConnectSubresources = connects
	r.Add(&copied)
	return true
}

// SetNoRuntimeProxy serves the proxy subresource of the served resource
// gvr (its options' kind optionsKind) with NoRuntime(refusal(name)): what
// it would reach does not run here.
func (r *Registry) SetNoRuntimeProxy(gvr schema.GroupVersionResource, optionsKind string, refusal func(name string) string) {
	res, ok := r.Lookup(gvr.Group, gvr.Version, gvr.Resource)
	if !ok || res.Store == nil {
		return
	}
	r.SetConnectSubresources(gvr, map[string]*ConnectSubresource{
		"proxy": NewConnect(res.Store, gvr.GroupVersion().WithKind(optionsKind), ProxyVerbs, func(_, name string) error {
			return NoRuntime(refusal(name))
		}),
	})
}

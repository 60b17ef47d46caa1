package admission

import (
	"context"
	"strings"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

var (
	namespacesGVR = schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}
)

func has(list []string, v string) bool {
	for _, x := range list {
		if x == "*" || x == v {
			return true
		}
	}
	return false
}

// ruleMatches applies one admissionregistration rule: operations, groups,
// versions, resources ("*", "*/*", "pods/*", "*/status") and scope.
func ruleMatches(r admissionregistrationv1.RuleWithOperations, a *Attributes) bool {
	ops := make([]string, len(r.Operations))
	for i, o := range r.Operations {
		ops[i] = string(o)
	}
	if !has(ops, string(a.Operation)) || !has(r.APIGroups, a.Resource.Group) || !has(r.APIVersions, a.Resource.Version) {
		return false
	}
	if !resourceMatches(r.Resources, a.Resource.Resource, a.Subresource) {
		return false
	}
	scope := admissionregistrationv1.AllScopes
	if r.Scope != nil {
		scope = *r.Scope
	}
	namespaced := a.Namespace != "" && !(a.Resource.Group == "" && a.Resource.Resource == "namespaces")
	switch scope {
	case admissionregistrationv1.ClusterScope:
		return !namespaced
	case admissionregistrationv1.NamespacedScope:
		return namespaced
	}
	return true
}

func resourceMatches(patterns []string, resource, sub string) bool {
	for _, p := range patterns {
		res, psub, _ := strings.Cut(p, "/")
		switch {
		case p == "*/*":
			return true
		case res == "*" && psub == "" && sub == "":
			return true
		case res == "*" && psub == sub:
			return true
		case res == resource && (psub == sub || (psub == "*" && sub != "")):
			return true
		}
	}
	return false
}

func objectLabels(obj runtime.Object) map[string]string {
	if obj == nil || isNilObject(obj) {
		return nil
	}
	acc, err := meta.Accessor(obj)
	if err != nil {
		return nil
	}
	return acc.GetLabels()
}

// objectSelectorMatches: the new or the old object's labels match.
func objectSelectorMatches(sel *metav1.LabelSelector, a *Attributes) (bool, error) {
	if sel == nil || (len(sel.MatchLabels) == 0 && len(sel.MatchExpressions) == 0) {
		return true, nil
	}
	s, err := metav1.LabelSelectorAsSelector(sel)
	if err != nil {
		return false, err
	}
	for _, o := range []runtime.Object{a.Object, a.OldObject} {
		if o == nil || isNilObject(o) {
			continue
		}
		if s.Matches(labels.Set(objectLabels(o))) {
			return true, nil
		}
	}
	return false, nil
}

// namespaceSelectorMatches: the request's namespace's labels match;
// cluster-scoped objects other than namespaces always match.
func namespaceSelectorMatches(ctx context.Context, src Source, sel *metav1.LabelSelector, a *Attributes) (bool, error) {
	if sel == nil || (len(sel.MatchLabels) == 0 && len(sel.MatchExpressions) == 0) {
		return true, nil
	}
	s, err := metav1.LabelSelectorAsSelector(sel)
	if err != nil {
		return false, err
	}
	if a.Resource.Group == "" && a.Resource.Resource == "namespaces" {
		l := objectLabels(a.Object)
		if l == nil {
			l = objectLabels(a.OldObject)
		}
		return s.Matches(labels.Set(l)), nil
	}
	if a.Namespace == "" {
		return true, nil
	}
	ns, err := namespaceOf(ctx, src, a.Namespace)
	if err != nil {
		return false, err
	}
	if ns == nil {
		return s.Matches(labels.Set(nil)), nil
	}
	return s.Matches(labels.Set(ns.Labels)), nil
}

// namespaceOf reads a namespace (nil when it does not exist).
func namespaceOf(ctx context.Context, src Source, name string) (*corev1.Namespace, error) {
	obj, err := src.Get(ctx, namespacesGVR, "", name)
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	ns, _ := obj.(*corev1.Namespace)
	return ns, nil
}

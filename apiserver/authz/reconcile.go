package authz

import (
	"slices"

	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Reconcile brings an existing bootstrap ClusterRole up to date with the
// wanted one the way kube-apiserver does at every start: labels,
// annotations, missing rules and aggregation selectors are added; nothing
// a user added is removed. A role annotated autoupdate=false is left alone.
func Reconcile(existing, wanted *rbacv1.ClusterRole) (result *rbacv1.ClusterRole, needsUpdate bool) {
	if protected(existing.ObjectMeta) {
		return existing, false
	}
	result = existing.DeepCopy()
	changed := mergeMeta(&result.ObjectMeta, wanted.ObjectMeta)
	// An aggregated role's rules are computed; comparing them to the
	// (empty) wanted rules would only add noise.
	if wanted.AggregationRule == nil || existing.AggregationRule == nil {
		if _, missing := Covers(existing.Rules, wanted.Rules); len(missing) > 0 {
			result.Rules = append(result.Rules, missing...)
			changed = true
		}
	}
	switch {
	case wanted.AggregationRule == nil && existing.AggregationRule != nil:
		result.AggregationRule = nil
		changed = true
	case wanted.AggregationRule != nil:
		if result.AggregationRule == nil {
			result.AggregationRule = &rbacv1.AggregationRule{}
		}
		for _, sel := range wanted.AggregationRule.ClusterRoleSelectors {
			if !slices.ContainsFunc(result.AggregationRule.ClusterRoleSelectors, func(s metav1.LabelSelector) bool {
				return equality.Semantic.DeepEqual(s, sel)
			}) {
				result.AggregationRule.ClusterRoleSelectors = append(result.AggregationRule.ClusterRoleSelectors, sel)
				changed = true
			}
		}
	}
	return result, changed
}

// ReconcileRole is Reconcile for namespaced bootstrap Roles.
func ReconcileRole(existing, wanted *rbacv1.Role) (result *rbacv1.Role, needsUpdate bool) {
	if protected(existing.ObjectMeta) {
		return existing, false
	}
	result = existing.DeepCopy()
	changed := mergeMeta(&result.ObjectMeta, wanted.ObjectMeta)
	if _, missing := Covers(existing.Rules, wanted.Rules); len(missing) > 0 {
		result.Rules = append(result.Rules, missing...)
		changed = true
	}
	return result, changed
}

// ReconcileClusterRoleBinding adds missing subjects, labels and
// annotations. roleRef is immutable in the API: when it differs, result is
// the wanted binding and the caller must delete and re-create it
// (RoleRefChanged tells).
func ReconcileClusterRoleBinding(existing, wanted *rbacv1.ClusterRoleBinding) (result *rbacv1.ClusterRoleBinding, needsUpdate bool) {
	return reconcileBinding(existing, wanted, (*rbacv1.ClusterRoleBinding).DeepCopy,
		func(b *rbacv1.ClusterRoleBinding) bindingFields {
			return bindingFields{&b.ObjectMeta, b.RoleRef, &b.Subjects}
		})
}

// ReconcileRoleBinding is ReconcileClusterRoleBinding for RoleBindings.
func ReconcileRoleBinding(existing, wanted *rbacv1.RoleBinding) (result *rbacv1.RoleBinding, needsUpdate bool) {
	return reconcileBinding(existing, wanted, (*rbacv1.RoleBinding).DeepCopy,
		func(b *rbacv1.RoleBinding) bindingFields { return bindingFields{&b.ObjectMeta, b.RoleRef, &b.Subjects} })
}

// bindingFields points into a RoleBinding or ClusterRoleBinding.
type bindingFields struct {
	meta     *metav1.ObjectMeta
	roleRef  rbacv1.RoleRef
	subjects *[]rbacv1.Subject
}

// reconcileBinding is the one reconciliation of both binding kinds, which
// differ only in type.
func reconcileBinding[B any](existing, wanted B, deepCopy func(B) B, fields func(B) bindingFields) (B, bool) {
	have, want := fields(existing), fields(wanted)
	if protected(*have.meta) {
		return existing, false
	}
	if have.roleRef != want.roleRef {
		return deepCopy(wanted), true
	}
	result := deepCopy(existing)
	out := fields(result)
	changed := mergeMeta(out.meta, *want.meta)
	var added bool
	*out.subjects, added = addMissingSubjects(*out.subjects, *want.subjects)
	return result, changed || added
}

// RoleRefChanged reports whether reconciling a binding needs a re-create.
func RoleRefChanged(existing, wanted rbacv1.RoleRef) bool {
	return existing != wanted
}

func protected(meta metav1.ObjectMeta) bool {
	return meta.Annotations[AutoUpdateAnnotation] == "false"
}

// mergeMeta adds the wanted labels and annotations that existing lacks;
// values already set (by a user) win, as in kube.
func mergeMeta(existing *metav1.ObjectMeta, wanted metav1.ObjectMeta) bool {
	changed := false
	merge := func(dst *map[string]string, src map[string]string) {
		for k, v := range src {
			if _, ok := (*dst)[k]; ok {
				continue
			}
			if *dst == nil {
				*dst = map[string]string{}
			}
			(*dst)[k] = v
			changed = true
		}
	}
	merge(&existing.Labels, wanted.Labels)
	merge(&existing.Annotations, wanted.Annotations)
	return changed
}

func addMissingSubjects(existing, wanted []rbacv1.Subject) ([]rbacv1.Subject, bool) {
	added := false
	for _, s := range wanted {
		if !slices.Contains(existing, s) {
			existing = append(existing, s)
			added = true
		}
	}
	return existing, added
}

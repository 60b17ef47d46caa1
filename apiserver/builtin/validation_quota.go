package builtin

import (
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/util/sets"
	utilvalidation "k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	core "k8s.io/kubernetes/pkg/apis/core"
	"k8s.io/kubernetes/pkg/apis/core/helper"
)

// The quota rules are kube's tables (k8s.io/kubernetes/pkg/apis/core/helper:
// which names are standard, integer, and which scopes may limit which
// resources). Its validation package is not imported: that would run
// k8s.io/kubernetes/pkg/apis/core/v1's init, which adds kube's defaulters
// to k8s.io/api's core SchemeBuilder before Scheme is built from it.

// validateResourceQuota checks a quota's spec and status as kube does.
func validateResourceQuota(q *corev1.ResourceQuota) field.ErrorList {
	errs := validateQuotaSpec(&q.Spec, specPath)
	status := field.NewPath("status")
	errs = append(errs, validateQuotaResources(q.Status.Hard, status.Child("hard"))...)
	return append(errs, validateQuotaResources(q.Status.Used, status.Child("used"))...)
}

// validateResourceQuotaUpdate refuses a change of scopes: what a quota
// counted so far would not be what it limits.
func validateResourceQuotaUpdate(q, old *corev1.ResourceQuota) field.ErrorList {
	if sets.New(q.Spec.Scopes...).Equal(sets.New(old.Spec.Scopes...)) {
		return nil
	}
	return field.ErrorList{field.Invalid(specPath.Child("scopes"), q.Spec.Scopes, apivalidation.FieldImmutableErrorMsg)}
}

func validateQuotaSpec(spec *corev1.ResourceQuotaSpec, fld *field.Path) field.ErrorList {
	errs := validateQuotaResources(spec.Hard, fld.Child("hard"))
	errs = append(errs, validateQuotaScopes(spec, fld.Child("scopes"))...)
	if spec.ScopeSelector != nil {
		errs = append(errs, validateQuotaScopeSelector(spec, fld.Child("scopeSelector").Child("matchExpressions"))...)
	}
	return errs
}

// validateQuotaResources checks each name is one quota knows (standard,
// or qualified) and each amount is not negative, and whole where the
// resource is counted in units.
func validateQuotaResources(list corev1.ResourceList, fld *field.Path) field.ErrorList {
	var errs field.ErrorList
	for _, name := range sortedNames(list) {
		path, value := fld.Key(string(name)), list[name]
		errs = append(errs, validateQuotaResourceName(name, path)...)
		if value.Cmp(resource.Quantity{}) < 0 {
			errs = append(errs, field.Invalid(path, value.String(), apivalidation.IsNegativeErrorMsg))
		}
		if helper.IsIntegerResourceName(core.ResourceName(name)) && value.MilliValue()%1000 != 0 {
			errs = append(errs, field.Invalid(path, value, "must be an integer"))
		}
	}
	return errs
}

func validateQuotaResourceName(name corev1.ResourceName, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	for _, msg := range utilvalidation.IsQualifiedName(string(name)) {
		errs = append(errs, field.Invalid(path, name, msg))
	}
	if strings.Contains(string(name), "/") {
		return errs
	}
	if len(errs) == 0 && !helper.IsStandardResourceName(core.ResourceName(name)) {
		errs = append(errs, field.Invalid(path, name, "must be a standard resource type or fully qualified"))
	}
	if !helper.IsStandardQuotaResourceName(core.ResourceName(name)) {
		errs = append(errs, field.Invalid(path, name, "must be a standard resource for quota"))
	}
	return errs
}

// conflictingScopes are the pairs no quota may have both of.
var conflictingScopes = [][2]corev1.ResourceQuotaScope{
	{corev1.ResourceQuotaScopeBestEffort, corev1.ResourceQuotaScopeNotBestEffort},
	{corev1.ResourceQuotaScopeTerminating, corev1.ResourceQuotaScopeNotTerminating},
}

// scopeMisfits reports whether scope may not limit one of the standard
// resources hard names.
func scopeMisfits(scope corev1.ResourceQuotaScope, hard corev1.ResourceList) int {
	n := 0
	for _, name := range sortedNames(hard) {
		if helper.IsStandardQuotaResourceName(core.ResourceName(name)) &&
			!helper.IsResourceQuotaScopeValidForResource(core.ResourceQuotaScope(scope), core.ResourceName(name)) {
			n++
		}
	}
	return n
}

func validateQuotaScopes(spec *corev1.ResourceQuotaSpec, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	if len(spec.Scopes) == 0 {
		return nil
	}
	for _, scope := range spec.Scopes {
		if !helper.IsStandardResourceQuotaScope(core.ResourceQuotaScope(scope)) {
			errs = append(errs, field.Invalid(path, spec.Scopes, "unsupported scope"))
		}
		for range scopeMisfits(scope, spec.Hard) {
			errs = append(errs, field.Invalid(path, spec.Scopes, "unsupported scope applied to resource"))
		}
	}
	if hasConflictingScopes(spec.Scopes) {
		errs = append(errs, field.Invalid(path, spec.Scopes, "conflicting scopes"))
	}
	return errs
}

func hasConflictingScopes(scopes []corev1.ResourceQuotaScope) bool {
	set := sets.New(scopes...)
	for _, pair := range conflictingScopes {
		if set.HasAll(pair[0], pair[1]) {
			return true
		}
	}
	return false
}

func validateQuotaScopeSelector(spec *corev1.ResourceQuotaSpec, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	var scopes []corev1.ResourceQuotaScope
	for _, req := range spec.ScopeSelector.MatchExpressions {
		if !helper.IsStandardResourceQuotaScope(core.ResourceQuotaScope(req.ScopeName)) {
			errs = append(errs, field.Invalid(path.Child("scopeName"), req.ScopeName, "unsupported scope"))
		}
		for range scopeMisfits(req.ScopeName, spec.Hard) {
			// kube shows the selector as its internal type prints.
			errs = append(errs, field.Invalid(path, internalScopeSelector(spec.ScopeSelector), "unsupported scope applied to resource"))
		}
		switch req.ScopeName {
		case corev1.ResourceQuotaScopeBestEffort, corev1.ResourceQuotaScopeNotBestEffort, corev1.ResourceQuotaScopeTerminating,
			corev1.ResourceQuotaScopeNotTerminating, corev1.ResourceQuotaScopeCrossNamespacePodAffinity:
			if req.Operator != corev1.ScopeSelectorOpExists {
				errs = append(errs, field.Invalid(path.Child("operator"), req.Operator, "must be 'Exists' when scope is any of "+
					"ResourceQuotaScopeTerminating, ResourceQuotaScopeNotTerminating, ResourceQuotaScopeBestEffort, "+
					"ResourceQuotaScopeNotBestEffort or ResourceQuotaScopeCrossNamespacePodAffinity"))
			}
		}
		switch req.Operator {
		case corev1.ScopeSelectorOpIn, corev1.ScopeSelectorOpNotIn:
			if len(req.Values) == 0 {
				errs = append(errs, field.Required(path.Child("values"), "must be at least one value when `operator` is 'In' or 'NotIn' for scope selector"))
			}
		case corev1.ScopeSelectorOpExists, corev1.ScopeSelectorOpDoesNotExist:
			if len(req.Values) != 0 {
				errs = append(errs, field.Invalid(path.Child("values"), req.Values, "must be no value when `operator` is 'Exist' or 'DoesNotExist' for scope selector"))
			}
		default:
			errs = append(errs, field.Invalid(path.Child("operator"), req.Operator, "not a valid selector operator"))
		}
		scopes = append(scopes, req.ScopeName)
	}
	if hasConflictingScopes(scopes) {
		// kube names the spec's scopes here, not the selector's.
		errs = append(errs, field.Invalid(path, spec.Scopes, "conflicting scopes"))
	}
	return errs
}

func internalScopeSelector(sel *corev1.ScopeSelector) *core.ScopeSelector {
	out := &core.ScopeSelector{}
	for _, r := range sel.MatchExpressions {
		out.MatchExpressions = append(out.MatchExpressions, core.ScopedResourceSelectorRequirement{
			ScopeName: core.ResourceQuotaScope(r.ScopeName), Operator: core.ScopeSelectorOperator(r.Operator), Values: r.Values})
	}
	return out
}

func sortedNames(list corev1.ResourceList) []corev1.ResourceName {
	names := make([]corev1.ResourceName, 0, len(list))
	for name := range list {
		names = append(names, name)
	}
	sort.Slice(names, func(i, j int) bool { return names[i] < names[j] })
	return names
}

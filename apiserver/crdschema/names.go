package crdschema

import (
	"fmt"
	"slices"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	utilerrors "k8s.io/apimachinery/pkg/util/errors"
	"k8s.io/apimachinery/pkg/util/sets"
)

// NamesAccepted reports whether crd's requested names can be served, with the
// NamesAccepted condition reason and message kube's naming controller uses.
func NamesAccepted(crd *apiextensionsv1.CustomResourceDefinition, others []*apiextensionsv1.CustomResourceDefinition, builtinResource func(group, resource string) bool) (ok bool, reason, message string) {
	_, cond := AcceptNames(crd, others, builtinResource)
	return cond.Status == apiextensionsv1.ConditionTrue, cond.Reason, cond.Message
}

// AcceptNames computes status.acceptedNames and the NamesAccepted condition
// for crd, like kube's naming controller: a name conflicts when another CRD
// of the same group has already accepted it. Names crd already accepted stay
// its own. builtinResource (may be nil) reports resources of built-in APIs,
// which kube protects by API group ownership; checking them here catches a
// CRD that shadows a built-in resource of the same group.
func AcceptNames(crd *apiextensionsv1.CustomResourceDefinition, others []*apiextensionsv1.CustomResourceDefinition, builtinResource func(group, resource string) bool) (apiextensionsv1.CustomResourceDefinitionNames, apiextensionsv1.CustomResourceDefinitionCondition) {
	group := crd.Spec.Group
	usedResources, usedKinds := sets.New[string](), sets.New[string]()
	for _, other := range others {
		if other.Spec.Group != group || other.Name == crd.Name {
			continue
		}
		n := other.Status.AcceptedNames
		usedResources.Insert(n.Plural, n.Singular)
		usedResources.Insert(n.ShortNames...)
		usedKinds.Insert(n.Kind, n.ListKind)
	}
	usedResources.Delete("")
	usedKinds.Delete("")
	inUse := func(requested, accepted string, used sets.Set[string]) error {
		if requested == accepted || !used.Has(requested) {
			return nil
		}
		return fmt.Errorf("%q is already in use", requested)
	}

	cond := apiextensionsv1.CustomResourceDefinitionCondition{Type: apiextensionsv1.NamesAccepted, Status: apiextensionsv1.ConditionUnknown}
	conflict := func(reason string, err error) {
		cond.Status, cond.Reason, cond.Message = apiextensionsv1.ConditionFalse, reason, err.Error()
	}
	requested, accepted := crd.Spec.Names, crd.Status.AcceptedNames
	names := accepted

	if builtinResource != nil && builtinResource(group, requested.Plural) {
		conflict("PluralConflict", fmt.Errorf("%q is already in use by a built-in resource", requested.Plural))
	} else if err := inUse(requested.Plural, accepted.Plural, usedResources); err != nil {
		conflict("PluralConflict", err)
	} else {
		names.Plural = requested.Plural
	}
	if err := inUse(requested.Singular, accepted.Singular, usedResources); err != nil {
		conflict("SingularConflict", err)
	} else {
		names.Singular = requested.Singular
	}
	if !slices.Equal(requested.ShortNames, accepted.ShortNames) {
		var errs []error
		for _, short := range requested.ShortNames {
			if slices.Contains(accepted.ShortNames, short) {
				continue
			}
			if err := inUse(short, "", usedResources); err != nil {
				errs = append(errs, err)
			}
		}
		if err := utilerrors.NewAggregate(errs); err != nil {
			conflict("ShortNamesConflict", err)
		} else {
			names.ShortNames = requested.ShortNames
		}
	}
	if err := inUse(requested.Kind, accepted.Kind, usedKinds); err != nil {
		conflict("KindConflict", err)
	} else {
		names.Kind = requested.Kind
	}
	if err := inUse(requested.ListKind, accepted.ListKind, usedKinds); err != nil {
		conflict("ListKindConflict", err)
	} else {
		names.ListKind = requested.ListKind
	}
	names.Categories = requested.Categories

	if cond.Status == apiextensionsv1.ConditionUnknown {
		cond.Status, cond.Reason, cond.Message = apiextensionsv1.ConditionTrue, "NoConflicts", "no conflicts found"
	}
	return names, cond
}

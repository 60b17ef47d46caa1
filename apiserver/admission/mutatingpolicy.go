package admission

import (
	"context"
	"encoding/json"
	"fmt"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	"github.com/devplane/devplane/apiserver/authz"
	"github.com/devplane/devplane/apiserver/builtin"
	"github.com/devplane/devplane/apiserver/patch"
)

var (
	mutatingPoliciesGVR = admissionregistrationv1.SchemeGroupVersion.WithResource("mutatingadmissionpolicies")
	mutatingBindingsGVR = admissionregistrationv1.SchemeGroupVersion.WithResource("mutatingadmissionpolicybindings")
)

// MutatingAdmissionPolicies applies the CEL mutations of bound
// MutatingAdmissionPolicies, in binding name order, once per param object:
// apply configurations are merged as server-side apply merges
// (structurally, with kube's list keys for built-in kinds) and JSON patches
// applied as RFC 6902. The result goes on through the rest of admission
// and validation like any mutation.
func MutatingAdmissionPolicies(src Source, authorizer authz.Authorizer) Interface {
	return Func{MutateFunc: func(ctx context.Context, a *Attributes) error {
		if a.Object == nil || isNilObject(a.Object) {
			return nil // deletes have nothing to mutate
		}
		return eachBoundPolicy(ctx, src, mutatingBindingsGVR, mutatingPoliciesGVR,
			func(b *admissionregistrationv1.MutatingAdmissionPolicyBinding) string { return b.Spec.PolicyName },
			func(p *admissionregistrationv1.MutatingAdmissionPolicy, b *admissionregistrationv1.MutatingAdmissionPolicyBinding) error {
				return mutateWithPolicy(ctx, src, authorizer, p, b, a)
			})
	}}
}

func mutateWithPolicy(ctx context.Context, src Source, authorizer authz.Authorizer, p *admissionregistrationv1.MutatingAdmissionPolicy,
	b *admissionregistrationv1.MutatingAdmissionPolicyBinding, a *Attributes) error {
	if p.Spec.MatchConstraints == nil {
		return nil
	}
	if ok, err := matchResources(ctx, src, p.Spec.MatchConstraints, a); err != nil || !ok {
		return err
	}
	if b.Spec.MatchResources != nil {
		if ok, err := matchResources(ctx, src, b.Spec.MatchResources, a); err != nil || !ok {
			return err
		}
	}
	fail := p.Spec.FailurePolicy == nil || *p.Spec.FailurePolicy == admissionregistrationv1.Fail
	denied := func(err error) error {
		if !fail {
			return nil
		}
		return apierrors.NewForbidden(a.Resource.GroupResource(), a.Name,
			fmt.Errorf("policy '%s' with binding '%s' denied request: %v", p.Name, b.Name, err))
	}
	params, err := collectParams(ctx, src, p.Spec.ParamKind, b.Spec.ParamRef, a)
	if err != nil {
		return denied(fmt.Errorf("failed to configure binding: %v", err))
	}
	for _, param := range params {
		vars := celRequestVars(ctx, a, authorizer)
		vars["params"] = toCEL(param)
		if a.Namespace != "" {
			if ns, err := namespaceOf(ctx, src, a.Namespace); err == nil && ns != nil {
				vars["namespaceObject"] = toCEL(ns)
			}
		}
		matched := true
		for _, mc := range p.Spec.MatchConditions {
			ok, err := evalBool(mc.Expression, vars)
			if err != nil {
				return denied(fmt.Errorf("expression '%s' resulted in error: %v", mc.Expression, err))
			}
			if !ok {
				matched = false
				break
			}
		}
		if !matched {
			continue
		}
		variables := map[string]any{}
		for _, v := range p.Spec.Variables {
			if out, err := evalCEL(v.Expression, withVariables(vars, variables)); err == nil {
				variables[v.Name] = out
			}
		}
		for _, m := range p.Spec.Mutations {
			vars["object"] = toCEL(a.Object) // each mutation sees the previous ones
			out, err := mutate(a, m, withVariables(vars, variables))
			if err != nil {
				if err := denied(err); err != nil {
					return err
				}
				continue
			}
			a.Object = out
		}
	}
	return nil
}

// mutate evaluates one mutation and returns the mutated object.
func mutate(a *Attributes, m admissionregistrationv1.Mutation, vars map[string]any) (runtime.Object, error) {
	gvk := a.Kind
	if gvk.Empty() {
		gvk = a.Object.GetObjectKind().GroupVersionKind()
	}
	switch m.PatchType {
	case admissionregistrationv1.PatchTypeApplyConfiguration:
		if m.ApplyConfiguration == nil {
			return nil, fmt.Errorf("applyConfiguration is required")
		}
		val, err := evalCEL(m.ApplyConfiguration.Expression, vars)
		if err != nil {
			return nil, fmt.Errorf("expression '%s' resulted in error: %v", m.ApplyConfiguration.Expression, err)
		}
		applied, err := celToNative(val)
		if err != nil {
			return nil, err
		}
		body, err := json.Marshal(applied)
		if err != nil {
			return nil, err
		}
		// Built-in kinds merge with their list keys (strategic merge
		// follows the same patchMergeKeys server-side apply uses);
		// custom resources as a JSON merge.
		kind := types.MergePatchType
		if isBuiltinKind(gvk) {
			kind = types.StrategicMergePatchType
		}
		out, _, err := patch.Apply(a.Object, gvk, kind, body, "")
		return out, err
	case admissionregistrationv1.PatchTypeJSONPatch:
		if m.JSONPatch == nil {
			return nil, fmt.Errorf("jsonPatch is required")
		}
		val, err := evalCEL(m.JSONPatch.Expression, vars)
		if err != nil {
			return nil, fmt.Errorf("expression '%s' resulted in error: %v", m.JSONPatch.Expression, err)
		}
		ops, err := celToNative(val)
		if err != nil {
			return nil, err
		}
		list, ok := ops.([]any)
		if !ok && ops != nil {
			return nil, fmt.Errorf("JSONPatch expression must return a list of JSONPatch values")
		}
		if len(list) == 0 {
			return a.Object, nil
		}
		body, err := json.Marshal(list)
		if err != nil {
			return nil, err
		}
		out, _, err := patch.Apply(a.Object, gvk, types.JSONPatchType, body, "")
		return out, err
	}
	return nil, fmt.Errorf("unsupported patchType %q", m.PatchType)
}

// isBuiltinKind tells k8s.io/api's kinds from custom resources'.
func isBuiltinKind(gvk schema.GroupVersionKind) bool {
	return builtin.Scheme.Recognizes(gvk)
}

package admission

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sort"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/devplane/devplane/apiserver/authz"
)

var (
	policiesGVR = admissionregistrationv1.SchemeGroupVersion.WithResource("validatingadmissionpolicies")
	bindingsGVR = admissionregistrationv1.SchemeGroupVersion.WithResource("validatingadmissionpolicybindings")
)

// ValidatingAdmissionPolicies evaluates the CEL validations of bound
// ValidatingAdmissionPolicies, once per param object when the policy has a
// paramKind.
func ValidatingAdmissionPolicies(src Source, authorizer authz.Authorizer) Interface {
	return Func{ValidateFunc: func(ctx context.Context, a *Attributes) error {
		return eachBoundPolicy(ctx, src, bindingsGVR, policiesGVR,
			func(b *admissionregistrationv1.ValidatingAdmissionPolicyBinding) string { return b.Spec.PolicyName },
			func(p *admissionregistrationv1.ValidatingAdmissionPolicy, b *admissionregistrationv1.ValidatingAdmissionPolicyBinding) error {
				return evaluatePolicy(ctx, src, authorizer, p, b, a)
			})
	}}
}

// eachBoundPolicy calls fn for every binding of bindingsGVR, in name
// order, with the policy of policiesGVR it names; bindings of missing
// policies are skipped, as in kube.
func eachBoundPolicy[B, P runtime.Object](ctx context.Context, src Source, bindingsGVR, policiesGVR schema.GroupVersionResource,
	policyName func(B) string, fn func(P, B) error) error {
	bindings, err := src.List(ctx, bindingsGVR, "", false)
	if err != nil || len(bindings) == 0 {
		return err
	}
	sort.Slice(bindings, func(i, j int) bool { return nameOfObject(bindings[i]) < nameOfObject(bindings[j]) })
	for _, bo := range bindings {
		b := bo.(B)
		po, err := src.Get(ctx, policiesGVR, "", policyName(b))
		if apierrors.IsNotFound(err) {
			continue
		}
		if err != nil {
			return err
		}
		if err := fn(po.(P), b); err != nil {
			return err
		}
	}
	return nil
}

func matchResources(ctx context.Context, src Source, m *admissionregistrationv1.MatchResources, a *Attributes) (bool, error) {
	if m == nil {
		return true, nil
	}
	toRule := func(r admissionregistrationv1.NamedRuleWithOperations) (admissionregistrationv1.RuleWithOperations, bool) {
		if len(r.ResourceNames) > 0 {
			found := false
			for _, n := range r.ResourceNames {
				if n == a.Name {
					found = true
				}
			}
			if !found {
				return r.RuleWithOperations, false
			}
		}
		return r.RuleWithOperations, true
	}
	for _, r := range m.ExcludeResourceRules {
		if rule, ok := toRule(r); ok && ruleMatches(rule, a) {
			return false, nil
		}
	}
	if len(m.ResourceRules) > 0 {
		matched := false
		for _, r := range m.ResourceRules {
			if rule, ok := toRule(r); ok && ruleMatches(rule, a) {
				matched = true
				break
			}
		}
		if !matched {
			return false, nil
		}
	}
	if ok, err := namespaceSelectorMatches(ctx, src, m.NamespaceSelector, a); err != nil || !ok {
		return false, err
	}
	return objectSelectorMatches(m.ObjectSelector, a)
}

func evaluatePolicy(ctx context.Context, src Source, authorizer authz.Authorizer, p *admissionregistrationv1.ValidatingAdmissionPolicy,
	b *admissionregistrationv1.ValidatingAdmissionPolicyBinding, a *Attributes) error {
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
	prefix := fmt.Sprintf("ValidatingAdmissionPolicy '%s' with binding '%s' denied request: ", p.Name, b.Name)
	fail := p.Spec.FailurePolicy == nil || *p.Spec.FailurePolicy == admissionregistrationv1.Fail
	params, err := collectParams(ctx, src, p.Spec.ParamKind, b.Spec.ParamRef, a)
	if err != nil {
		if !fail {
			return nil
		}
		return policyDenial(prefix+"failed to configure binding: "+err.Error(), metav1.StatusReasonInvalid)
	}
	vars := celRequestVars(ctx, a, authorizer)
	if a.Namespace != "" {
		if ns, err := namespaceOf(ctx, src, a.Namespace); err == nil && ns != nil {
			vars["namespaceObject"] = toCEL(ns)
		}
	}
	for _, param := range params {
		vars["params"] = toCEL(param)
		if err := evaluateWithParams(ctx, p, b, vars, prefix, fail, a); err != nil {
			return err
		}
	}
	return nil
}

// evaluateWithParams runs the policy's match conditions and validations
// against one param object (vars["params"], nil without a paramKind).
func evaluateWithParams(ctx context.Context, p *admissionregistrationv1.ValidatingAdmissionPolicy,
	b *admissionregistrationv1.ValidatingAdmissionPolicyBinding, vars map[string]any, prefix string, fail bool, a *Attributes) error {
	for _, mc := range p.Spec.MatchConditions {
		ok, err := evalBool(mc.Expression, vars)
		if err != nil {
			if fail {
				return apierrors.NewForbidden(a.Resource.GroupResource(), a.Name,
					fmt.Errorf("%sexpression '%s' resulted in error: %v", prefix, mc.Expression, err))
			}
			return nil
		}
		if !ok {
			return nil
		}
	}
	variables := map[string]any{}
	for _, v := range p.Spec.Variables {
		out, err := evalCEL(v.Expression, withVariables(vars, variables))
		if err == nil {
			variables[v.Name] = out
		}
	}
	vars = withVariables(vars, variables)
	deny, warn := false, false
	for _, act := range b.Spec.ValidationActions {
		switch act {
		case admissionregistrationv1.Deny:
			deny = true
		case admissionregistrationv1.Warn:
			warn = true
		}
	}
	for _, v := range p.Spec.Validations {
		ok, err := evalBool(v.Expression, vars)
		var msg string
		reason := metav1.StatusReasonInvalid
		switch {
		case err != nil:
			if !fail {
				continue
			}
			msg = fmt.Sprintf("expression '%s' resulted in error: %v", v.Expression, err)
		case ok:
			continue
		default:
			msg = v.Message
			if v.MessageExpression != "" {
				if out, err := evalCEL(v.MessageExpression, vars); err == nil {
					if s, isStr := out.Value().(string); isStr && s != "" {
						msg = s
					}
				}
			}
			if msg == "" {
				msg = "failed expression: " + v.Expression
			}
			if v.Reason != nil {
				reason = *v.Reason
			}
		}
		if warn {
			AddWarning(ctx, fmt.Sprintf("Validation failed for ValidatingAdmissionPolicy '%s' with binding '%s': %s", p.Name, b.Name, msg))
		}
		if deny {
			return policyDenial(prefix+msg, reason)
		}
	}
	return nil
}

func policyDenial(text string, reason metav1.StatusReason) error {
	return &apierrors.StatusError{ErrStatus: metav1.Status{Status: metav1.StatusFailure, Message: text,
		Reason: reason, Code: reasonCode(reason),
		Details: &metav1.StatusDetails{Causes: []metav1.StatusCause{{Message: text}}}}}
}

// collectParams finds a binding's param objects as kube does: none needed
// without a paramKind (one evaluation, params null); by name or label
// selector in paramRef's namespace, else the request's, for a namespaced
// param kind; no param at all is allowed unless parameterNotFoundAction is
// Deny.
func collectParams(ctx context.Context, src Source, kind *admissionregistrationv1.ParamKind,
	ref *admissionregistrationv1.ParamRef, a *Attributes) ([]runtime.Object, error) {
	if kind == nil {
		return []runtime.Object{nil}, nil
	}
	if ref == nil {
		return nil, fmt.Errorf("paramKind kind `%s` is specified but paramRef is not set in binding", kind.Kind)
	}
	gv, err := schema.ParseGroupVersion(kind.APIVersion)
	if err != nil {
		return nil, fmt.Errorf("paramKind apiVersion %q: %v", kind.APIVersion, err)
	}
	gvr, namespaced, ok := src.Resource(gv.WithKind(kind.Kind))
	if !ok {
		return nil, fmt.Errorf("failed to find resource referenced by paramKind: '%s'", gv.WithKind(kind.Kind))
	}
	namespace := ""
	switch {
	case !namespaced:
	case ref.Namespace != "":
		namespace = ref.Namespace
	case a.Namespace != "":
		namespace = a.Namespace
	default:
		return nil, errors.New("cannot use namespaced paramRef in policy binding that matches cluster-scoped resources")
	}
	var params []runtime.Object
	switch {
	case ref.Name != "":
		param, err := src.Get(ctx, gvr, namespace, ref.Name)
		if err != nil && !apierrors.IsNotFound(err) {
			return nil, err
		}
		if err == nil {
			params = append(params, param)
		}
	case ref.Selector != nil:
		selector, err := metav1.LabelSelectorAsSelector(ref.Selector)
		if err != nil {
			return nil, err
		}
		all, err := src.List(ctx, gvr, namespace, false)
		if err != nil {
			return nil, err
		}
		for _, o := range all {
			if acc, err := meta.Accessor(o); err == nil && selector.Matches(labels.Set(acc.GetLabels())) {
				params = append(params, o)
			}
		}
	}
	if len(params) == 0 && ref.ParameterNotFoundAction != nil && *ref.ParameterNotFoundAction == admissionregistrationv1.DenyAction {
		return nil, errors.New("no params found for policy binding with `Deny` parameterNotFoundAction")
	}
	return params, nil
}

func withVariables(vars map[string]any, variables map[string]any) map[string]any {
	out := make(map[string]any, len(vars)+1)
	for k, v := range vars {
		out[k] = v
	}
	out["variables"] = variables
	return out
}

func reasonCode(r metav1.StatusReason) int32 {
	switch r {
	case metav1.StatusReasonUnauthorized:
		return http.StatusUnauthorized
	case metav1.StatusReasonForbidden:
		return http.StatusForbidden
	case metav1.StatusReasonRequestEntityTooLarge:
		return http.StatusRequestEntityTooLarge
	case metav1.StatusReasonInvalid:
		return http.StatusUnprocessableEntity
	}
	return http.StatusBadRequest
}

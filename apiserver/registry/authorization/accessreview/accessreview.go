// Package accessreview serves the access reviews of authorization.k8s.io:
// SubjectAccessReview, LocalSubjectAccessReview, SelfSubjectAccessReview
// and SelfSubjectRulesReview, answered by the server's authorizer.
package accessreview

import (
	"context"
	"errors"

	authorizationv1 "k8s.io/api/authorization/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/devplane/devplane/apiserver/authz"
	"github.com/devplane/devplane/apiserver/registry"
	"github.com/devplane/devplane/apiserver/request"
)

// RuleResolver lists the rules a user holds in a namespace
// (SelfSubjectRulesReview).
type RuleResolver interface {
	RulesFor(user *request.User, namespace string) (resourceRules, nonResourceRules []rbacv1.PolicyRule, err error)
}

// reviews answer with authorizer; rules is nil when every user may do
// everything (AlwaysAllow).
type reviews struct {
	authorizer authz.Authorizer
	rules      RuleResolver
}

// Install serves the four review resources of authorization.k8s.io.
func Install(reg *registry.Registry, authorizer authz.Authorizer, rules RuleResolver) {
	s := &reviews{authorizer: authorizer, rules: rules}
	gv := authorizationv1.SchemeGroupVersion
	add := func(resource, kind string, namespaced bool, newObj func() runtime.Object,
		create func(ctx context.Context, namespace string, obj runtime.Object) (runtime.Object, error)) {
		reg.Add(&registry.Resource{
			GVR:        gv.WithResource(resource),
			Kind:       kind,
			Singular:   resource[:len(resource)-1],
			Namespaced: namespaced,
			Verbs:      []string{"create"},
			New:        newObj,
			Create:     create,
		})
	}
	add("selfsubjectaccessreviews", "SelfSubjectAccessReview", false,
		func() runtime.Object { return &authorizationv1.SelfSubjectAccessReview{} }, s.selfSubjectAccessReview)
	add("selfsubjectrulesreviews", "SelfSubjectRulesReview", false,
		func() runtime.Object { return &authorizationv1.SelfSubjectRulesReview{} }, s.selfSubjectRulesReview)
	add("subjectaccessreviews", "SubjectAccessReview", false,
		func() runtime.Object { return &authorizationv1.SubjectAccessReview{} }, s.subjectAccessReview)
	add("localsubjectaccessreviews", "LocalSubjectAccessReview", true,
		func() runtime.Object { return &authorizationv1.LocalSubjectAccessReview{} }, s.localSubjectAccessReview)
}

func requestUser(ctx context.Context) (*request.User, error) {
	u, ok := request.UserFrom(ctx)
	if !ok {
		return nil, apierrors.NewInternalError(errors.New("no user found for request"))
	}
	return u, nil
}

func invalid(kind string, path *field.Path, value any, msg string) error {
	return apierrors.NewInvalid(authorizationv1.SchemeGroupVersion.WithKind(kind).GroupKind(), "",
		field.ErrorList{field.Invalid(path, value, msg)})
}

// accessAttributes turns a review spec into authorizer attributes.
func accessAttributes(kind string, u *request.User, res *authorizationv1.ResourceAttributes, nonRes *authorizationv1.NonResourceAttributes) (authz.Attributes, error) {
	if (res == nil) == (nonRes == nil) {
		return authz.Attributes{}, invalid(kind, field.NewPath("spec", "resourceAttributes"), "",
			"exactly one of nonResourceAttributes or resourceAttributes must be specified")
	}
	if nonRes != nil {
		return authz.Attributes{User: u, Verb: nonRes.Verb, Path: nonRes.Path}, nil
	}
	return authz.Attributes{User: u, Verb: res.Verb, APIGroup: res.Group, APIVersion: res.Version,
		Namespace: res.Namespace, Resource: res.Resource, Subresource: res.Subresource, Name: res.Name,
		ResourceRequest: true}, nil
}

func (s *reviews) decide(ctx context.Context, attrs authz.Attributes) authorizationv1.SubjectAccessReviewStatus {
	d, reason, err := s.authorizer.Authorize(ctx, attrs)
	st := authorizationv1.SubjectAccessReviewStatus{Allowed: d == authz.Allow, Denied: d == authz.Deny, Reason: reason}
	if err != nil {
		st.EvaluationError = err.Error()
	}
	return st
}

func (s *reviews) selfSubjectAccessReview(ctx context.Context, _ string, obj runtime.Object) (runtime.Object, error) {
	review := obj.(*authorizationv1.SelfSubjectAccessReview)
	u, err := requestUser(ctx)
	if err != nil {
		return nil, err
	}
	attrs, err := accessAttributes("SelfSubjectAccessReview", u, review.Spec.ResourceAttributes, review.Spec.NonResourceAttributes)
	if err != nil {
		return nil, err
	}
	review.Status = s.decide(ctx, attrs)
	return review, nil
}

func reviewUser(spec authorizationv1.SubjectAccessReviewSpec) *request.User {
	u := &request.User{Name: spec.User, UID: spec.UID, Groups: append([]string(nil), spec.Groups...)}
	if len(spec.Extra) > 0 {
		u.Extra = map[string][]string{}
		for k, v := range spec.Extra {
			u.Extra[k] = append([]string(nil), v...)
		}
	}
	return u
}

func (s *reviews) subjectAccessReview(ctx context.Context, _ string, obj runtime.Object) (runtime.Object, error) {
	review := obj.(*authorizationv1.SubjectAccessReview)
	spec := review.Spec
	if spec.User == "" && len(spec.Groups) == 0 {
		return nil, invalid("SubjectAccessReview", field.NewPath("spec", "user"), spec.User,
			"at least one of user or group must be specified")
	}
	attrs, err := accessAttributes("SubjectAccessReview", reviewUser(spec), spec.ResourceAttributes, spec.NonResourceAttributes)
	if err != nil {
		return nil, err
	}
	review.Status = s.decide(ctx, attrs)
	return review, nil
}

func (s *reviews) localSubjectAccessReview(ctx context.Context, namespace string, obj runtime.Object) (runtime.Object, error) {
	review := obj.(*authorizationv1.LocalSubjectAccessReview)
	spec := review.Spec
	if review.Namespace == "" {
		review.Namespace = namespace
	}
	if review.Namespace != namespace {
		return nil, apierrors.NewBadRequest("namespace of the review does not match the request namespace")
	}
	if spec.User == "" && len(spec.Groups) == 0 {
		return nil, invalid("LocalSubjectAccessReview", field.NewPath("spec", "user"), spec.User,
			"at least one of user or group must be specified")
	}
	if spec.NonResourceAttributes != nil {
		return nil, invalid("LocalSubjectAccessReview", field.NewPath("spec", "nonResourceAttributes"), "",
			"disallowed on this kind of request")
	}
	if spec.ResourceAttributes != nil && spec.ResourceAttributes.Namespace != namespace {
		return nil, invalid("LocalSubjectAccessReview", field.NewPath("spec", "resourceAttributes", "namespace"),
			spec.ResourceAttributes.Namespace, "must match metadata.namespace")
	}
	attrs, err := accessAttributes("LocalSubjectAccessReview", reviewUser(spec), spec.ResourceAttributes, nil)
	if err != nil {
		return nil, err
	}
	review.Status = s.decide(ctx, attrs)
	return review, nil
}

func (s *reviews) selfSubjectRulesReview(ctx context.Context, _ string, obj runtime.Object) (runtime.Object, error) {
	review := obj.(*authorizationv1.SelfSubjectRulesReview)
	u, err := requestUser(ctx)
	if err != nil {
		return nil, err
	}
	if review.Spec.Namespace == "" {
		return nil, invalid("SelfSubjectRulesReview", field.NewPath("spec", "namespace"), "", "must be specified")
	}
	var resRules, nonResRules []rbacv1.PolicyRule
	if s.rules != nil {
		resRules, nonResRules, err = s.rules.RulesFor(u, review.Spec.Namespace)
	} else {
		resRules = []rbacv1.PolicyRule{{Verbs: []string{"*"}, APIGroups: []string{"*"}, Resources: []string{"*"}}}
		nonResRules = []rbacv1.PolicyRule{{Verbs: []string{"*"}, NonResourceURLs: []string{"*"}}}
	}
	st := authorizationv1.SubjectRulesReviewStatus{
		ResourceRules:    []authorizationv1.ResourceRule{},
		NonResourceRules: []authorizationv1.NonResourceRule{},
	}
	for _, r := range resRules {
		st.ResourceRules = append(st.ResourceRules, authorizationv1.ResourceRule{
			Verbs: r.Verbs, APIGroups: r.APIGroups, Resources: r.Resources, ResourceNames: r.ResourceNames})
	}
	for _, r := range nonResRules {
		st.NonResourceRules = append(st.NonResourceRules, authorizationv1.NonResourceRule{
			Verbs: r.Verbs, NonResourceURLs: r.NonResourceURLs})
	}
	if err != nil {
		st.Incomplete = true
		st.EvaluationError = err.Error()
	}
	review.Status = st
	return review, nil
}

package controlplane

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/devplane/devplane/apiserver/authz"
	"github.com/devplane/devplane/apiserver/registry"
	"github.com/devplane/devplane/apiserver/request"
	"github.com/devplane/devplane/apiserver/serviceaccount"
)

// installReviews serves the create-only review resources of
// authorization.k8s.io and authentication.k8s.io, and serviceaccounts/token.
func (s *security) installReviews() {
	authzGV := authorizationv1.SchemeGroupVersion
	authnGV := authenticationv1.SchemeGroupVersion
	add := func(gv schema.GroupVersion, resource, kind string, namespaced bool, newObj func() runtime.Object,
		create func(ctx context.Context, namespace string, obj runtime.Object) (runtime.Object, error)) {
		s.cp.CoreRegistry.Add(&registry.Resource{
			GVR:        gv.WithResource(resource),
			Kind:       kind,
			Singular:   resource[:len(resource)-1],
			Namespaced: namespaced,
			Verbs:      []string{"create"},
			New:        newObj,
			Create:     create,
		})
	}
	add(authzGV, "selfsubjectaccessreviews", "SelfSubjectAccessReview", false,
		func() runtime.Object { return &authorizationv1.SelfSubjectAccessReview{} }, s.selfSubjectAccessReview)
	add(authzGV, "selfsubjectrulesreviews", "SelfSubjectRulesReview", false,
		func() runtime.Object { return &authorizationv1.SelfSubjectRulesReview{} }, s.selfSubjectRulesReview)
	add(authzGV, "subjectaccessreviews", "SubjectAccessReview", false,
		func() runtime.Object { return &authorizationv1.SubjectAccessReview{} }, s.subjectAccessReview)
	add(authzGV, "localsubjectaccessreviews", "LocalSubjectAccessReview", true,
		func() runtime.Object { return &authorizationv1.LocalSubjectAccessReview{} }, s.localSubjectAccessReview)
	add(authnGV, "tokenreviews", "TokenReview", false,
		func() runtime.Object { return &authenticationv1.TokenReview{} }, s.tokenReview)
	add(authnGV, "selfsubjectreviews", "SelfSubjectReview", false,
		func() runtime.Object { return &authenticationv1.SelfSubjectReview{} }, s.selfSubjectReview)

	// serviceaccounts/token: the served resource gains a subresource.
	s.cp.CoreRegistry.AddCreateSubresource(schema.GroupVersionResource{Version: "v1", Resource: "serviceaccounts"}, "token", &registry.SubresourceCreate{
		Kind:   authnGV.WithKind("TokenRequest"),
		New:    func() runtime.Object { return &authenticationv1.TokenRequest{} },
		Create: s.tokenRequest,
	})
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

func (s *security) decide(ctx context.Context, attrs authz.Attributes) authorizationv1.SubjectAccessReviewStatus {
	d, reason, err := s.authorizer.Authorize(ctx, attrs)
	st := authorizationv1.SubjectAccessReviewStatus{Allowed: d == authz.Allow, Denied: d == authz.Deny, Reason: reason}
	if err != nil {
		st.EvaluationError = err.Error()
	}
	return st
}

func (s *security) selfSubjectAccessReview(ctx context.Context, _ string, obj runtime.Object) (runtime.Object, error) {
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

func (s *security) subjectAccessReview(ctx context.Context, _ string, obj runtime.Object) (runtime.Object, error) {
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

func (s *security) localSubjectAccessReview(ctx context.Context, namespace string, obj runtime.Object) (runtime.Object, error) {
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

func (s *security) selfSubjectRulesReview(ctx context.Context, _ string, obj runtime.Object) (runtime.Object, error) {
	review := obj.(*authorizationv1.SelfSubjectRulesReview)
	u, err := requestUser(ctx)
	if err != nil {
		return nil, err
	}
	if review.Spec.Namespace == "" {
		return nil, invalid("SelfSubjectRulesReview", field.NewPath("spec", "namespace"), "", "must be specified")
	}
	var resRules, nonResRules []rbacv1.PolicyRule
	if s.rbac != nil {
		resRules, nonResRules, err = s.rbac.RulesFor(u, review.Spec.Namespace)
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

func userInfo(u *request.User) authenticationv1.UserInfo {
	info := authenticationv1.UserInfo{Username: u.Name, UID: u.UID, Groups: append([]string(nil), u.Groups...)}
	if len(u.Extra) > 0 {
		info.Extra = map[string]authenticationv1.ExtraValue{}
		for k, v := range u.Extra {
			info.Extra[k] = append(authenticationv1.ExtraValue(nil), v...)
		}
	}
	return info
}

func (s *security) selfSubjectReview(ctx context.Context, _ string, obj runtime.Object) (runtime.Object, error) {
	review := obj.(*authenticationv1.SelfSubjectReview)
	u, err := requestUser(ctx)
	if err != nil {
		return nil, err
	}
	review.Status.UserInfo = userInfo(u)
	return review, nil
}

func (s *security) tokenReview(ctx context.Context, _ string, obj runtime.Object) (runtime.Object, error) {
	review := obj.(*authenticationv1.TokenReview)
	if review.Spec.Token == "" {
		return nil, apierrors.NewBadRequest("token is required for TokenReview in authentication")
	}
	audiences := review.Spec.Audiences
	saTokens := s.saTokens
	if len(audiences) > 0 {
		saTokens = serviceaccount.Authenticator(s.issuer, audiences, s.lookupServiceAccount).WithBoundObjects(s.lookupBoundObject).
			WithLegacySecrets(s.lookupTokenSecret)
	} else {
		audiences = []string{s.issuer.URL()}
	}
	var (
		u   *request.User
		ok  bool
		err error
	)
	if s.staticTokens != nil {
		r, _ := http.NewRequestWithContext(ctx, http.MethodPost, "/", nil)
		r.Header.Set("Authorization", "Bearer "+review.Spec.Token)
		u, ok, err = s.staticTokens.AuthenticateRequest(r)
	}
	if !ok && err == nil {
		u, ok, err = saTokens.AuthenticateToken(review.Spec.Token)
	}
	switch {
	case err != nil:
		review.Status = authenticationv1.TokenReviewStatus{Error: err.Error()}
	case !ok:
		review.Status = authenticationv1.TokenReviewStatus{Error: "invalid bearer token"}
	default:
		review.Status = authenticationv1.TokenReviewStatus{Authenticated: true, User: userInfo(u), Audiences: audiences}
	}
	return review, nil
}

// Token lifetimes TokenRequest accepts.
const (
	minTokenExpiration = 10 * time.Minute
	maxTokenExpiration = 1 << 32 * time.Second
)

func (s *security) tokenRequest(ctx context.Context, namespace, name string, obj runtime.Object) (runtime.Object, error) {
	req := obj.(*authenticationv1.TokenRequest)
	ctx = request.AsAPIServer(ctx) // the filter already authorized serviceaccounts/token
	sa, err := s.cp.store("", "v1", "serviceaccounts").Get(ctx, namespace, name, metav1.GetOptions{})
	if err != nil {
		return nil, err
	}
	gk := authenticationv1.SchemeGroupVersion.WithKind("TokenRequest").GroupKind()
	if req.Name != "" && req.Name != name {
		return nil, apierrors.NewBadRequest(fmt.Sprintf("metadata.name %q does not match the service account %q", req.Name, name))
	}
	var errs field.ErrorList
	expiration := serviceaccount.DefaultExpiration
	if es := req.Spec.ExpirationSeconds; es != nil {
		expiration = time.Duration(*es) * time.Second
		path := field.NewPath("spec", "expirationSeconds")
		switch {
		case expiration < minTokenExpiration:
			errs = append(errs, field.Invalid(path, *es, "may not specify a duration less than 10 minutes"))
		case expiration > maxTokenExpiration:
			errs = append(errs, field.Invalid(path, *es, "may not specify a duration larger than 2^32 seconds"))
		}
	}
	var bound *serviceaccount.BoundObjectRef
	if ref := req.Spec.BoundObjectRef; ref != nil {
		path := field.NewPath("spec", "boundObjectRef")
		resource, supported := map[string]string{"Pod": "pods", "Secret": "secrets"}[ref.Kind]
		switch {
		case !supported:
			errs = append(errs, field.NotSupported(path.Child("kind"), ref.Kind, []string{"Pod", "Secret"}))
		case ref.APIVersion != "" && ref.APIVersion != "v1":
			errs = append(errs, field.Invalid(path.Child("apiVersion"), ref.APIVersion, `must be "v1"`))
		case ref.Name == "":
			errs = append(errs, field.Required(path.Child("name"), ""))
		}
		if len(errs) == 0 {
			target, err := s.cp.store("", "v1", resource).Get(ctx, namespace, ref.Name, metav1.GetOptions{})
			if err != nil {
				return nil, err
			}
			uid := uidOf(target)
			if ref.UID != "" && ref.UID != uid {
				return nil, apierrors.NewConflict(schema.GroupResource{Resource: resource}, ref.Name,
					fmt.Errorf("the UID in the bound object reference (%s) does not match the UID in record. The object might have been deleted and then recreated", ref.UID))
			}
			bound = &serviceaccount.BoundObjectRef{Kind: ref.Kind, Name: ref.Name, UID: string(uid)}
		}
	}
	if len(errs) > 0 {
		return nil, apierrors.NewInvalid(gk, name, errs)
	}
	audiences := req.Spec.Audiences
	if len(audiences) == 0 {
		audiences = []string{s.issuer.URL()}
	}
	token, expiresAt, err := s.issuer.Issue(serviceaccount.ServiceAccountRef{
		Namespace: namespace, Name: name, UID: string(uidOf(sa)),
	}, audiences, expiration, bound)
	if err != nil {
		return nil, apierrors.NewInternalError(err)
	}
	out := req.DeepCopy()
	out.Name, out.Namespace = name, namespace
	out.CreationTimestamp = metav1.Now()
	out.Spec.Audiences = audiences
	es := int64(expiration / time.Second)
	out.Spec.ExpirationSeconds = &es
	out.Status = authenticationv1.TokenRequestStatus{Token: token, ExpirationTimestamp: metav1.NewTime(expiresAt)}
	return out, nil
}

func uidOf(obj runtime.Object) types.UID {
	acc, err := meta.Accessor(obj)
	if err != nil {
		return ""
	}
	return acc.GetUID()
}

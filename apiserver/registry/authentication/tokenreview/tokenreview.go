// Package tokenreview serves authentication.k8s.io's TokenReview: whether
// a bearer token authenticates, and as whom.
package tokenreview

import (
	"context"

	authenticationv1 "k8s.io/api/authentication/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/devplane/devplane/apiserver/registry"
	"github.com/devplane/devplane/apiserver/registry/authentication/selfsubjectreview"
	"github.com/devplane/devplane/apiserver/request"
)

// AuthenticateFunc authenticates token as a bearer token meant for
// audiences (none: the server's own).
type AuthenticateFunc func(ctx context.Context, token string, audiences []string) (*request.User, bool, error)

// Install serves tokenreviews; a review that names no audiences is
// answered for defaultAudiences.
func Install(reg *registry.Registry, authenticate AuthenticateFunc, defaultAudiences []string) {
	reg.Add(&registry.Resource{
		GVR:      authenticationv1.SchemeGroupVersion.WithResource("tokenreviews"),
		Kind:     "TokenReview",
		Singular: "tokenreview",
		Verbs:    []string{"create"},
		New:      func() runtime.Object { return &authenticationv1.TokenReview{} },
		Create: func(ctx context.Context, _ string, obj runtime.Object) (runtime.Object, error) {
			return review(ctx, obj.(*authenticationv1.TokenReview), authenticate, defaultAudiences)
		},
	})
}

func review(ctx context.Context, review *authenticationv1.TokenReview, authenticate AuthenticateFunc, defaultAudiences []string) (runtime.Object, error) {
	if review.Spec.Token == "" {
		return nil, apierrors.NewBadRequest("token is required for TokenReview in authentication")
	}
	u, ok, err := authenticate(ctx, review.Spec.Token, review.Spec.Audiences)
	audiences := review.Spec.Audiences
	if len(audiences) == 0 {
		audiences = defaultAudiences
	}
	switch {
	case err != nil:
		review.Status = authenticationv1.TokenReviewStatus{Error: err.Error()}
	case !ok:
		review.Status = authenticationv1.TokenReviewStatus{Error: "invalid bearer token"}
	default:
		review.Status = authenticationv1.TokenReviewStatus{Authenticated: true, User: selfsubjectreview.UserInfo(u), Audiences: audiences}
	}
	return review, nil
}

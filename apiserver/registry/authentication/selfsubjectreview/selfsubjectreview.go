// Package selfsubjectreview serves authentication.k8s.io's
// SelfSubjectReview: who the server takes the requester for.
package selfsubjectreview

import (
	"context"
	"errors"

	authenticationv1 "k8s.io/api/authentication/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/devplane/devplane/apiserver/registry"
	"github.com/devplane/devplane/apiserver/request"
)

// Install serves selfsubjectreviews.
func Install(reg *registry.Registry) {
	reg.Add(&registry.Resource{
		GVR:      authenticationv1.SchemeGroupVersion.WithResource("selfsubjectreviews"),
		Kind:     "SelfSubjectReview",
		Singular: "selfsubjectreview",
		Verbs:    []string{"create"},
		New:      func() runtime.Object { return &authenticationv1.SelfSubjectReview{} },
		Create:   create,
	})
}

func create(ctx context.Context, _ string, obj runtime.Object) (runtime.Object, error) {
	review := obj.(*authenticationv1.SelfSubjectReview)
	u, ok := request.UserFrom(ctx)
	if !ok {
		return nil, apierrors.NewInternalError(errors.New("no user found for request"))
	}
	review.Status.UserInfo = UserInfo(u)
	return review, nil
}

// UserInfo is u as authentication.k8s.io reports users.
func UserInfo(u *request.User) authenticationv1.UserInfo {
	info := authenticationv1.UserInfo{Username: u.Name, UID: u.UID, Groups: append([]string(nil), u.Groups...)}
	if len(u.Extra) > 0 {
		info.Extra = map[string]authenticationv1.ExtraValue{}
		for k, v := range u.Extra {
			info.Extra[k] = append(authenticationv1.ExtraValue(nil), v...)
		}
	}
	return info
}

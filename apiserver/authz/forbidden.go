package authz

import (
	"errors"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// ForbiddenMessage words a refusal as kube-apiserver does, e.g.
// `User "x" cannot list resource "pods" in API group "" in the namespace "y"`,
// with ": <reason>" appended when the authorizer gave one.
func ForbiddenMessage(a Attributes, reason string) string {
	var msg string
	switch {
	case !a.ResourceRequest:
		msg = fmt.Sprintf("User %q cannot %s path %q", a.userName(), a.Verb, a.Path)
	default:
		resource := a.Resource
		if a.Subresource != "" {
			resource += "/" + a.Subresource
		}
		if a.Namespace != "" {
			msg = fmt.Sprintf("User %q cannot %s resource %q in API group %q in the namespace %q", a.userName(), a.Verb, resource, a.APIGroup, a.Namespace)
		} else {
			msg = fmt.Sprintf("User %q cannot %s resource %q in API group %q at the cluster scope", a.userName(), a.Verb, resource, a.APIGroup)
		}
	}
	if reason != "" {
		msg += ": " + reason
	}
	return msg
}

// Forbidden is the 403 Status kube-apiserver returns for a refused request:
// `pods "p" is forbidden: User "x" cannot get resource ...`, details naming
// the group, the resource (as kind) and the object.
func Forbidden(a Attributes, reason string) error {
	gr := schema.GroupResource{Group: a.APIGroup, Resource: a.Resource}
	return apierrors.NewForbidden(gr, a.Name, errors.New(ForbiddenMessage(a, reason)))
}

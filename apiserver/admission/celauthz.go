package admission

import (
	"context"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apiserver/pkg/authentication/user"
	kauthorizer "k8s.io/apiserver/pkg/authorization/authorizer"
	"k8s.io/apiserver/pkg/cel/library"

	"github.com/devplane/devplane/apiserver/authz"
	"github.com/devplane/devplane/apiserver/request"
)

// celRequestVars are the variables every admission expression sees for a:
// object, oldObject, request and, given an authorizer, kube's authorizer
// and authorizer.requestResource, whose checks ask it about the request's
// user ("authorizer.group('apps').resource('deployments').check('get')").
func celRequestVars(ctx context.Context, a *Attributes, authorizer authz.Authorizer) map[string]any {
	vars := map[string]any{"object": toCEL(a.Object), "oldObject": toCEL(a.OldObject), "request": toCEL(admissionRequest(a, ""))}
	if authorizer == nil || a.User == nil {
		return vars
	}
	u := &user.DefaultInfo{Name: a.User.Name, UID: a.User.UID, Groups: a.User.Groups, Extra: a.User.Extra}
	checker := celAuthorizer{ctx: ctx, authorizer: authorizer}
	vars["authorizer"] = library.NewAuthorizerVal(u, checker)
	vars["authorizer.requestResource"] = library.NewResourceAuthorizerVal(u, checker, requestResource{a})
	return vars
}

// celAuthorizer answers kube's CEL authorizer library with devplane's
// authorizer, in the context of the request being admitted (the library
// gives none).
type celAuthorizer struct {
	ctx        context.Context
	authorizer authz.Authorizer
}

func (c celAuthorizer) Authorize(_ context.Context, a kauthorizer.Attributes) (kauthorizer.Decision, string, error) {
	u := a.GetUser()
	decision, reason, err := c.authorizer.Authorize(c.ctx, authz.Attributes{
		User:        &request.User{Name: u.GetName(), UID: u.GetUID(), Groups: u.GetGroups(), Extra: u.GetExtra()},
		Verb:        a.GetVerb(),
		APIGroup:    a.GetAPIGroup(),
		APIVersion:  a.GetAPIVersion(),
		Namespace:   a.GetNamespace(),
		Resource:    a.GetResource(),
		Subresource: a.GetSubresource(),
		Name:        a.GetName(),
		Path:        a.GetPath(),

		ResourceRequest: a.IsResourceRequest(),
	})
	switch decision {
	case authz.Allow:
		return kauthorizer.DecisionAllow, reason, err
	case authz.Deny:
		return kauthorizer.DecisionDeny, reason, err
	default:
		return kauthorizer.DecisionNoOpinion, reason, err
	}
}

// requestResource is the admitted request's resource, for
// authorizer.requestResource.
type requestResource struct{ a *Attributes }

func (r requestResource) GetName() string                          { return r.a.Name }
func (r requestResource) GetNamespace() string                     { return r.a.Namespace }
func (r requestResource) GetResource() schema.GroupVersionResource { return r.a.Resource }
func (r requestResource) GetSubresource() string                   { return r.a.Subresource }

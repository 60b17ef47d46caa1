// Package authz decides whether a user may do what a request asks:
// kube's RBAC semantics over Roles, ClusterRoles and their bindings, the
// bootstrap policy every cluster starts with, and the escalation checks
// that stop users from granting permissions they do not hold.
package authz

import (
	"context"

	"github.com/devplane/devplane/apiserver/request"
)

// Decision is an authorizer's verdict.
type Decision int

const (
	// NoOpinion means this authorizer does not allow the request; another
	// may. A request nobody allows is forbidden.
	NoOpinion Decision = iota
	Allow
	// Deny forbids the request outright, whatever later authorizers say.
	Deny
)

func (d Decision) String() string {
	switch d {
	case Allow:
		return "Allow"
	case Deny:
		return "Deny"
	}
	return "NoOpinion"
}

// Attributes is what an authorizer judges: who, which verb, on what.
type Attributes struct {
	User            *request.User
	Verb            string
	APIGroup        string
	APIVersion      string
	Namespace       string
	Resource        string
	Subresource     string
	Name            string
	Path            string
	ResourceRequest bool
}

// AttributesFrom builds the attributes of a parsed request.
func AttributesFrom(user *request.User, info *request.RequestInfo) Attributes {
	a := Attributes{User: user}
	if info == nil {
		return a
	}
	a.Verb = info.Verb
	a.Path = info.Path
	a.ResourceRequest = info.IsResourceRequest
	if info.IsResourceRequest {
		a.APIGroup = info.APIGroup
		a.APIVersion = info.APIVersion
		a.Namespace = info.Namespace
		a.Resource = info.Resource
		a.Subresource = info.Subresource
		a.Name = info.Name
	}
	return a
}

func (a Attributes) userName() string {
	if a.User == nil {
		return ""
	}
	return a.User.Name
}

// Authorizer decides on a request. reason explains the decision for logs
// and forbidden messages; err reports a failure to evaluate (which never
// turns into an allow).
type Authorizer interface {
	Authorize(ctx context.Context, a Attributes) (decision Decision, reason string, err error)
}

// AuthorizerFunc adapts a function to Authorizer.
type AuthorizerFunc func(ctx context.Context, a Attributes) (Decision, string, error)

func (f AuthorizerFunc) Authorize(ctx context.Context, a Attributes) (Decision, string, error) {
	return f(ctx, a)
}

// AlwaysAllow allows everything (kube's --authorization-mode=AlwaysAllow).
type AlwaysAllow struct{}

func (AlwaysAllow) Authorize(context.Context, Attributes) (Decision, string, error) {
	return Allow, "", nil
}

// Union asks each authorizer in turn; the first Allow or Deny wins.
// Reasons of the ones without an opinion are kept for the message.
type Union []Authorizer

func (u Union) Authorize(ctx context.Context, a Attributes) (Decision, string, error) {
	var reasons []string
	var errs []error
	for _, z := range u {
		d, reason, err := z.Authorize(ctx, a)
		if err != nil {
			errs = append(errs, err)
		}
		if d == Allow || d == Deny {
			return d, reason, nil
		}
		if reason != "" {
			reasons = append(reasons, reason)
		}
	}
	return NoOpinion, joinReasons(reasons), joinErrors(errs)
}

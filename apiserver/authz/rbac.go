package authz

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	rbacv1 "k8s.io/api/rbac/v1"

	"github.com/devplane/devplane/apiserver/request"
)

// Identities RBAC knows about.
const (
	SystemMasters       = "system:masters"
	AllAuthenticated    = "system:authenticated"
	AllUnauthenticated  = "system:unauthenticated"
	ServiceAccountsUser = "system:serviceaccount:"
	ServiceAccountsAll  = "system:serviceaccounts"
)

// RuleSource is where RBAC finds roles and bindings; the server backs it
// with its watch cache. Returned objects are read, never modified.
type RuleSource interface {
	ListClusterRoleBindings() []*rbacv1.ClusterRoleBinding
	ListRoleBindings(namespace string) []*rbacv1.RoleBinding
	GetClusterRole(name string) (*rbacv1.ClusterRole, bool)
	GetRole(namespace, name string) (*rbacv1.Role, bool)
}

// RBAC authorizes with kube's role-based access control: a request is
// allowed when some binding that names the user (directly, through a
// group or as a service account) refers to a role with a matching rule.
// It never denies, it only allows or has no opinion.
type RBAC struct {
	source RuleSource
}

// NewRBAC returns an RBAC authorizer over source.
func NewRBAC(source RuleSource) *RBAC {
	return &RBAC{source: source}
}

func (r *RBAC) Authorize(_ context.Context, a Attributes) (Decision, string, error) {
	if a.User != nil && slices.Contains(a.User.Groups, SystemMasters) {
		// kube gets there through the cluster-admin binding; short-circuit
		// so a missing or edited binding cannot lock out the admin.
		return Allow, "RBAC: allowed by group " + SystemMasters, nil
	}
	var errs []error
	allowedBy := ""
	r.visitRules(a.User, a.Namespace, func(source string, rule *rbacv1.PolicyRule, err error) bool {
		if err != nil {
			errs = append(errs, err)
			return true
		}
		if RuleAllows(a, rule) {
			allowedBy = source
			return false
		}
		return true
	})
	if allowedBy != "" {
		return Allow, "RBAC: allowed by " + allowedBy, nil
	}
	reason := ""
	if len(errs) > 0 {
		reason = "RBAC: " + joinErrors(errs).Error()
	}
	return NoOpinion, reason, nil
}

// RulesFor returns every rule that applies to user in namespace ("" for
// cluster-wide only), split into resource and non-resource rules, as
// SelfSubjectRulesReview reports them. err lists roles that could not be
// found; the rules are then incomplete but still valid.
func (r *RBAC) RulesFor(user *request.User, namespace string) (resourceRules, nonResourceRules []rbacv1.PolicyRule, err error) {
	var errs []error
	if user != nil && slices.Contains(user.Groups, SystemMasters) {
		resourceRules = append(resourceRules, clusterAdminRules()[0])
		nonResourceRules = append(nonResourceRules, clusterAdminRules()[1])
	}
	r.visitRules(user, namespace, func(_ string, rule *rbacv1.PolicyRule, err error) bool {
		if err != nil {
			errs = append(errs, err)
			return true
		}
		if len(rule.NonResourceURLs) > 0 {
			nonResourceRules = append(nonResourceRules, *rule.DeepCopy())
		}
		if len(rule.Resources) > 0 {
			rr := *rule.DeepCopy()
			rr.NonResourceURLs = nil
			resourceRules = append(resourceRules, rr)
		}
		return true
	})
	return resourceRules, nonResourceRules, joinErrors(errs)
}

// allRules is RulesFor without the split, for escalation checks.
func (r *RBAC) allRules(user *request.User, namespace string) ([]rbacv1.PolicyRule, error) {
	res, nonRes, err := r.RulesFor(user, namespace)
	return append(res, nonRes...), err
}

// visitRules walks the rules granted to user: cluster role bindings first,
// then role bindings of namespace. visit returns false to stop.
func (r *RBAC) visitRules(user *request.User, namespace string, visit func(source string, rule *rbacv1.PolicyRule, err error) bool) {
	if user == nil {
		return
	}
	for _, b := range r.source.ListClusterRoleBindings() {
		subject, ok := appliesTo(user, b.Subjects, "")
		if !ok {
			continue
		}
		rules, err := r.roleRefRules(b.RoleRef, "")
		if err != nil && !visit("", nil, err) {
			return
		}
		source := fmt.Sprintf("ClusterRoleBinding %q of %s %q to %s", b.Name, b.RoleRef.Kind, b.RoleRef.Name, describeSubject(subject, ""))
		for i := range rules {
			if !visit(source, &rules[i], nil) {
				return
			}
		}
	}
	if namespace == "" {
		return
	}
	for _, b := range r.source.ListRoleBindings(namespace) {
		subject, ok := appliesTo(user, b.Subjects, namespace)
		if !ok {
			continue
		}
		rules, err := r.roleRefRules(b.RoleRef, namespace)
		if err != nil && !visit("", nil, err) {
			return
		}
		source := fmt.Sprintf("RoleBinding %q of %s %q to %s", b.Name+"/"+namespace, b.RoleRef.Kind, b.RoleRef.Name, describeSubject(subject, namespace))
		for i := range rules {
			if !visit(source, &rules[i], nil) {
				return
			}
		}
	}
}

// roleRefRules resolves a binding's roleRef: a ClusterRole, or a Role in
// the binding's namespace.
func (r *RBAC) roleRefRules(ref rbacv1.RoleRef, namespace string) ([]rbacv1.PolicyRule, error) {
	switch ref.Kind {
	case "ClusterRole":
		role, ok := r.source.GetClusterRole(ref.Name)
		if !ok {
			return nil, fmt.Errorf("clusterrole.rbac.authorization.k8s.io %q not found", ref.Name)
		}
		return role.Rules, nil
	case "Role":
		if namespace == "" {
			return nil, fmt.Errorf("a ClusterRoleBinding cannot refer to Role %q", ref.Name)
		}
		role, ok := r.source.GetRole(namespace, ref.Name)
		if !ok {
			return nil, fmt.Errorf("role.rbac.authorization.k8s.io %q not found", ref.Name)
		}
		return role.Rules, nil
	}
	return nil, fmt.Errorf("unsupported role reference kind: %q", ref.Kind)
}

// appliesTo returns the first subject naming user. namespace defaults the
// namespace of ServiceAccount subjects in RoleBindings, as kube does.
func appliesTo(user *request.User, subjects []rbacv1.Subject, namespace string) (rbacv1.Subject, bool) {
	for _, s := range subjects {
		switch s.Kind {
		case rbacv1.UserKind:
			if user.Name == s.Name {
				return s, true
			}
		case rbacv1.GroupKind:
			if slices.Contains(user.Groups, s.Name) {
				return s, true
			}
		case rbacv1.ServiceAccountKind:
			ns := s.Namespace
			if ns == "" {
				ns = namespace
			}
			if ns != "" && user.Name == ServiceAccountUsername(ns, s.Name) {
				return s, true
			}
		}
	}
	return rbacv1.Subject{}, false
}

// ServiceAccountUsername is the user name a service account's tokens carry.
func ServiceAccountUsername(namespace, name string) string {
	return ServiceAccountsUser + namespace + ":" + name
}

// SplitServiceAccountUsername returns the namespace and name of a service
// account user name.
func SplitServiceAccountUsername(username string) (namespace, name string, ok bool) {
	rest, found := strings.CutPrefix(username, ServiceAccountsUser)
	if !found {
		return "", "", false
	}
	namespace, name, found = strings.Cut(rest, ":")
	if !found || namespace == "" || name == "" || strings.Contains(name, ":") {
		return "", "", false
	}
	return namespace, name, true
}

func describeSubject(s rbacv1.Subject, bindingNamespace string) string {
	if s.Kind == rbacv1.ServiceAccountKind {
		ns := s.Namespace
		if ns == "" {
			ns = bindingNamespace
		}
		return fmt.Sprintf("%s %q", s.Kind, ns+"/"+s.Name)
	}
	return fmt.Sprintf("%s %q", s.Kind, s.Name)
}

// RuleAllows reports whether rule grants the request a.
func RuleAllows(a Attributes, rule *rbacv1.PolicyRule) bool {
	if !verbMatches(rule, a.Verb) {
		return false
	}
	if !a.ResourceRequest {
		return nonResourceURLMatches(rule, a.Path)
	}
	resource := a.Resource
	if a.Subresource != "" {
		resource += "/" + a.Subresource
	}
	return apiGroupMatches(rule, a.APIGroup) &&
		resourceMatches(rule, resource, a.Subresource) &&
		resourceNameMatches(rule, a.Name)
}

func verbMatches(rule *rbacv1.PolicyRule, verb string) bool {
	return slices.Contains(rule.Verbs, rbacv1.VerbAll) || slices.Contains(rule.Verbs, verb)
}

func apiGroupMatches(rule *rbacv1.PolicyRule, group string) bool {
	return slices.Contains(rule.APIGroups, rbacv1.APIGroupAll) || slices.Contains(rule.APIGroups, group)
}

// resourceMatches matches "*", the exact "resource[/subresource]", and
// "*/subresource" for any resource's subresource.
func resourceMatches(rule *rbacv1.PolicyRule, combined, subresource string) bool {
	for _, r := range rule.Resources {
		if r == rbacv1.ResourceAll || r == combined {
			return true
		}
		if subresource != "" && r == "*/"+subresource {
			return true
		}
	}
	return false
}

func resourceNameMatches(rule *rbacv1.PolicyRule, name string) bool {
	return len(rule.ResourceNames) == 0 || slices.Contains(rule.ResourceNames, name)
}

// nonResourceURLMatches matches "*", the exact path, and "prefix*".
func nonResourceURLMatches(rule *rbacv1.PolicyRule, path string) bool {
	for _, u := range rule.NonResourceURLs {
		if u == rbacv1.NonResourceAll || u == path {
			return true
		}
		if prefix, ok := strings.CutSuffix(u, "*"); ok && strings.HasPrefix(path, prefix) {
			return true
		}
	}
	return false
}

func joinErrors(errs []error) error {
	switch len(errs) {
	case 0:
		return nil
	case 1:
		return errs[0]
	}
	msgs := make([]string, len(errs))
	for i, e := range errs {
		msgs[i] = e.Error()
	}
	return errors.New("[" + strings.Join(msgs, ", ") + "]")
}

func joinReasons(reasons []string) string {
	return strings.Join(reasons, "; ")
}

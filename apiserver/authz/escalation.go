package authz

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"

	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/devplane/devplane/apiserver/request"
)

const rbacGroup = rbacv1.GroupName

// ConfirmNoEscalation refuses to let user grant rules it does not hold
// itself in namespace ("" for cluster-wide), with kube's message listing
// the missing permissions. It does not consider the escalate verb; see
// RoleChangeAllowed.
func (r *RBAC) ConfirmNoEscalation(_ context.Context, user *request.User, rules []rbacv1.PolicyRule, namespace string) error {
	owned, resolveErr := r.allRules(user, namespace)
	covered, missing := Covers(owned, rules)
	if covered {
		return nil
	}
	descriptions := map[string]bool{}
	for _, rule := range compactRules(missing) {
		descriptions[CompactString(rule)] = true
	}
	lines := make([]string, 0, len(descriptions))
	for d := range descriptions {
		lines = append(lines, d)
	}
	sort.Strings(lines)
	var name string
	var groups []string
	if user != nil {
		name, groups = user.Name, user.Groups
	}
	msg := fmt.Sprintf("user %q (groups=%q) is attempting to grant RBAC permissions not currently held:\n%s", name, groups, strings.Join(lines, "\n"))
	if resolveErr != nil {
		msg += fmt.Sprintf("; resolution errors: %v", resolveErr)
	}
	return errors.New(msg)
}

// RoleChangeAllowed decides whether user may create or update a Role
// (resource "roles", in namespace) or ClusterRole (resource
// "clusterroles", namespace "") called name to hold rules. As in kube it
// is allowed when user already holds every rule, or may "escalate" on it;
// otherwise the result is the Forbidden error the API returns.
func (r *RBAC) RoleChangeAllowed(ctx context.Context, user *request.User, resource, namespace, name string, rules []rbacv1.PolicyRule) error {
	if isMaster(user) {
		return nil
	}
	escalate := Attributes{User: user, Verb: "escalate", APIGroup: rbacGroup, APIVersion: "v1", Resource: resource, Namespace: namespace, Name: name, ResourceRequest: true}
	if d, _, _ := r.Authorize(ctx, escalate); d == Allow {
		return nil
	}
	if err := r.ConfirmNoEscalation(ctx, user, rules, namespace); err != nil {
		return apierrors.NewForbidden(schema.GroupResource{Group: rbacGroup, Resource: resource}, name, err)
	}
	return nil
}

// BindingAllowed decides whether user may create or update a RoleBinding
// (resource "rolebindings", in namespace) or ClusterRoleBinding (resource
// "clusterrolebindings", namespace "") called name referring to roleRef.
// As in kube it is allowed when user may "bind" the referenced role, or
// already holds all of its rules; otherwise the result is Forbidden.
func (r *RBAC) BindingAllowed(ctx context.Context, user *request.User, resource, namespace, name string, roleRef rbacv1.RoleRef) error {
	if isMaster(user) {
		return nil
	}
	gr := schema.GroupResource{Group: rbacGroup, Resource: resource}
	bind := Attributes{User: user, Verb: "bind", APIGroup: rbacGroup, APIVersion: "v1", Namespace: namespace, Name: roleRef.Name, ResourceRequest: true}
	switch roleRef.Kind {
	case "ClusterRole":
		bind.Resource = "clusterroles"
	case "Role":
		bind.Resource = "roles"
	default:
		return apierrors.NewForbidden(gr, name, fmt.Errorf("unsupported role reference kind: %q", roleRef.Kind))
	}
	if d, _, _ := r.Authorize(ctx, bind); d == Allow {
		return nil
	}
	rules, err := r.roleRefRules(roleRef, namespace)
	if err != nil {
		return apierrors.NewForbidden(gr, name, err)
	}
	if err := r.ConfirmNoEscalation(ctx, user, rules, namespace); err != nil {
		return apierrors.NewForbidden(gr, name, err)
	}
	return nil
}

func isMaster(user *request.User) bool {
	return user != nil && slices.Contains(user.Groups, SystemMasters)
}

// Covers reports whether owner rules grant everything servant rules do,
// and if not, which atomic (one verb, one resource) rules are missing.
func Covers(owner, servant []rbacv1.PolicyRule) (bool, []rbacv1.PolicyRule) {
	var missing []rbacv1.PolicyRule
	for _, rule := range servant {
		for _, atom := range breakdownRule(rule) {
			if !slices.ContainsFunc(owner, func(o rbacv1.PolicyRule) bool { return ruleCovers(o, atom) }) {
				missing = append(missing, atom)
			}
		}
	}
	return len(missing) == 0, missing
}

// breakdownRule splits a rule into one rule per verb × group × resource ×
// resourceName, and per verb × non-resource URL.
func breakdownRule(rule rbacv1.PolicyRule) []rbacv1.PolicyRule {
	var atoms []rbacv1.PolicyRule
	for _, group := range rule.APIGroups {
		for _, resource := range rule.Resources {
			for _, verb := range rule.Verbs {
				if len(rule.ResourceNames) == 0 {
					atoms = append(atoms, rbacv1.PolicyRule{APIGroups: []string{group}, Resources: []string{resource}, Verbs: []string{verb}})
					continue
				}
				for _, name := range rule.ResourceNames {
					atoms = append(atoms, rbacv1.PolicyRule{APIGroups: []string{group}, Resources: []string{resource}, Verbs: []string{verb}, ResourceNames: []string{name}})
				}
			}
		}
	}
	for _, url := range rule.NonResourceURLs {
		for _, verb := range rule.Verbs {
			atoms = append(atoms, rbacv1.PolicyRule{NonResourceURLs: []string{url}, Verbs: []string{verb}})
		}
	}
	return atoms
}

func ruleCovers(owner, sub rbacv1.PolicyRule) bool {
	verbs := slices.Contains(owner.Verbs, rbacv1.VerbAll) || containsAll(owner.Verbs, sub.Verbs)
	groups := slices.Contains(owner.APIGroups, rbacv1.APIGroupAll) || containsAll(owner.APIGroups, sub.APIGroups)
	resources := resourcesCoverAll(owner.Resources, sub.Resources)
	urls := urlsCoverAll(owner.NonResourceURLs, sub.NonResourceURLs)
	names := len(owner.ResourceNames) == 0 || (len(sub.ResourceNames) > 0 && containsAll(owner.ResourceNames, sub.ResourceNames))
	return verbs && groups && resources && urls && names
}

func resourcesCoverAll(owner, sub []string) bool {
	if slices.Contains(owner, rbacv1.ResourceAll) {
		return true
	}
	for _, r := range sub {
		if slices.Contains(owner, r) {
			continue
		}
		_, subresource, isSub := strings.Cut(r, "/")
		if !isSub || !slices.Contains(owner, "*/"+subresource) {
			return false
		}
	}
	return true
}

func urlsCoverAll(owner, sub []string) bool {
	for _, path := range sub {
		if !slices.ContainsFunc(owner, func(o string) bool {
			if o == path {
				return true
			}
			prefix, ok := strings.CutSuffix(o, "*")
			return ok && strings.HasPrefix(path, prefix)
		}) {
			return false
		}
	}
	return true
}

func containsAll(set, items []string) bool {
	for _, it := range items {
		if !slices.Contains(set, it) {
			return false
		}
	}
	return true
}

// compactRules merges atomic rules on the same group/resource/name into one
// rule listing all their verbs, so error messages stay short.
func compactRules(rules []rbacv1.PolicyRule) []rbacv1.PolicyRule {
	type key struct{ group, resource, name string }
	var out []rbacv1.PolicyRule
	index := map[key]int{}
	for _, rule := range rules {
		simple := len(rule.APIGroups) == 1 && len(rule.Resources) == 1 && len(rule.ResourceNames) <= 1 && len(rule.NonResourceURLs) == 0
		if !simple {
			out = append(out, rule)
			continue
		}
		k := key{group: rule.APIGroups[0], resource: rule.Resources[0]}
		if len(rule.ResourceNames) == 1 {
			k.name = rule.ResourceNames[0]
		}
		if i, ok := index[k]; ok {
			out[i].Verbs = append(out[i].Verbs, rule.Verbs...)
			continue
		}
		index[k] = len(out)
		out = append(out, *rule.DeepCopy())
	}
	return out
}

// CompactString prints a rule as kube does in escalation errors:
// {APIGroups:[""], Resources:["pods"], Verbs:["get"]}.
func CompactString(r rbacv1.PolicyRule) string {
	var parts []string
	if len(r.APIGroups) > 0 {
		parts = append(parts, fmt.Sprintf("APIGroups:%q", r.APIGroups))
	}
	if len(r.Resources) > 0 {
		parts = append(parts, fmt.Sprintf("Resources:%q", r.Resources))
	}
	if len(r.NonResourceURLs) > 0 {
		parts = append(parts, fmt.Sprintf("NonResourceURLs:%q", r.NonResourceURLs))
	}
	if len(r.ResourceNames) > 0 {
		parts = append(parts, fmt.Sprintf("ResourceNames:%q", r.ResourceNames))
	}
	if len(r.Verbs) > 0 {
		parts = append(parts, fmt.Sprintf("Verbs:%q", r.Verbs))
	}
	return "{" + strings.Join(parts, ", ") + "}"
}

// AggregationRuleAllowed decides whether user may set an aggregationRule
// on ClusterRole name. An aggregated role can gather any rule, so kube
// demands full authority (or escalate on it).
func (r *RBAC) AggregationRuleAllowed(ctx context.Context, user *request.User, name string) error {
	if isMaster(user) {
		return nil
	}
	escalate := Attributes{User: user, Verb: "escalate", APIGroup: rbacGroup, APIVersion: "v1", Resource: "clusterroles", Name: name, ResourceRequest: true}
	if d, _, _ := r.Authorize(ctx, escalate); d == Allow {
		return nil
	}
	if r.ConfirmNoEscalation(ctx, user, clusterAdminRules(), "") != nil {
		return apierrors.NewForbidden(schema.GroupResource{Group: rbacGroup, Resource: "clusterroles"}, name,
			errors.New("must have cluster-admin privileges to use the aggregationRule"))
	}
	return nil
}

// Package rbac holds what rbac.authorization.k8s.io's resources do beyond
// the generic store: no Role, ClusterRole or binding may grant its author
// more than it holds.
package rbac

import (
	"context"

	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/devplane/devplane/apiserver/registry"
	"github.com/devplane/devplane/apiserver/request"
)

// EscalationChecker says whether a user may write a role's rules or a
// binding's roleRef (authz.RBAC).
type EscalationChecker interface {
	RoleChangeAllowed(ctx context.Context, user *request.User, resource, namespace, name string, rules []rbacv1.PolicyRule) error
	AggregationRuleAllowed(ctx context.Context, user *request.User, name string) error
	BindingAllowed(ctx context.Context, user *request.User, resource, namespace, name string, roleRef rbacv1.RoleRef) error
}

// GuardEscalation refuses Roles, ClusterRoles and bindings that would
// grant their author more than it holds (kube's escalation checks).
func GuardEscalation(reg *registry.Registry, rbac EscalationChecker) {
	store := func(resource string) *registry.Store {
		res, ok := reg.Lookup(rbacv1.GroupName, "v1", resource)
		if !ok || res.Store == nil {
			panic("rbac: built-in resource missing: " + resource)
		}
		return res.Store
	}
	user := func(ctx context.Context) (*request.User, bool) { return request.UserFrom(ctx) }
	roles := store("roles")
	roles.Hooks.BeforeCreate = func(ctx context.Context, obj runtime.Object) (func(), error) {
		u, ok := user(ctx)
		if !ok {
			return nil, nil
		}
		r := obj.(*rbacv1.Role)
		return nil, rbac.RoleChangeAllowed(ctx, u, "roles", r.Namespace, r.Name, r.Rules)
	}
	roles.Hooks.BeforeUpdate = func(ctx context.Context, obj, old runtime.Object) (func(), func(), error) {
		u, ok := user(ctx)
		r, o := obj.(*rbacv1.Role), old.(*rbacv1.Role)
		if !ok || equality.Semantic.DeepEqual(r.Rules, o.Rules) {
			return nil, nil, nil
		}
		return nil, nil, rbac.RoleChangeAllowed(ctx, u, "roles", r.Namespace, r.Name, r.Rules)
	}
	clusterRoles := store("clusterroles")
	checkClusterRole := func(ctx context.Context, u *request.User, r *rbacv1.ClusterRole, old *rbacv1.ClusterRole) error {
		if r.AggregationRule != nil && (old == nil || !equality.Semantic.DeepEqual(r.AggregationRule, old.AggregationRule)) {
			if err := rbac.AggregationRuleAllowed(ctx, u, r.Name); err != nil {
				return err
			}
		}
		if old != nil && equality.Semantic.DeepEqual(r.Rules, old.Rules) {
			return nil
		}
		return rbac.RoleChangeAllowed(ctx, u, "clusterroles", "", r.Name, r.Rules)
	}
	clusterRoles.Hooks.BeforeCreate = func(ctx context.Context, obj runtime.Object) (func(), error) {
		u, ok := user(ctx)
		if !ok {
			return nil, nil
		}
		return nil, checkClusterRole(ctx, u, obj.(*rbacv1.ClusterRole), nil)
	}
	clusterRoles.Hooks.BeforeUpdate = func(ctx context.Context, obj, old runtime.Object) (func(), func(), error) {
		u, ok := user(ctx)
		if !ok {
			return nil, nil, nil
		}
		return nil, nil, checkClusterRole(ctx, u, obj.(*rbacv1.ClusterRole), old.(*rbacv1.ClusterRole))
	}
	roleBindings := store("rolebindings")
	roleBindings.Hooks.BeforeCreate = func(ctx context.Context, obj runtime.Object) (func(), error) {
		u, ok := user(ctx)
		if !ok {
			return nil, nil
		}
		b := obj.(*rbacv1.RoleBinding)
		return nil, rbac.BindingAllowed(ctx, u, "rolebindings", b.Namespace, b.Name, b.RoleRef)
	}
	roleBindings.Hooks.BeforeUpdate = func(ctx context.Context, obj, old runtime.Object) (func(), func(), error) {
		u, ok := user(ctx)
		b, o := obj.(*rbacv1.RoleBinding), old.(*rbacv1.RoleBinding)
		if !ok || (equality.Semantic.DeepEqual(b.Subjects, o.Subjects) && b.RoleRef == o.RoleRef) {
			return nil, nil, nil
		}
		return nil, nil, rbac.BindingAllowed(ctx, u, "rolebindings", b.Namespace, b.Name, b.RoleRef)
	}
	clusterRoleBindings := store("clusterrolebindings")
	clusterRoleBindings.Hooks.BeforeCreate = func(ctx context.Context, obj runtime.Object) (func(), error) {
		u, ok := user(ctx)
		if !ok {
			return nil, nil
		}
		b := obj.(*rbacv1.ClusterRoleBinding)
		return nil, rbac.BindingAllowed(ctx, u, "clusterrolebindings", "", b.Name, b.RoleRef)
	}
	clusterRoleBindings.Hooks.BeforeUpdate = func(ctx context.Context, obj, old runtime.Object) (func(), func(), error) {
		u, ok := user(ctx)
		b, o := obj.(*rbacv1.ClusterRoleBinding), old.(*rbacv1.ClusterRoleBinding)
		if !ok || (equality.Semantic.DeepEqual(b.Subjects, o.Subjects) && b.RoleRef == o.RoleRef) {
			return nil, nil, nil
		}
		return nil, nil, rbac.BindingAllowed(ctx, u, "clusterrolebindings", "", b.Name, b.RoleRef)
	}
}

package authz

import (
	"fmt"

	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// StaticRules is a fixed, in-memory RuleSource: for tests, and for a
// server that has not started its watch cache yet.
type StaticRules struct {
	clusterRoles        map[string]*rbacv1.ClusterRole
	roles               map[string]*rbacv1.Role // namespace/name
	clusterRoleBindings []*rbacv1.ClusterRoleBinding
	roleBindings        map[string][]*rbacv1.RoleBinding // by namespace
}

// NewStaticRules holds the given Roles, ClusterRoles and bindings. Any
// other kind of object is an error.
func NewStaticRules(objs ...runtime.Object) (*StaticRules, error) {
	s := &StaticRules{
		clusterRoles: map[string]*rbacv1.ClusterRole{},
		roles:        map[string]*rbacv1.Role{},
		roleBindings: map[string][]*rbacv1.RoleBinding{},
	}
	for _, obj := range objs {
		switch o := obj.(type) {
		case *rbacv1.ClusterRole:
			s.clusterRoles[o.Name] = o
		case *rbacv1.Role:
			s.roles[o.Namespace+"/"+o.Name] = o
		case *rbacv1.ClusterRoleBinding:
			s.clusterRoleBindings = append(s.clusterRoleBindings, o)
		case *rbacv1.RoleBinding:
			s.roleBindings[o.Namespace] = append(s.roleBindings[o.Namespace], o)
		default:
			return nil, fmt.Errorf("not an RBAC object: %T", obj)
		}
	}
	return s, nil
}

// BootstrapObjects returns the whole bootstrap policy with the aggregated
// roles' rules filled in, ready for NewStaticRules or for seeding storage.
func BootstrapObjects() []runtime.Object {
	roles := BootstrapClusterRoles()
	for _, changed := range AggregateClusterRoles(roles) {
		for i := range roles {
			if roles[i].Name == changed.Name {
				roles[i] = changed
			}
		}
	}
	var objs []runtime.Object
	for _, r := range roles {
		objs = append(objs, r)
	}
	for _, b := range BootstrapClusterRoleBindings() {
		objs = append(objs, b)
	}
	for _, r := range BootstrapRoles() {
		objs = append(objs, r)
	}
	for _, b := range BootstrapRoleBindings() {
		objs = append(objs, b)
	}
	return objs
}

func (s *StaticRules) ListClusterRoleBindings() []*rbacv1.ClusterRoleBinding {
	return s.clusterRoleBindings
}

func (s *StaticRules) ListRoleBindings(namespace string) []*rbacv1.RoleBinding {
	return s.roleBindings[namespace]
}

func (s *StaticRules) GetClusterRole(name string) (*rbacv1.ClusterRole, bool) {
	r, ok := s.clusterRoles[name]
	return r, ok
}

func (s *StaticRules) GetRole(namespace, name string) (*rbacv1.Role, bool) {
	r, ok := s.roles[namespace+"/"+name]
	return r, ok
}

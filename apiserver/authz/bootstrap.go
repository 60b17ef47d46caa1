package authz

import (
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Metadata every bootstrap object carries, as in kube.
const (
	BootstrappingLabel     = "kubernetes.io/bootstrapping"
	BootstrappingLabelRBAC = "rbac-defaults"
	AutoUpdateAnnotation   = rbacv1.AutoUpdateAnnotationKey // "rbac.authorization.kubernetes.io/autoupdate"

	AggregateToAdmin = "rbac.authorization.k8s.io/aggregate-to-admin"
	AggregateToEdit  = "rbac.authorization.k8s.io/aggregate-to-edit"
	AggregateToView  = "rbac.authorization.k8s.io/aggregate-to-view"
)

var (
	verbsRead      = []string{"get", "list", "watch"}
	verbsWrite     = []string{"create", "update", "patch", "delete", "deletecollection"}
	verbsReadWrite = []string{"get", "list", "watch", "create", "update", "patch", "delete", "deletecollection"}
)

const (
	legacyGroup         = ""
	appsGroup           = "apps"
	authenticationGroup = "authentication.k8s.io"
	authorizationGroup  = "authorization.k8s.io"
	autoscalingGroup    = "autoscaling"
	batchGroup          = "batch"
	coordinationGroup   = "coordination.k8s.io"
	discoveryGroup      = "discovery.k8s.io"
	eventsGroup         = "events.k8s.io"
	extensionsGroup     = "extensions"
	networkingGroup     = "networking.k8s.io"
	policyGroup         = "policy"
)

// ruleBuilder keeps the policy tables below readable.
type ruleBuilder struct{ rbacv1.PolicyRule }

func newRule(verbs ...string) *ruleBuilder {
	return &ruleBuilder{rbacv1.PolicyRule{Verbs: verbs}}
}
func (b *ruleBuilder) groups(g ...string) *ruleBuilder    { b.APIGroups = g; return b }
func (b *ruleBuilder) resources(r ...string) *ruleBuilder { b.Resources = r; return b }
func (b *ruleBuilder) names(n ...string) *ruleBuilder     { b.ResourceNames = n; return b }
func (b *ruleBuilder) urls(u ...string) *ruleBuilder      { b.NonResourceURLs = u; return b }
func (b *ruleBuilder) rule() rbacv1.PolicyRule            { return b.PolicyRule }

func clusterAdminRules() []rbacv1.PolicyRule {
	return []rbacv1.PolicyRule{
		newRule("*").groups("*").resources("*").rule(),
		newRule("*").urls("*").rule(),
	}
}

func eventsRule() rbacv1.PolicyRule {
	return newRule("create", "update", "patch").groups(legacyGroup, eventsGroup).resources("events").rule()
}

func bootstrapMeta(name, namespace string, extraLabels map[string]string) metav1.ObjectMeta {
	l := map[string]string{BootstrappingLabel: BootstrappingLabelRBAC}
	for k, v := range extraLabels {
		l[k] = v
	}
	return metav1.ObjectMeta{
		Name:        name,
		Namespace:   namespace,
		Labels:      l,
		Annotations: map[string]string{AutoUpdateAnnotation: "true"},
	}
}

func aggregation(label string) *rbacv1.AggregationRule {
	return &rbacv1.AggregationRule{ClusterRoleSelectors: []metav1.LabelSelector{{MatchLabels: map[string]string{label: "true"}}}}
}

func clusterBinding(role string, subjects ...rbacv1.Subject) *rbacv1.ClusterRoleBinding {
	return &rbacv1.ClusterRoleBinding{
		ObjectMeta: bootstrapMeta(role, "", nil),
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: role},
		Subjects:   subjects,
	}
}

func groupSubject(name string) rbacv1.Subject {
	return rbacv1.Subject{Kind: rbacv1.GroupKind, APIGroup: rbacv1.GroupName, Name: name}
}

func userSubject(name string) rbacv1.Subject {
	return rbacv1.Subject{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: name}
}

func serviceAccountSubject(namespace, name string) rbacv1.Subject {
	return rbacv1.Subject{Kind: rbacv1.ServiceAccountKind, Namespace: namespace, Name: name}
}

func roleBinding(namespace, name, role string, subjects ...rbacv1.Subject) *rbacv1.RoleBinding {
	return &rbacv1.RoleBinding{
		ObjectMeta: bootstrapMeta(name, namespace, nil),
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: role},
		Subjects:   subjects,
	}
}

func namedClusterBinding(name, role string, subjects ...rbacv1.Subject) *rbacv1.ClusterRoleBinding {
	b := clusterBinding(role, subjects...)
	b.Name = name
	return b
}

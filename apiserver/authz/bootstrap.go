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

// BootstrapClusterRoles are the ClusterRoles every kube cluster starts
// with that matter to a control plane without nodes: the user-facing
// admin/edit/view family and the system roles for discovery, self-review,
// health, monitoring and delegated auth. admin, edit and view are
// aggregated: their rules come from AggregateClusterRoles.
func BootstrapClusterRoles() []*rbacv1.ClusterRole {
	return []*rbacv1.ClusterRole{
		{
			// root: can do anything.
			ObjectMeta: bootstrapMeta("cluster-admin", "", nil),
			Rules:      clusterAdminRules(),
		},
		{
			// enough to find out whether the server is up and what it serves.
			ObjectMeta: bootstrapMeta("system:discovery", "", nil),
			Rules: []rbacv1.PolicyRule{
				newRule("get").urls("/livez", "/readyz", "/healthz", "/version", "/version/",
					"/openapi", "/openapi/*", "/api", "/api/*", "/apis", "/apis/*").rule(),
			},
		},
		{
			// lets a user learn about itself.
			ObjectMeta: bootstrapMeta("system:basic-user", "", nil),
			Rules: []rbacv1.PolicyRule{
				newRule("create").groups(authorizationGroup).resources("selfsubjectaccessreviews", "selfsubjectrulesreviews").rule(),
				newRule("create").groups(authenticationGroup).resources("selfsubjectreviews").rule(),
			},
		},
		{
			// insensitive information, for everyone including anonymous.
			ObjectMeta: bootstrapMeta("system:public-info-viewer", "", nil),
			Rules: []rbacv1.PolicyRule{
				newRule("get").urls("/livez", "/readyz", "/healthz", "/version", "/version/").rule(),
			},
		},
		{
			ObjectMeta: bootstrapMeta("system:monitoring", "", nil),
			Rules: []rbacv1.PolicyRule{
				newRule("get").urls("/metrics", "/metrics/slis", "/livez", "/readyz", "/healthz",
					"/livez/*", "/readyz/*", "/healthz/*").rule(),
			},
		},
		{
			// for servers that delegate authentication and authorization to us.
			ObjectMeta: bootstrapMeta("system:auth-delegator", "", nil),
			Rules: []rbacv1.PolicyRule{
				newRule("create").groups(authenticationGroup).resources("tokenreviews").rule(),
				newRule("create").groups(authorizationGroup).resources("subjectaccessreviews").rule(),
			},
		},
		{
			// lets workloads verify service account tokens via OIDC discovery.
			ObjectMeta: bootstrapMeta("system:service-account-issuer-discovery", "", nil),
			Rules: []rbacv1.PolicyRule{
				newRule("get").urls("/.well-known/openid-configuration", "/.well-known/openid-configuration/",
					"/openid/v1/jwks", "/openid/v1/jwks/").rule(),
			},
		},
		{
			// namespace admin: edit plus granting permissions to others.
			ObjectMeta:      bootstrapMeta("admin", "", nil),
			AggregationRule: aggregation(AggregateToAdmin),
		},
		{
			// namespace editor: every user-level action, no RBAC or quota powers.
			ObjectMeta:      bootstrapMeta("edit", "", map[string]string{AggregateToAdmin: "true"}),
			AggregationRule: aggregation(AggregateToEdit),
		},
		{
			// namespace viewer: read-only, no secrets.
			ObjectMeta:      bootstrapMeta("view", "", map[string]string{AggregateToEdit: "true"}),
			AggregationRule: aggregation(AggregateToView),
		},
		{
			ObjectMeta: bootstrapMeta("system:aggregate-to-admin", "", map[string]string{AggregateToAdmin: "true"}),
			Rules: []rbacv1.PolicyRule{
				newRule("create").groups(authorizationGroup).resources("localsubjectaccessreviews").rule(),
				newRule(verbsReadWrite...).groups(rbacv1.GroupName).resources("roles", "rolebindings").rule(),
			},
		},
		{
			ObjectMeta: bootstrapMeta("system:aggregate-to-edit", "", map[string]string{AggregateToEdit: "true"}),
			Rules: []rbacv1.PolicyRule{
				// read on escalating resources, which view leaves out
				newRule(verbsRead...).groups(legacyGroup).resources("pods/attach", "pods/proxy", "pods/exec", "pods/portforward", "secrets", "services/proxy").rule(),
				newRule("impersonate").groups(legacyGroup).resources("serviceaccounts").rule(),

				newRule(verbsWrite...).groups(legacyGroup).resources("pods", "pods/attach", "pods/proxy", "pods/exec", "pods/portforward").rule(),
				newRule("create").groups(legacyGroup).resources("pods/eviction").rule(),
				newRule(verbsWrite...).groups(legacyGroup).resources("replicationcontrollers", "replicationcontrollers/scale", "serviceaccounts",
					"services", "services/proxy", "persistentvolumeclaims", "configmaps", "secrets").rule(),
				newRule("create").groups(legacyGroup).resources("serviceaccounts/token").rule(),

				newRule(verbsWrite...).groups(appsGroup).resources(
					"statefulsets", "statefulsets/scale",
					"daemonsets",
					"deployments", "deployments/scale", "deployments/rollback",
					"replicasets", "replicasets/scale").rule(),
				newRule(verbsWrite...).groups(autoscalingGroup).resources("horizontalpodautoscalers").rule(),
				newRule(verbsWrite...).groups(batchGroup).resources("jobs", "cronjobs").rule(),
				newRule(verbsWrite...).groups(extensionsGroup).resources("daemonsets",
					"deployments", "deployments/scale", "deployments/rollback", "ingresses",
					"replicasets", "replicasets/scale", "replicationcontrollers/scale",
					"networkpolicies").rule(),
				newRule(verbsWrite...).groups(policyGroup).resources("poddisruptionbudgets").rule(),
				newRule(verbsWrite...).groups(networkingGroup).resources("networkpolicies", "ingresses").rule(),
				newRule(verbsReadWrite...).groups(coordinationGroup).resources("leases").rule(),
			},
		},
		{
			ObjectMeta: bootstrapMeta("system:aggregate-to-view", "", map[string]string{AggregateToView: "true"}),
			Rules: []rbacv1.PolicyRule{
				newRule(verbsRead...).groups(legacyGroup).resources("pods", "replicationcontrollers", "replicationcontrollers/scale", "serviceaccounts",
					"services", "services/status", "endpoints", "persistentvolumeclaims", "persistentvolumeclaims/status", "configmaps").rule(),
				newRule(verbsRead...).groups(legacyGroup).resources("limitranges", "resourcequotas", "bindings", "events",
					"pods/status", "resourcequotas/status", "namespaces/status", "replicationcontrollers/status", "pods/log").rule(),
				// reading namespaces at namespace scope means reading *this* namespace.
				newRule(verbsRead...).groups(legacyGroup).resources("namespaces").rule(),
				newRule(verbsRead...).groups(discoveryGroup).resources("endpointslices").rule(),
				newRule(verbsRead...).groups(appsGroup).resources(
					"controllerrevisions",
					"statefulsets", "statefulsets/status", "statefulsets/scale",
					"daemonsets", "daemonsets/status",
					"deployments", "deployments/status", "deployments/scale",
					"replicasets", "replicasets/status", "replicasets/scale").rule(),
				newRule(verbsRead...).groups(autoscalingGroup).resources("horizontalpodautoscalers", "horizontalpodautoscalers/status").rule(),
				newRule(verbsRead...).groups(batchGroup).resources("jobs", "cronjobs", "cronjobs/status", "jobs/status").rule(),
				newRule(verbsRead...).groups(extensionsGroup).resources("daemonsets", "daemonsets/status", "deployments", "deployments/scale", "deployments/status",
					"ingresses", "ingresses/status", "replicasets", "replicasets/scale", "replicasets/status", "replicationcontrollers/scale",
					"networkpolicies").rule(),
				newRule(verbsRead...).groups(policyGroup).resources("poddisruptionbudgets", "poddisruptionbudgets/status").rule(),
				newRule(verbsRead...).groups(networkingGroup).resources("networkpolicies", "ingresses", "ingresses/status").rule(),
			},
		},
	}
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

// BootstrapClusterRoleBindings bind the bootstrap ClusterRoles, each
// binding named after its role as in kube.
func BootstrapClusterRoleBindings() []*rbacv1.ClusterRoleBinding {
	return []*rbacv1.ClusterRoleBinding{
		clusterBinding("cluster-admin", groupSubject(SystemMasters)),
		clusterBinding("system:monitoring", groupSubject("system:monitoring")),
		clusterBinding("system:discovery", groupSubject(AllAuthenticated)),
		clusterBinding("system:basic-user", groupSubject(AllAuthenticated)),
		clusterBinding("system:public-info-viewer", groupSubject(AllAuthenticated), groupSubject(AllUnauthenticated)),
		clusterBinding("system:service-account-issuer-discovery", groupSubject(ServiceAccountsAll)),
	}
}

// BootstrapRoles are kube's namespaced bootstrap Roles in kube-system and
// kube-public: leader locking, the authentication configmap reader and the
// bootstrap-token controllers.
func BootstrapRoles() []*rbacv1.Role {
	return []*rbacv1.Role{
		{
			ObjectMeta: bootstrapMeta("extension-apiserver-authentication-reader", "kube-system", nil),
			Rules: []rbacv1.PolicyRule{
				newRule(verbsRead...).groups(legacyGroup).resources("configmaps").names("extension-apiserver-authentication").rule(),
			},
		},
		{
			ObjectMeta: bootstrapMeta("system::leader-locking-kube-controller-manager", "kube-system", nil),
			Rules: []rbacv1.PolicyRule{
				newRule("watch").groups(legacyGroup).resources("configmaps").rule(),
				newRule("get", "update").groups(legacyGroup).resources("configmaps").names("kube-controller-manager").rule(),
			},
		},
		{
			ObjectMeta: bootstrapMeta("system::leader-locking-kube-scheduler", "kube-system", nil),
			Rules: []rbacv1.PolicyRule{
				newRule("watch").groups(legacyGroup).resources("configmaps").rule(),
				newRule("get", "update").groups(legacyGroup).resources("configmaps").names("kube-scheduler").rule(),
			},
		},
		{
			ObjectMeta: bootstrapMeta("system:controller:bootstrap-signer", "kube-system", nil),
			Rules: []rbacv1.PolicyRule{
				newRule(verbsRead...).groups(legacyGroup).resources("secrets").rule(),
			},
		},
		{
			ObjectMeta: bootstrapMeta("system:controller:cloud-provider", "kube-system", nil),
			Rules: []rbacv1.PolicyRule{
				newRule("create", "get", "list", "watch").groups(legacyGroup).resources("configmaps").rule(),
			},
		},
		{
			ObjectMeta: bootstrapMeta("system:controller:token-cleaner", "kube-system", nil),
			Rules: []rbacv1.PolicyRule{
				newRule("delete", "get", "list", "watch").groups(legacyGroup).resources("secrets").rule(),
				eventsRule(),
			},
		},
		{
			ObjectMeta: bootstrapMeta("system:controller:bootstrap-signer", "kube-public", nil),
			Rules: []rbacv1.PolicyRule{
				newRule(verbsRead...).groups(legacyGroup).resources("configmaps").rule(),
				newRule("update").groups(legacyGroup).resources("configmaps").names("cluster-info").rule(),
				eventsRule(),
			},
		},
	}
}

func roleBinding(namespace, name, role string, subjects ...rbacv1.Subject) *rbacv1.RoleBinding {
	return &rbacv1.RoleBinding{
		ObjectMeta: bootstrapMeta(name, namespace, nil),
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: role},
		Subjects:   subjects,
	}
}

// BootstrapRoleBindings bind BootstrapRoles.
func BootstrapRoleBindings() []*rbacv1.RoleBinding {
	return []*rbacv1.RoleBinding{
		roleBinding("kube-system", "system::extension-apiserver-authentication-reader", "extension-apiserver-authentication-reader",
			userSubject("system:kube-controller-manager"), userSubject("system:kube-scheduler")),
		roleBinding("kube-system", "system::leader-locking-kube-controller-manager", "system::leader-locking-kube-controller-manager",
			userSubject("system:kube-controller-manager"), serviceAccountSubject("kube-system", "kube-controller-manager")),
		roleBinding("kube-system", "system::leader-locking-kube-scheduler", "system::leader-locking-kube-scheduler",
			userSubject("system:kube-scheduler"), serviceAccountSubject("kube-system", "kube-scheduler")),
		roleBinding("kube-system", "system:controller:bootstrap-signer", "system:controller:bootstrap-signer",
			serviceAccountSubject("kube-system", "bootstrap-signer")),
		roleBinding("kube-system", "system:controller:cloud-provider", "system:controller:cloud-provider",
			serviceAccountSubject("kube-system", "cloud-provider")),
		roleBinding("kube-system", "system:controller:token-cleaner", "system:controller:token-cleaner",
			serviceAccountSubject("kube-system", "token-cleaner")),
		roleBinding("kube-public", "system:controller:bootstrap-signer", "system:controller:bootstrap-signer",
			serviceAccountSubject("kube-system", "bootstrap-signer")),
	}
}

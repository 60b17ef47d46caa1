package authz

import (
	"context"
	"strings"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/devplane/devplane/apiserver/request"
)

func clusterRole(name string, rules ...rbacv1.PolicyRule) *rbacv1.ClusterRole {
	return &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: name}, Rules: rules}
}

func role(ns, name string, rules ...rbacv1.PolicyRule) *rbacv1.Role {
	return &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Rules: rules}
}

func crb(name, roleName string, subjects ...rbacv1.Subject) *rbacv1.ClusterRoleBinding {
	return &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: roleName},
		Subjects:   subjects,
	}
}

func rb(ns, name, kind, roleName string, subjects ...rbacv1.Subject) *rbacv1.RoleBinding {
	return &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: kind, Name: roleName},
		Subjects:   subjects,
	}
}

func newTestRBAC(t *testing.T, objs ...runtime.Object) *RBAC {
	t.Helper()
	src, err := NewStaticRules(objs...)
	if err != nil {
		t.Fatal(err)
	}
	return NewRBAC(src)
}

func res(user *request.User, verb, group, resource, sub, ns, name string) Attributes {
	return Attributes{User: user, Verb: verb, APIGroup: group, APIVersion: "v1", Resource: resource, Subresource: sub, Namespace: ns, Name: name, ResourceRequest: true}
}

func nonRes(user *request.User, verb, path string) Attributes {
	return Attributes{User: user, Verb: verb, Path: path}
}

func TestRBACDecisions(t *testing.T) {
	z := newTestRBAC(t,
		clusterRole("pod-reader", newRule("get", "list", "watch").groups("").resources("pods").rule()),
		clusterRole("everything-apps", newRule("*").groups("apps").resources("*").rule()),
		clusterRole("scaler", newRule("update").groups("*").resources("*/scale").rule()),
		clusterRole("log-reader", newRule("get").groups("").resources("pods/log").rule()),
		clusterRole("one-configmap", newRule("get", "update").groups("").resources("configmaps").names("settings").rule()),
		clusterRole("metrics", newRule("get").urls("/metrics", "/logs/*").rule()),
		clusterRole("impersonator", newRule("impersonate").groups("").resources("users").rule()),
		clusterRole("rbac-power", newRule("escalate", "bind").groups("rbac.authorization.k8s.io").resources("clusterroles").rule(),
			newRule("deletecollection").groups("").resources("secrets").rule()),
		role("team", "secret-reader", newRule("get").groups("").resources("secrets").rule()),

		crb("alice-pods", "pod-reader", userSubject("alice")),
		crb("ops-apps", "everything-apps", groupSubject("ops")),
		crb("scalers", "scaler", userSubject("scaler")),
		crb("log", "log-reader", userSubject("logger")),
		crb("settings", "one-configmap", userSubject("carol")),
		crb("metrics", "metrics", groupSubject(ServiceAccountsAll)),
		crb("imp", "impersonator", userSubject("alice")),
		crb("rbac", "rbac-power", userSubject("root-ish")),
		crb("sa", "pod-reader", serviceAccountSubject("ci", "builder")),
		crb("missing", "does-not-exist", userSubject("dave")),
		// a RoleBinding to a Role, a RoleBinding to a ClusterRole, and an
		// SA subject without namespace (defaults to the binding's).
		rb("team", "bob-secrets", "Role", "secret-reader", userSubject("bob")),
		rb("team", "bob-pods", "ClusterRole", "pod-reader", userSubject("bob")),
		rb("team", "local-sa", "ClusterRole", "log-reader", rbacv1.Subject{Kind: rbacv1.ServiceAccountKind, Name: "app"}),
		rb("team", "ns-sa-group", "Role", "secret-reader", groupSubject("system:serviceaccounts:team")),
		// non-resource rules in a RoleBinding do not apply.
		rb("team", "bob-metrics", "ClusterRole", "metrics", userSubject("bob")),
	)

	alice := &request.User{Name: "alice", Groups: []string{AllAuthenticated}}
	bob := &request.User{Name: "bob", Groups: []string{AllAuthenticated}}
	opsUser := &request.User{Name: "erin", Groups: []string{"ops", AllAuthenticated}}
	carol := &request.User{Name: "carol"}
	builder := &request.User{Name: "system:serviceaccount:ci:builder", Groups: []string{ServiceAccountsAll, "system:serviceaccounts:ci"}}
	teamApp := &request.User{Name: "system:serviceaccount:team:app", Groups: []string{ServiceAccountsAll, "system:serviceaccounts:team"}}
	otherApp := &request.User{Name: "system:serviceaccount:other:app", Groups: []string{ServiceAccountsAll, "system:serviceaccounts:other"}}
	master := &request.User{Name: "admin", Groups: []string{SystemMasters}}

	tests := []struct {
		name  string
		attrs Attributes
		want  Decision
	}{
		{"cluster binding grants in any namespace", res(alice, "list", "", "pods", "", "x", ""), Allow},
		{"cluster binding grants cluster-wide", res(alice, "watch", "", "pods", "", "", ""), Allow},
		{"verb not granted", res(alice, "delete", "", "pods", "", "x", "p"), NoOpinion},
		{"wrong group", res(alice, "get", "apps", "pods", "", "x", "p"), NoOpinion},
		{"subresource not granted by resource", res(alice, "get", "", "pods", "log", "x", "p"), NoOpinion},
		{"group subject with wildcards", res(opsUser, "deletecollection", "apps", "deployments", "", "x", ""), Allow},
		{"wildcard resource covers subresource", res(opsUser, "patch", "apps", "deployments", "scale", "x", "d"), Allow},
		{"wildcard group still needs the group", res(opsUser, "get", "", "pods", "", "x", ""), NoOpinion},
		{"*/scale matches any scale", res(&request.User{Name: "scaler"}, "update", "apps", "statefulsets", "scale", "x", "s"), Allow},
		{"*/scale does not match the resource", res(&request.User{Name: "scaler"}, "update", "apps", "statefulsets", "", "x", "s"), NoOpinion},
		{"resource/subresource", res(&request.User{Name: "logger"}, "get", "", "pods", "log", "x", "p"), Allow},
		{"resourceNames match", res(carol, "update", "", "configmaps", "", "x", "settings"), Allow},
		{"resourceNames other name", res(carol, "update", "", "configmaps", "", "x", "other"), NoOpinion},
		{"resourceNames never allow list", res(carol, "get", "", "configmaps", "", "x", ""), NoOpinion},
		{"non-resource exact", nonRes(builder, "get", "/metrics"), Allow},
		{"non-resource prefix", nonRes(builder, "get", "/logs/kube.log"), Allow},
		{"non-resource other path", nonRes(builder, "get", "/metricsz"), NoOpinion},
		{"non-resource wrong verb", nonRes(builder, "post", "/metrics"), NoOpinion},
		{"non-resource from RoleBinding ignored", nonRes(bob, "get", "/metrics"), NoOpinion},
		{"SA subject", res(builder, "get", "", "pods", "", "anywhere", "p"), Allow},
		{"SA subject other SA", res(teamApp, "get", "", "pods", "", "team", "p"), NoOpinion},
		{"RoleBinding to Role in its namespace", res(bob, "get", "", "secrets", "", "team", "s"), Allow},
		{"RoleBinding not in other namespace", res(bob, "get", "", "secrets", "", "other", "s"), NoOpinion},
		{"RoleBinding not cluster-wide", res(bob, "list", "", "pods", "", "", ""), NoOpinion},
		{"RoleBinding to ClusterRole", res(bob, "list", "", "pods", "", "team", ""), Allow},
		{"SA subject defaults to binding namespace", res(teamApp, "get", "", "pods", "log", "team", "p"), Allow},
		{"SA of same name elsewhere", res(otherApp, "get", "", "pods", "log", "team", "p"), NoOpinion},
		{"namespace SA group subject", res(teamApp, "get", "", "secrets", "", "team", "s"), Allow},
		{"impersonate verb", res(alice, "impersonate", "", "users", "", "", "bob"), Allow},
		{"escalate verb", res(&request.User{Name: "root-ish"}, "escalate", "rbac.authorization.k8s.io", "clusterroles", "", "", "x"), Allow},
		{"bind verb", res(&request.User{Name: "root-ish"}, "bind", "rbac.authorization.k8s.io", "clusterroles", "", "", "x"), Allow},
		{"deletecollection verb", res(&request.User{Name: "root-ish"}, "deletecollection", "", "secrets", "", "x", ""), Allow},
		{"delete is not deletecollection", res(&request.User{Name: "root-ish"}, "delete", "", "secrets", "", "x", "s"), NoOpinion},
		{"system:masters short-circuit", res(master, "delete", "anything.io", "things", "", "", "x"), Allow},
		{"system:masters non-resource", nonRes(master, "get", "/anything"), Allow},
		{"no user", res(nil, "get", "", "pods", "", "x", ""), NoOpinion},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, reason, err := z.Authorize(context.Background(), tt.attrs)
			if err != nil {
				t.Fatal(err)
			}
			if got != tt.want {
				t.Fatalf("decision = %v (%s), want %v", got, reason, tt.want)
			}
			if got == Allow && !strings.HasPrefix(reason, "RBAC: allowed by ") {
				t.Errorf("allow reason = %q", reason)
			}
		})
	}

	t.Run("allow reason names binding, role and subject", func(t *testing.T) {
		_, reason, _ := z.Authorize(context.Background(), res(bob, "get", "", "secrets", "", "team", "s"))
		want := `RBAC: allowed by RoleBinding "bob-secrets/team" of Role "secret-reader" to User "bob"`
		if reason != want {
			t.Errorf("reason = %q, want %q", reason, want)
		}
	})
	t.Run("missing role is reported in the reason", func(t *testing.T) {
		d, reason, _ := z.Authorize(context.Background(), res(&request.User{Name: "dave"}, "get", "", "pods", "", "x", ""))
		if d != NoOpinion || !strings.Contains(reason, `clusterrole.rbac.authorization.k8s.io "does-not-exist" not found`) {
			t.Errorf("got %v %q", d, reason)
		}
	})
}

func TestRulesFor(t *testing.T) {
	z := newTestRBAC(t,
		clusterRole("mixed", newRule("get").groups("").resources("pods").rule(), newRule("get").urls("/healthz").rule()),
		role("team", "secrets", newRule("get").groups("").resources("secrets").rule()),
		crb("mixed", "mixed", userSubject("bob")),
		rb("team", "secrets", "Role", "secrets", userSubject("bob")),
		rb("team", "gone", "Role", "gone", userSubject("bob")),
	)
	bob := &request.User{Name: "bob"}

	resRules, nonResRules, err := z.RulesFor(bob, "team")
	if err == nil || !strings.Contains(err.Error(), `role.rbac.authorization.k8s.io "gone" not found`) {
		t.Errorf("err = %v, want the missing role", err)
	}
	if len(resRules) != 2 || resRules[0].Resources[0] != "pods" || resRules[1].Resources[0] != "secrets" {
		t.Errorf("resource rules = %+v", resRules)
	}
	if len(nonResRules) != 1 || nonResRules[0].NonResourceURLs[0] != "/healthz" {
		t.Errorf("non-resource rules = %+v", nonResRules)
	}

	resRules, _, err = z.RulesFor(bob, "")
	if err != nil || len(resRules) != 1 {
		t.Errorf("cluster-wide rules = %+v, %v; want only the cluster role's", resRules, err)
	}

	resRules, nonResRules, _ = z.RulesFor(&request.User{Name: "root", Groups: []string{SystemMasters}}, "x")
	if len(resRules) != 1 || resRules[0].Verbs[0] != "*" || len(nonResRules) != 1 || nonResRules[0].NonResourceURLs[0] != "*" {
		t.Errorf("system:masters rules = %+v %+v", resRules, nonResRules)
	}
}

func TestForbiddenMessage(t *testing.T) {
	u := &request.User{Name: "x"}
	tests := []struct {
		attrs  Attributes
		reason string
		want   string
	}{
		{res(u, "list", "", "pods", "", "y", ""), "", `User "x" cannot list resource "pods" in API group "" in the namespace "y"`},
		{res(u, "list", "", "nodes", "", "", ""), "", `User "x" cannot list resource "nodes" in API group "" at the cluster scope`},
		{res(u, "get", "", "pods", "log", "y", "p"), "", `User "x" cannot get resource "pods/log" in API group "" in the namespace "y"`},
		{res(u, "create", "apps", "deployments", "", "y", ""), "RBAC: boom", `User "x" cannot create resource "deployments" in API group "apps" in the namespace "y": RBAC: boom`},
		{nonRes(u, "get", "/foo"), "", `User "x" cannot get path "/foo"`},
	}
	for _, tt := range tests {
		if got := ForbiddenMessage(tt.attrs, tt.reason); got != tt.want {
			t.Errorf("got  %s\nwant %s", got, tt.want)
		}
	}
}

func TestForbiddenStatus(t *testing.T) {
	err := Forbidden(res(&request.User{Name: "x"}, "get", "apps", "deployments", "", "y", "web"), "")
	status, ok := err.(apierrors.APIStatus)
	if !ok || !apierrors.IsForbidden(err) {
		t.Fatalf("not a Forbidden status error: %v", err)
	}
	s := status.Status()
	want := `deployments.apps "web" is forbidden: User "x" cannot get resource "deployments" in API group "apps" in the namespace "y"`
	if s.Message != want || s.Code != 403 || s.Reason != metav1.StatusReasonForbidden {
		t.Errorf("status = %d %s %q", s.Code, s.Reason, s.Message)
	}
	if s.Details == nil || s.Details.Group != "apps" || s.Details.Kind != "deployments" || s.Details.Name != "web" {
		t.Errorf("details = %+v", s.Details)
	}

	list := Forbidden(res(&request.User{Name: "x"}, "list", "", "pods", "", "y", ""), "")
	if got := list.Error(); got != `pods is forbidden: User "x" cannot list resource "pods" in API group "" in the namespace "y"` {
		t.Errorf("list message = %q", got)
	}
}

func TestUnion(t *testing.T) {
	deny := AuthorizerFunc(func(context.Context, Attributes) (Decision, string, error) { return Deny, "no", nil })
	none := AuthorizerFunc(func(context.Context, Attributes) (Decision, string, error) { return NoOpinion, "dunno", nil })
	if d, _, _ := (Union{none, AlwaysAllow{}}).Authorize(context.Background(), Attributes{}); d != Allow {
		t.Errorf("none+allow = %v", d)
	}
	if d, reason, _ := (Union{deny, AlwaysAllow{}}).Authorize(context.Background(), Attributes{}); d != Deny || reason != "no" {
		t.Errorf("deny+allow = %v %q", d, reason)
	}
	if d, reason, _ := (Union{none}).Authorize(context.Background(), Attributes{}); d != NoOpinion || reason != "dunno" {
		t.Errorf("none = %v %q", d, reason)
	}
}

func TestAttributesFrom(t *testing.T) {
	u := &request.User{Name: "x"}
	a := AttributesFrom(u, &request.RequestInfo{IsResourceRequest: true, Path: "/api/v1/namespaces/y/pods/p/log", Verb: "get",
		APIVersion: "v1", Namespace: "y", Resource: "pods", Subresource: "log", Name: "p"})
	want := Attributes{User: u, Verb: "get", APIVersion: "v1", Namespace: "y", Resource: "pods", Subresource: "log", Name: "p",
		Path: "/api/v1/namespaces/y/pods/p/log", ResourceRequest: true}
	if a != want {
		t.Errorf("got %+v", a)
	}
	if a := AttributesFrom(u, &request.RequestInfo{Path: "/healthz", Verb: "get"}); a.ResourceRequest || a.Path != "/healthz" || a.Verb != "get" {
		t.Errorf("non-resource = %+v", a)
	}
}

func TestSplitServiceAccountUsername(t *testing.T) {
	ns, name, ok := SplitServiceAccountUsername("system:serviceaccount:ci:builder")
	if !ok || ns != "ci" || name != "builder" {
		t.Errorf("got %q %q %v", ns, name, ok)
	}
	for _, bad := range []string{"alice", "system:serviceaccount:ci", "system:serviceaccount::x", "system:serviceaccount:a:b:c"} {
		if _, _, ok := SplitServiceAccountUsername(bad); ok {
			t.Errorf("%q accepted", bad)
		}
	}
}

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

func findRole(roles []*rbacv1.ClusterRole, name string) *rbacv1.ClusterRole {
	for _, r := range roles {
		if r.Name == name {
			return r
		}
	}
	return nil
}

func TestAggregationPicksUpNewLabelledRole(t *testing.T) {
	roles := BootstrapClusterRoles()
	changed := AggregateClusterRoles(roles)
	for _, name := range []string{"admin", "edit", "view"} {
		if findRole(changed, name) == nil {
			t.Fatalf("%s not aggregated on first run", name)
		}
	}
	for _, c := range changed {
		for i := range roles {
			if roles[i].Name == c.Name {
				roles[i] = c
			}
		}
	}
	if again := AggregateClusterRoles(roles); len(again) != 0 {
		t.Fatalf("second run changed %d roles, want none", len(again))
	}

	// A CRD's operator ships a role labelled aggregate-to-view: view, edit
	// and admin all pick it up (through the chain), nothing else does.
	widgetRule := newRule("get", "list", "watch").groups("example.com").resources("widgets").rule()
	widgets := &rbacv1.ClusterRole{
		ObjectMeta: metav1.ObjectMeta{Name: "widgets-view", Labels: map[string]string{AggregateToView: "true"}},
		Rules:      []rbacv1.PolicyRule{widgetRule},
	}
	viewBefore := findRole(roles, "view").DeepCopy()
	roles = append(roles, widgets)
	changed = AggregateClusterRoles(roles)
	if len(changed) != 3 {
		t.Errorf("changed %d roles, want view, edit, admin", len(changed))
	}
	for _, name := range []string{"admin", "edit", "view"} {
		c := findRole(changed, name)
		if c == nil {
			t.Fatalf("%s did not pick up the new role", name)
		}
		if ok, _ := Covers(c.Rules, []rbacv1.PolicyRule{widgetRule}); !ok {
			t.Errorf("%s lacks the widget rule", name)
		}
	}
	if !equalRules(findRole(roles, "view").Rules, viewBefore.Rules) {
		t.Error("input role was modified")
	}
}

func equalRules(a, b []rbacv1.PolicyRule) bool {
	okA, _ := Covers(a, b)
	okB, _ := Covers(b, a)
	return okA && okB && len(a) == len(b)
}

func bootstrapRBAC(t *testing.T, extra ...runtime.Object) *RBAC {
	t.Helper()
	return newTestRBAC(t, append(BootstrapObjects(), extra...)...)
}

func TestBootstrapPolicy(t *testing.T) {
	viewer := &request.User{Name: "viewer", Groups: []string{AllAuthenticated}}
	editor := &request.User{Name: "editor", Groups: []string{AllAuthenticated}}
	admin := &request.User{Name: "nsadmin", Groups: []string{AllAuthenticated}}
	anonymous := &request.User{Name: "system:anonymous", Groups: []string{AllUnauthenticated}}
	master := &request.User{Name: "kubernetes-admin", Groups: []string{"kubeadm:cluster-admins", SystemMasters, AllAuthenticated}}
	sa := &request.User{Name: "system:serviceaccount:ns:app", Groups: []string{ServiceAccountsAll, "system:serviceaccounts:ns", AllAuthenticated}}
	z := bootstrapRBAC(t,
		rb("ns", "v", "ClusterRole", "view", userSubject("viewer")),
		rb("ns", "e", "ClusterRole", "edit", userSubject("editor")),
		rb("ns", "a", "ClusterRole", "admin", userSubject("nsadmin")),
	)
	tests := []struct {
		name  string
		attrs Attributes
		want  Decision
	}{
		{"view lists pods", res(viewer, "list", "", "pods", "", "ns", ""), Allow},
		{"view reads pod logs", res(viewer, "get", "", "pods", "log", "ns", "p"), Allow},
		{"view cannot read secrets", res(viewer, "get", "", "secrets", "", "ns", "s"), NoOpinion},
		{"view cannot create", res(viewer, "create", "", "pods", "", "ns", ""), NoOpinion},
		{"view only in its namespace", res(viewer, "list", "", "pods", "", "other", ""), NoOpinion},
		{"edit creates deployments", res(editor, "create", "apps", "deployments", "", "ns", ""), Allow},
		{"edit scales deployments", res(editor, "update", "apps", "deployments", "scale", "ns", "d"), Allow},
		{"edit reads via view", res(editor, "watch", "apps", "deployments", "", "ns", ""), Allow},
		{"edit execs", res(editor, "create", "", "pods", "exec", "ns", "p"), Allow},
		{"edit cannot create rolebindings", res(editor, "create", rbacv1.GroupName, "rolebindings", "", "ns", ""), NoOpinion},
		{"admin creates rolebindings", res(admin, "create", rbacv1.GroupName, "rolebindings", "", "ns", ""), Allow},
		{"admin has edit rules", res(admin, "delete", "batch", "jobs", "", "ns", "j"), Allow},
		{"admin cannot touch resourcequotas", res(admin, "update", "", "resourcequotas", "", "ns", "q"), NoOpinion},
		{"anonymous healthz", nonRes(anonymous, "get", "/healthz"), Allow},
		{"anonymous version", nonRes(anonymous, "get", "/version"), Allow},
		{"anonymous no discovery", nonRes(anonymous, "get", "/apis"), NoOpinion},
		{"anonymous no pods", res(anonymous, "list", "", "pods", "", "ns", ""), NoOpinion},
		{"authenticated discovery", nonRes(viewer, "get", "/apis/apps/v1"), Allow},
		{"authenticated openapi", nonRes(viewer, "get", "/openapi/v3"), Allow},
		{"basic-user selfsubjectaccessreviews", res(viewer, "create", "authorization.k8s.io", "selfsubjectaccessreviews", "", "", ""), Allow},
		{"basic-user selfsubjectrulesreviews", res(viewer, "create", "authorization.k8s.io", "selfsubjectrulesreviews", "", "", ""), Allow},
		{"basic-user selfsubjectreviews (whoami)", res(viewer, "create", "authentication.k8s.io", "selfsubjectreviews", "", "", ""), Allow},
		{"no subjectaccessreviews for users", res(viewer, "create", "authorization.k8s.io", "subjectaccessreviews", "", "", ""), NoOpinion},
		{"SA reads OIDC discovery", nonRes(sa, "get", "/openid/v1/jwks"), Allow},
		{"cluster-admin via binding", res(master, "delete", "", "nodes", "", "", "n"), Allow},
		{"bootstrap-signer reads kube-public configmaps",
			res(&request.User{Name: "system:serviceaccount:kube-system:bootstrap-signer"}, "list", "", "configmaps", "", "kube-public", ""), Allow},
		{"leader lock by name only",
			res(&request.User{Name: "system:kube-scheduler"}, "update", "", "configmaps", "", "kube-system", "kube-controller-manager"), NoOpinion},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got, reason, _ := z.Authorize(context.Background(), tt.attrs); got != tt.want {
				t.Errorf("decision = %v (%s), want %v", got, reason, tt.want)
			}
		})
	}

	// the cluster-admin binding alone (no short-circuit) grants everything
	noShortCircuit := &request.User{Name: "x", Groups: []string{"system:masters-lookalike"}}
	z2 := bootstrapRBAC(t, crb("x-admin", "cluster-admin", userSubject("x")))
	if d, _, _ := z2.Authorize(context.Background(), res(noShortCircuit, "escalate", rbacv1.GroupName, "clusterroles", "", "", "y")); d != Allow {
		t.Error("cluster-admin role does not allow escalate")
	}
}

func TestBootstrapMetadata(t *testing.T) {
	var metas []metav1.ObjectMeta
	for _, r := range BootstrapClusterRoles() {
		metas = append(metas, r.ObjectMeta)
	}
	for _, b := range BootstrapClusterRoleBindings() {
		metas = append(metas, b.ObjectMeta)
		if b.RoleRef.Name != b.Name || b.RoleRef.Kind != "ClusterRole" || b.RoleRef.APIGroup != rbacv1.GroupName {
			t.Errorf("binding %s roleRef = %+v", b.Name, b.RoleRef)
		}
	}
	for _, r := range BootstrapRoles() {
		metas = append(metas, r.ObjectMeta)
	}
	for _, b := range BootstrapRoleBindings() {
		metas = append(metas, b.ObjectMeta)
	}
	for _, m := range metas {
		if m.Labels[BootstrappingLabel] != "rbac-defaults" || m.Annotations["rbac.authorization.kubernetes.io/autoupdate"] != "true" {
			t.Errorf("%s/%s: labels %v annotations %v", m.Namespace, m.Name, m.Labels, m.Annotations)
		}
	}
	edit := findRole(BootstrapClusterRoles(), "edit")
	if edit.Labels[AggregateToAdmin] != "true" || edit.AggregationRule.ClusterRoleSelectors[0].MatchLabels[AggregateToEdit] != "true" {
		t.Errorf("edit aggregation = %+v %+v", edit.Labels, edit.AggregationRule)
	}
}

func TestEscalation(t *testing.T) {
	z := bootstrapRBAC(t,
		role("ns", "pod-reader", newRule("get", "list").groups("").resources("pods").rule()),
		rb("ns", "a", "ClusterRole", "admin", userSubject("nsadmin")),
		clusterRole("escalator", newRule("escalate").groups(rbacv1.GroupName).resources("roles").rule()),
		rb("ns", "esc", "ClusterRole", "escalator", userSubject("nsadmin-plus")),
		rb("ns", "a2", "ClusterRole", "admin", userSubject("nsadmin-plus")),
		clusterRole("binder", newRule("bind").groups(rbacv1.GroupName).resources("clusterroles").names("cluster-admin").rule()),
		crb("binder", "binder", userSubject("binder")),
	)
	ctx := context.Background()
	nsadmin := &request.User{Name: "nsadmin", Groups: []string{AllAuthenticated}}
	secretsDelete := []rbacv1.PolicyRule{newRule("get", "delete").groups("").resources("pods").rule(), newRule("*").groups("").resources("nodes").rule()}

	if err := z.ConfirmNoEscalation(ctx, nsadmin, []rbacv1.PolicyRule{newRule("get", "list").groups("").resources("pods").rule()}, "ns"); err != nil {
		t.Errorf("granting held rules refused: %v", err)
	}
	err := z.ConfirmNoEscalation(ctx, nsadmin, secretsDelete, "ns")
	want := `user "nsadmin" (groups=["system:authenticated"]) is attempting to grant RBAC permissions not currently held:` + "\n" +
		`{APIGroups:[""], Resources:["nodes"], Verbs:["*"]}`
	if err == nil || err.Error() != want {
		t.Errorf("escalation error:\n%v\nwant\n%s", err, want)
	}
	err = z.ConfirmNoEscalation(ctx, nsadmin, []rbacv1.PolicyRule{newRule("get", "list").groups("").resources("pods").rule()}, "other")
	if err == nil || !strings.Contains(err.Error(), `{APIGroups:[""], Resources:["pods"], Verbs:["get" "list"]}`) {
		t.Errorf("rules held in another namespace must not count: %v", err)
	}

	err = z.RoleChangeAllowed(ctx, nsadmin, "roles", "ns", "r", secretsDelete)
	if !apierrors.IsForbidden(err) || !strings.HasPrefix(err.Error(), `roles.rbac.authorization.k8s.io "r" is forbidden: user "nsadmin"`) {
		t.Errorf("RoleChangeAllowed = %v", err)
	}
	plus := &request.User{Name: "nsadmin-plus"}
	if err := z.RoleChangeAllowed(ctx, plus, "roles", "ns", "r", secretsDelete); err != nil {
		t.Errorf("escalate verb should allow: %v", err)
	}
	if err := z.RoleChangeAllowed(ctx, plus, "roles", "other", "r", secretsDelete); err == nil {
		t.Error("escalate in ns must not allow in other")
	}
	if err := z.RoleChangeAllowed(ctx, &request.User{Name: "root", Groups: []string{SystemMasters}}, "clusterroles", "", "r", secretsDelete); err != nil {
		t.Errorf("system:masters refused: %v", err)
	}

	// bindings: allowed when the binder holds the role's rules...
	podReader := rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: "pod-reader"}
	if err := z.BindingAllowed(ctx, nsadmin, "rolebindings", "ns", "b", podReader); err != nil {
		t.Errorf("binding held rules refused: %v", err)
	}
	clusterAdmin := rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "cluster-admin"}
	if err := z.BindingAllowed(ctx, nsadmin, "rolebindings", "ns", "b", clusterAdmin); !apierrors.IsForbidden(err) {
		t.Errorf("binding cluster-admin by namespace admin = %v, want forbidden", err)
	}
	// ...or has bind on it
	if err := z.BindingAllowed(ctx, &request.User{Name: "binder"}, "clusterrolebindings", "", "b", clusterAdmin); err != nil {
		t.Errorf("bind verb should allow: %v", err)
	}
	view := rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "view"}
	if err := z.BindingAllowed(ctx, &request.User{Name: "binder"}, "clusterrolebindings", "", "b", view); err == nil {
		t.Error("bind on cluster-admin must not allow binding view without holding it")
	}
	missing := rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: "nope"}
	if err := z.BindingAllowed(ctx, nsadmin, "rolebindings", "ns", "b", missing); !apierrors.IsForbidden(err) {
		t.Errorf("binding a missing role = %v", err)
	}

	if err := z.AggregationRuleAllowed(ctx, nsadmin, "agg"); !apierrors.IsForbidden(err) || !strings.Contains(err.Error(), "must have cluster-admin privileges to use the aggregationRule") {
		t.Errorf("AggregationRuleAllowed = %v", err)
	}
}

func TestCovers(t *testing.T) {
	owner := []rbacv1.PolicyRule{
		newRule("get").groups("").resources("*/status").rule(),
		newRule("get").groups("").resources("configmaps").names("a", "b").rule(),
		newRule("get").urls("/logs/*").rule(),
	}
	tests := []struct {
		rule rbacv1.PolicyRule
		want bool
	}{
		{newRule("get").groups("").resources("pods/status").rule(), true},
		{newRule("get").groups("").resources("pods").rule(), false},
		{newRule("get").groups("").resources("configmaps").names("a").rule(), true},
		{newRule("get").groups("").resources("configmaps").names("c").rule(), false},
		{newRule("get").groups("").resources("configmaps").rule(), false},
		{newRule("get").urls("/logs/x").rule(), true},
		{newRule("get").urls("/logs").rule(), false},
	}
	for _, tt := range tests {
		if got, _ := Covers(owner, []rbacv1.PolicyRule{tt.rule}); got != tt.want {
			t.Errorf("Covers(%s) = %v", CompactString(tt.rule), got)
		}
	}
}

func TestReconcile(t *testing.T) {
	wanted := findRole(BootstrapClusterRoles(), "system:basic-user")

	t.Run("up to date", func(t *testing.T) {
		if _, update := Reconcile(wanted.DeepCopy(), wanted); update {
			t.Error("identical role needs update")
		}
	})
	t.Run("keeps user additions and adds missing rules", func(t *testing.T) {
		existing := wanted.DeepCopy()
		existing.Rules = []rbacv1.PolicyRule{
			newRule("create").groups("authorization.k8s.io").resources("selfsubjectaccessreviews").rule(),
			newRule("get").groups("example.com").resources("widgets").rule(), // user addition
		}
		existing.Labels["team"] = "platform"
		delete(existing.Annotations, AutoUpdateAnnotation)
		got, update := Reconcile(existing, wanted)
		if !update {
			t.Fatal("no update")
		}
		if ok, _ := Covers(got.Rules, wanted.Rules); !ok {
			t.Errorf("missing wanted rules: %+v", got.Rules)
		}
		if ok, _ := Covers(got.Rules, existing.Rules); !ok {
			t.Errorf("user rules removed: %+v", got.Rules)
		}
		if got.Labels["team"] != "platform" || got.Annotations[AutoUpdateAnnotation] != "true" {
			t.Errorf("metadata = %v %v", got.Labels, got.Annotations)
		}
		if len(existing.Rules) != 2 {
			t.Error("existing was modified")
		}
	})
	t.Run("autoupdate false is left alone", func(t *testing.T) {
		existing := wanted.DeepCopy()
		existing.Rules = nil
		existing.Annotations[AutoUpdateAnnotation] = "false"
		got, update := Reconcile(existing, wanted)
		if update || len(got.Rules) != 0 {
			t.Errorf("protected role changed: %v %+v", update, got.Rules)
		}
	})
	t.Run("aggregation selectors added, computed rules kept", func(t *testing.T) {
		wantedView := findRole(BootstrapClusterRoles(), "view")
		existing := wantedView.DeepCopy()
		existing.Rules = []rbacv1.PolicyRule{newRule("get").groups("").resources("pods").rule()}
		existing.AggregationRule = &rbacv1.AggregationRule{ClusterRoleSelectors: []metav1.LabelSelector{{MatchLabels: map[string]string{"mine": "true"}}}}
		got, update := Reconcile(existing, wantedView)
		if !update || len(got.AggregationRule.ClusterRoleSelectors) != 2 || len(got.Rules) != 1 {
			t.Errorf("got %v %+v", update, got)
		}
	})
	t.Run("bindings gain missing subjects", func(t *testing.T) {
		wantedB := BootstrapClusterRoleBindings()[0]
		existing := wantedB.DeepCopy()
		existing.Subjects = []rbacv1.Subject{userSubject("me")}
		got, update := ReconcileClusterRoleBinding(existing, wantedB)
		if !update || len(got.Subjects) != 2 || got.Subjects[0].Name != "me" {
			t.Errorf("got %v %+v", update, got.Subjects)
		}
		existing.Annotations[AutoUpdateAnnotation] = "false"
		if _, update := ReconcileClusterRoleBinding(existing, wantedB); update {
			t.Error("protected binding updated")
		}
		moved := wantedB.DeepCopy()
		moved.RoleRef.Name = "other"
		if got, update := ReconcileClusterRoleBinding(moved, wantedB); !update || !RoleRefChanged(moved.RoleRef, got.RoleRef) {
			t.Error("changed roleRef not reported")
		}
	})
	t.Run("roles and role bindings", func(t *testing.T) {
		wantedR := BootstrapRoles()[0]
		existing := wantedR.DeepCopy()
		existing.Rules = nil
		var want int
		for _, r := range wantedR.Rules {
			want += len(breakdownRule(r))
		}
		if got, update := ReconcileRole(existing, wantedR); !update || len(got.Rules) != want {
			t.Errorf("role: %v %+v", update, got.Rules)
		}
		wantedRB := BootstrapRoleBindings()[0]
		if _, update := ReconcileRoleBinding(wantedRB.DeepCopy(), wantedRB); update {
			t.Error("identical role binding needs update")
		}
	})
}

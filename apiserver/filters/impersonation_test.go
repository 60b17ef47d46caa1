package filters

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/devplane/devplane/apiserver/authz"
	"github.com/devplane/devplane/apiserver/request"
)

func testAuthorizer(t *testing.T) authz.Authorizer {
	t.Helper()
	subject := func(kind, name string) rbacv1.Subject {
		s := rbacv1.Subject{Kind: kind, Name: name, APIGroup: rbacv1.GroupName}
		return s
	}
	objs := append(authz.BootstrapObjects(),
		&rbacv1.ClusterRole{
			ObjectMeta: metav1.ObjectMeta{Name: "impersonate-bob"},
			Rules: []rbacv1.PolicyRule{
				{Verbs: []string{"impersonate"}, APIGroups: []string{""}, Resources: []string{"users"}, ResourceNames: []string{"bob"}},
				{Verbs: []string{"impersonate"}, APIGroups: []string{""}, Resources: []string{"groups"}, ResourceNames: []string{"devs"}},
				{Verbs: []string{"impersonate"}, APIGroups: []string{"authentication.k8s.io"}, Resources: []string{"userextras/scopes", "uids"}},
			},
		},
		&rbacv1.ClusterRoleBinding{
			ObjectMeta: metav1.ObjectMeta{Name: "alice-impersonates"},
			RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "impersonate-bob"},
			Subjects:   []rbacv1.Subject{subject(rbacv1.UserKind, "alice")},
		},
		// edit in "ci" lets alice impersonate service accounts there.
		&rbacv1.RoleBinding{
			ObjectMeta: metav1.ObjectMeta{Namespace: "ci", Name: "alice-edit"},
			RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "edit"},
			Subjects:   []rbacv1.Subject{subject(rbacv1.UserKind, "alice")},
		},
	)
	src, err := authz.NewStaticRules(objs...)
	if err != nil {
		t.Fatal(err)
	}
	return authz.NewRBAC(src)
}

// serveAs runs h for a request by user with the given headers and returns
// the response and the user (and headers) the inner handler saw.
func serveAs(t *testing.T, h func(http.Handler) http.Handler, user *request.User, header http.Header) (*httptest.ResponseRecorder, *request.User, http.Header) {
	t.Helper()
	var seen *request.User
	var seenHeader http.Header
	inner := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		seen, _ = request.UserFrom(r.Context())
		seenHeader = r.Header
		w.WriteHeader(http.StatusOK)
	})
	req := httptest.NewRequest("GET", "/api/v1/namespaces/default/pods", nil)
	for k, vs := range header {
		for _, v := range vs {
			req.Header.Add(k, v)
		}
	}
	req = req.WithContext(request.WithUser(req.Context(), user))
	rec := httptest.NewRecorder()
	h(inner).ServeHTTP(rec, req)
	return rec, seen, seenHeader
}

func statusOf(t *testing.T, rec *httptest.ResponseRecorder) metav1.Status {
	t.Helper()
	var s metav1.Status
	body, _ := io.ReadAll(rec.Body)
	if err := json.Unmarshal(body, &s); err != nil {
		t.Fatalf("not a Status: %s", body)
	}
	return s
}

func TestImpersonation(t *testing.T) {
	a := testAuthorizer(t)
	withImp := func(h http.Handler) http.Handler { return WithImpersonation(h, a) }
	alice := &request.User{Name: "alice", Groups: []string{"system:authenticated"}}

	t.Run("no headers passes the requestor through", func(t *testing.T) {
		rec, seen, _ := serveAs(t, withImp, alice, nil)
		if rec.Code != 200 || seen != alice {
			t.Errorf("code %d user %+v", rec.Code, seen)
		}
	})

	t.Run("allowed user, group, extra and uid", func(t *testing.T) {
		h := http.Header{}
		h.Set("Impersonate-User", "bob")
		h.Add("Impersonate-Group", "devs")
		h.Add("Impersonate-Extra-Scopes", "view")
		h.Add("Impersonate-Extra-Scopes", "edit")
		h.Set("Impersonate-Uid", "1234")
		rec, seen, seenHeader := serveAs(t, withImp, alice, h)
		if rec.Code != 200 {
			t.Fatalf("code %d: %s", rec.Code, rec.Body)
		}
		if seen.Name != "bob" || seen.UID != "1234" || !slices.Equal(seen.Groups, []string{"devs", "system:authenticated"}) {
			t.Errorf("impersonated user = %+v", seen)
		}
		if !slices.Equal(seen.Extra["scopes"], []string{"view", "edit"}) {
			t.Errorf("extra = %v", seen.Extra)
		}
		for k := range seenHeader {
			if len(k) >= 12 && k[:12] == "Impersonate-" {
				t.Errorf("header %s passed on", k)
			}
		}
	})

	t.Run("escaped extra key", func(t *testing.T) {
		a := authz.AuthorizerFunc(func(_ context.Context, attrs authz.Attributes) (authz.Decision, string, error) {
			if attrs.Resource == "userextras" && attrs.Subresource != "example.com/team" {
				return authz.NoOpinion, "", nil
			}
			return authz.Allow, "", nil
		})
		h := http.Header{}
		h.Set("Impersonate-User", "bob")
		h.Set("Impersonate-Extra-Example.com%2fteam", "blue")
		rec, seen, _ := serveAs(t, func(h http.Handler) http.Handler { return WithImpersonation(h, a) }, alice, h)
		if rec.Code != 200 || seen.Extra["example.com/team"][0] != "blue" {
			t.Errorf("code %d extra %v", rec.Code, seen)
		}
	})

	t.Run("denied user", func(t *testing.T) {
		h := http.Header{}
		h.Set("Impersonate-User", "carol")
		rec, seen, _ := serveAs(t, withImp, alice, h)
		if rec.Code != 403 || seen != nil {
			t.Fatalf("code %d, inner saw %+v", rec.Code, seen)
		}
		s := statusOf(t, rec)
		want := `users "carol" is forbidden: User "alice" cannot impersonate resource "users" in API group "" at the cluster scope`
		if s.Message != want || s.Reason != metav1.StatusReasonForbidden || s.Details.Kind != "users" || s.Details.Name != "carol" {
			t.Errorf("status = %+v", s)
		}
	})

	t.Run("denied group", func(t *testing.T) {
		h := http.Header{}
		h.Set("Impersonate-User", "bob")
		h.Add("Impersonate-Group", "system:masters")
		rec, _, _ := serveAs(t, withImp, alice, h)
		want := `groups "system:masters" is forbidden: User "alice" cannot impersonate resource "groups" in API group "" at the cluster scope`
		if s := statusOf(t, rec); rec.Code != 403 || s.Message != want {
			t.Errorf("code %d %q", rec.Code, s.Message)
		}
	})

	t.Run("denied extra", func(t *testing.T) {
		h := http.Header{}
		h.Set("Impersonate-User", "bob")
		h.Set("Impersonate-Extra-Reason", "because")
		rec, _, _ := serveAs(t, withImp, alice, h)
		want := `userextras.authentication.k8s.io "because" is forbidden: User "alice" cannot impersonate resource "userextras/reason" in API group "authentication.k8s.io" at the cluster scope`
		if s := statusOf(t, rec); rec.Code != 403 || s.Message != want {
			t.Errorf("code %d %q", rec.Code, s.Message)
		}
	})

	t.Run("service account allowed by edit in its namespace", func(t *testing.T) {
		h := http.Header{}
		h.Set("Impersonate-User", "system:serviceaccount:ci:builder")
		rec, seen, _ := serveAs(t, withImp, alice, h)
		if rec.Code != 200 {
			t.Fatalf("code %d: %s", rec.Code, rec.Body)
		}
		want := []string{"system:serviceaccounts", "system:serviceaccounts:ci", "system:authenticated"}
		if seen.Name != "system:serviceaccount:ci:builder" || !slices.Equal(seen.Groups, want) {
			t.Errorf("user = %+v", seen)
		}
	})

	t.Run("service account elsewhere denied", func(t *testing.T) {
		h := http.Header{}
		h.Set("Impersonate-User", "system:serviceaccount:prod:deployer")
		rec, _, _ := serveAs(t, withImp, alice, h)
		want := `serviceaccounts "deployer" is forbidden: User "alice" cannot impersonate resource "serviceaccounts" in API group "" in the namespace "prod"`
		if s := statusOf(t, rec); rec.Code != 403 || s.Message != want {
			t.Errorf("code %d %q", rec.Code, s.Message)
		}
	})

	t.Run("groups without user", func(t *testing.T) {
		h := http.Header{}
		h.Add("Impersonate-Group", "devs")
		rec, _, _ := serveAs(t, withImp, alice, h)
		if rec.Code != 400 {
			t.Errorf("code %d", rec.Code)
		}
	})

	t.Run("anonymous gets unauthenticated", func(t *testing.T) {
		h := http.Header{}
		h.Set("Impersonate-User", "system:anonymous")
		master := &request.User{Name: "root", Groups: []string{"system:masters"}}
		rec, seen, _ := serveAs(t, withImp, master, h)
		if rec.Code != 200 || !slices.Equal(seen.Groups, []string{"system:unauthenticated"}) {
			t.Errorf("code %d user %+v", rec.Code, seen)
		}
	})
}

func TestAuthorizationFilter(t *testing.T) {
	a := testAuthorizer(t)
	stack := func(h http.Handler) http.Handler {
		return WithRequestInfo(WithImpersonation(WithAuthorization(h, a, slog.New(slog.DiscardHandler)), a))
	}
	alice := &request.User{Name: "alice", Groups: []string{"system:authenticated"}}

	rec, _, _ := serveAs(t, stack, alice, nil)
	want := `pods is forbidden: User "alice" cannot list resource "pods" in API group "" in the namespace "default"`
	if s := statusOf(t, rec); rec.Code != 403 || s.Message != want {
		t.Errorf("code %d %q", rec.Code, s.Message)
	}

	// impersonating a service account only gets that account's permissions
	h := http.Header{}
	h.Set("Impersonate-User", "system:serviceaccount:ci:builder")
	rec, _, _ = serveAs(t, stack, alice, h)
	want = `pods is forbidden: User "system:serviceaccount:ci:builder" cannot list resource "pods" in API group "" in the namespace "default"`
	if s := statusOf(t, rec); rec.Code != 403 || s.Message != want {
		t.Errorf("code %d %q", rec.Code, s.Message)
	}

	master := &request.User{Name: "root", Groups: []string{"system:masters"}}
	if rec, seen, _ := serveAs(t, stack, master, nil); rec.Code != 200 || seen != master {
		t.Errorf("system:masters: code %d", rec.Code)
	}
}

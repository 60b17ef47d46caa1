package controlplane_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/devplane/devplane/apiserver/controlplane"
	"github.com/devplane/devplane/apiserver/controlplane/controlplanetest"
	"github.com/devplane/devplane/apiserver/serviceaccount"
)

// identity is a non-admin user of a running devplane: a client-go
// clientset and a kubeconfig file for kubectl.
type identity struct {
	cs         *kubernetes.Clientset
	config     *rest.Config
	kubeconfig string
}

func identityFor(t *testing.T, s *started, user string, groups []string) identity {
	t.Helper()
	kc, err := s.cp.KubeconfigFor(user, groups)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), user+".kubeconfig")
	if err := clientcmd.WriteToFile(*kc, path); err != nil {
		t.Fatal(err)
	}
	cfg, err := clientcmd.NewDefaultClientConfig(*kc, nil).ClientConfig()
	if err != nil {
		t.Fatal(err)
	}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return identity{cs: cs, config: cfg, kubeconfig: path}
}

// tokenClient is a clientset authenticating with a bearer token only.
func tokenClient(t *testing.T, s *started, token string) *kubernetes.Clientset {
	t.Helper()
	cfg := &rest.Config{Host: s.cp.URL(), BearerToken: token,
		TLSClientConfig: rest.TLSClientConfig{CAData: s.cp.Certs.CA.CertPEM}, QPS: -1, Burst: -1}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return cs
}

func mustCreate[T any](t *testing.T, what string, create func() (T, error)) T {
	t.Helper()
	out, err := create()
	if err != nil {
		t.Fatalf("creating %s: %v", what, err)
	}
	return out
}

func TestSecurity(t *testing.T) {
	s := startControlPlane(t, "")
	ctx := t.Context()
	admin := s.clientset(t, false)
	mustCreate(t, "namespace x", func() (*corev1.Namespace, error) {
		return admin.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "x"}}, metav1.CreateOptions{})
	})
	alice := identityFor(t, s, "alice", nil)
	s.kubeconfigFile(t) // in the test's temp dir, not a subtest's
	kubectlAs := func(t *testing.T, id identity, args ...string) controlplanetest.KubectlResult {
		return s.kubectl(t, nil, "", append([]string{"--kubeconfig", id.kubeconfig}, args...)...)
	}

	t.Run("admin can-i and whoami", func(t *testing.T) {
		if out := strings.TrimSpace(s.mustKubectl(t, "auth", "can-i", "create", "pods")); out != "yes" {
			t.Errorf("kubectl auth can-i create pods = %q, want yes", out)
		}
		out := s.mustKubectl(t, "auth", "whoami", "-o", "json")
		var review authenticationv1.SelfSubjectReview
		if err := json.Unmarshal([]byte(out), &review); err != nil {
			t.Fatalf("whoami output %q: %v", out, err)
		}
		ui := review.Status.UserInfo
		if ui.Username != "devplane-admin" || !slices.Contains(ui.Groups, "system:masters") || !slices.Contains(ui.Groups, "system:authenticated") {
			t.Errorf("whoami = %+v", ui)
		}
		table := s.mustKubectl(t, "auth", "whoami")
		if !strings.Contains(table, "devplane-admin") || !strings.Contains(table, "system:masters") {
			t.Errorf("kubectl auth whoami:\n%s", table)
		}
	})

	t.Run("non-admin is forbidden with kube's message", func(t *testing.T) {
		_, err := alice.cs.CoreV1().Pods("x").List(ctx, metav1.ListOptions{})
		if !apierrors.IsForbidden(err) {
			t.Fatalf("alice listing pods: %v, want 403", err)
		}
		want := `pods is forbidden: User "alice" cannot list resource "pods" in API group "" in the namespace "x"`
		if err.Error() != want {
			t.Errorf("message %q, want %q", err.Error(), want)
		}
		r := s.kubectl(t, nil, "", "auth", "can-i", "list", "pods", "-n", "x", "--as", "alice")
		if strings.TrimSpace(r.Stdout) != "no" || r.Code != 1 {
			t.Errorf("can-i --as alice = %d %q %q", r.Code, r.Stdout, r.Stderr)
		}
		r = kubectlAs(t, alice, "get", "pods", "-n", "x")
		if r.Code == 0 || !strings.Contains(r.Stderr, `User "alice" cannot list resource "pods"`) {
			t.Errorf("kubectl get pods as alice = %d %q", r.Code, r.Stderr)
		}
		// Every authenticated user may ask about itself.
		out := kubectlAs(t, alice, "auth", "whoami", "-o", "jsonpath={.status.userInfo.username}")
		if out.Code != 0 || out.Stdout != "alice" {
			t.Errorf("alice whoami = %d %q %q", out.Code, out.Stdout, out.Stderr)
		}
	})

	t.Run("a RoleBinding to view grants reading", func(t *testing.T) {
		mustCreate(t, "rolebinding", func() (*rbacv1.RoleBinding, error) {
			return admin.RbacV1().RoleBindings("x").Create(ctx, &rbacv1.RoleBinding{
				ObjectMeta: metav1.ObjectMeta{Name: "alice-view"},
				RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "view"},
				Subjects:   []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: "alice"}},
			}, metav1.CreateOptions{})
		})
		controlplanetest.Eventually(t, 10*time.Second, "alice may list pods in x", func() (bool, string) {
			_, err := alice.cs.CoreV1().Pods("x").List(ctx, metav1.ListOptions{})
			return err == nil, errString(err)
		})
		r := kubectlAs(t, alice, "auth", "can-i", "list", "pods", "-n", "x")
		if strings.TrimSpace(r.Stdout) != "yes" {
			t.Errorf("alice can-i list pods -n x = %d %q %q", r.Code, r.Stdout, r.Stderr)
		}
		r = kubectlAs(t, alice, "auth", "can-i", "delete", "pods", "-n", "x")
		if strings.TrimSpace(r.Stdout) != "no" {
			t.Errorf("alice can-i delete pods -n x = %q", r.Stdout)
		}
		if _, err := alice.cs.CoreV1().Pods("default").List(ctx, metav1.ListOptions{}); !apierrors.IsForbidden(err) {
			t.Errorf("alice listing pods in default: %v, want 403", err)
		}
		list := kubectlAs(t, alice, "auth", "can-i", "--list", "-n", "x")
		if list.Code != 0 || !strings.Contains(list.Stdout, "pods") || !strings.Contains(list.Stdout, "selfsubjectaccessreviews.authorization.k8s.io") {
			t.Errorf("can-i --list:\n%s\n%s", list.Stdout, list.Stderr)
		}
	})

	t.Run("aggregated ClusterRoles pick up new rules", func(t *testing.T) {
		mustCreate(t, "clusterrole", func() (*rbacv1.ClusterRole, error) {
			return admin.RbacV1().ClusterRoles().Create(ctx, &rbacv1.ClusterRole{
				ObjectMeta: metav1.ObjectMeta{Name: "widgets-view",
					Labels: map[string]string{"rbac.authorization.k8s.io/aggregate-to-view": "true"}},
				Rules: []rbacv1.PolicyRule{{Verbs: []string{"get", "list"}, APIGroups: []string{"example.com"}, Resources: []string{"widgets"}}},
			}, metav1.CreateOptions{})
		})
		for _, role := range []string{"view", "edit", "admin"} {
			controlplanetest.Eventually(t, 10*time.Second, role+" aggregates widgets", func() (bool, string) {
				cr, err := admin.RbacV1().ClusterRoles().Get(ctx, role, metav1.GetOptions{})
				if err != nil {
					return false, err.Error()
				}
				for _, r := range cr.Rules {
					if slices.Contains(r.Resources, "widgets") {
						return true, ""
					}
				}
				return false, "rules lack widgets"
			})
		}
		ssar, err := alice.cs.AuthorizationV1().SelfSubjectAccessReviews().Create(ctx, &authorizationv1.SelfSubjectAccessReview{
			Spec: authorizationv1.SelfSubjectAccessReviewSpec{ResourceAttributes: &authorizationv1.ResourceAttributes{
				Namespace: "x", Verb: "list", Group: "example.com", Resource: "widgets"}},
		}, metav1.CreateOptions{})
		if err != nil || !ssar.Status.Allowed {
			t.Errorf("alice may list widgets through view: %+v, %v", ssar, err)
		}
	})

	t.Run("escalation is refused", func(t *testing.T) {
		mustCreate(t, "role", func() (*rbacv1.Role, error) {
			return admin.RbacV1().Roles("x").Create(ctx, &rbacv1.Role{
				ObjectMeta: metav1.ObjectMeta{Name: "role-author"},
				Rules: []rbacv1.PolicyRule{{Verbs: []string{"create", "get", "update"}, APIGroups: []string{rbacv1.GroupName},
					Resources: []string{"roles", "rolebindings"}}},
			}, metav1.CreateOptions{})
		})
		mustCreate(t, "rolebinding", func() (*rbacv1.RoleBinding, error) {
			return admin.RbacV1().RoleBindings("x").Create(ctx, &rbacv1.RoleBinding{
				ObjectMeta: metav1.ObjectMeta{Name: "alice-role-author"},
				RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: "role-author"},
				Subjects:   []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: "alice"}},
			}, metav1.CreateOptions{})
		})
		escalating := &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: "pod-deleter"},
			Rules: []rbacv1.PolicyRule{{Verbs: []string{"delete"}, APIGroups: []string{""}, Resources: []string{"pods"}}}}
		var err error
		controlplanetest.Eventually(t, 10*time.Second, "alice's role-author binding applies", func() (bool, string) {
			_, err = alice.cs.RbacV1().Roles("x").Create(ctx, escalating, metav1.CreateOptions{})
			return !strings.Contains(errString(err), "cannot create resource"), errString(err)
		})
		if !apierrors.IsForbidden(err) || !strings.Contains(err.Error(), `roles.rbac.authorization.k8s.io "pod-deleter" is forbidden: user "alice"`) ||
			!strings.Contains(err.Error(), "is attempting to grant RBAC permissions not currently held") ||
			!strings.Contains(err.Error(), "{APIGroups:[\"\"], Resources:[\"pods\"], Verbs:[\"delete\"]}") {
			t.Fatalf("escalating role: %v", err)
		}
		// Granting what alice holds is fine.
		mustCreate(t, "role as alice", func() (*rbacv1.Role, error) {
			return alice.cs.RbacV1().Roles("x").Create(ctx, &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: "pod-reader"},
				Rules: []rbacv1.PolicyRule{{Verbs: []string{"get", "list"}, APIGroups: []string{""}, Resources: []string{"pods"}}}},
				metav1.CreateOptions{})
		})
		// Binding cluster-admin is escalation too.
		_, err = alice.cs.RbacV1().RoleBindings("x").Create(ctx, &rbacv1.RoleBinding{
			ObjectMeta: metav1.ObjectMeta{Name: "alice-admin"},
			RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "cluster-admin"},
			Subjects:   []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: "alice"}},
		}, metav1.CreateOptions{})
		if !apierrors.IsForbidden(err) {
			t.Errorf("binding cluster-admin as alice: %v, want 403", err)
		}
	})

	t.Run("impersonation needs the impersonate verb", func(t *testing.T) {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, s.cp.URL()+"/api/v1/namespaces/x/pods", nil)
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Impersonate-User", "bob")
		hc, err := rest.HTTPClientFor(alice.config)
		if err != nil {
			t.Fatal(err)
		}
		resp, err := hc.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusForbidden || !strings.Contains(string(body), `users \"bob\" is forbidden: User \"alice\" cannot impersonate resource \"users\" in API group \"\" at the cluster scope`) {
			t.Errorf("impersonating as alice = %d %s", resp.StatusCode, body)
		}
		// The admin may, and then acts as the impersonated user.
		out := s.mustKubectl(t, "auth", "whoami", "--as", "carol", "--as-group", "devs", "-o", "jsonpath={.status.userInfo.username} {.status.userInfo.groups}")
		if !strings.HasPrefix(out, "carol ") || !strings.Contains(out, "devs") {
			t.Errorf("whoami --as carol = %q", out)
		}
	})

	t.Run("service account tokens", func(t *testing.T) {
		_, err := admin.CoreV1().ServiceAccounts("x").Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "default"}}, metav1.CreateOptions{})
		if err != nil && !apierrors.IsAlreadyExists(err) {
			t.Fatal(err)
		}
		mustCreate(t, "rolebinding", func() (*rbacv1.RoleBinding, error) {
			return admin.RbacV1().RoleBindings("x").Create(ctx, &rbacv1.RoleBinding{
				ObjectMeta: metav1.ObjectMeta{Name: "default-view"},
				RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "view"},
				Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Namespace: "x", Name: "default"}},
			}, metav1.CreateOptions{})
		})
		token := strings.TrimSpace(s.mustKubectl(t, "create", "token", "default", "-n", "x"))
		sa := tokenClient(t, s, token)
		controlplanetest.Eventually(t, 10*time.Second, "the service account may list pods", func() (bool, string) {
			_, err := sa.CoreV1().Pods("x").List(ctx, metav1.ListOptions{})
			return err == nil, errString(err)
		})
		_, err = sa.CoreV1().ConfigMaps("x").Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "c"}}, metav1.CreateOptions{})
		if !apierrors.IsForbidden(err) || !strings.Contains(err.Error(), `User "system:serviceaccount:x:default" cannot create resource "configmaps"`) {
			t.Errorf("service account creating a configmap: %v", err)
		}
		review, err := sa.AuthenticationV1().SelfSubjectReviews().Create(ctx, &authenticationv1.SelfSubjectReview{}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		ui := review.Status.UserInfo
		if ui.Username != "system:serviceaccount:x:default" || !slices.Contains(ui.Groups, "system:serviceaccounts:x") || ui.UID == "" {
			t.Errorf("service account user = %+v", ui)
		}
		// The issuer's discovery documents are for service accounts.
		discovery, err := sa.Discovery().RESTClient().Get().AbsPath(serviceaccount.OpenIDConfigPath).DoRaw(ctx)
		if err != nil || !strings.Contains(string(discovery), `"issuer":"https://kubernetes.default.svc"`) {
			t.Errorf("openid configuration = %s, %v", discovery, err)
		}

		// TokenReview agrees.
		tr, err := admin.AuthenticationV1().TokenReviews().Create(ctx, &authenticationv1.TokenReview{Spec: authenticationv1.TokenReviewSpec{Token: token}}, metav1.CreateOptions{})
		if err != nil || !tr.Status.Authenticated || tr.Status.User.Username != "system:serviceaccount:x:default" {
			t.Errorf("token review = %+v, %v", tr, err)
		}

		// A token signed by another key is refused, as is garbage.
		key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		if err != nil {
			t.Fatal(err)
		}
		foreign, err := serviceaccount.NewIssuer(key, "")
		if err != nil {
			t.Fatal(err)
		}
		forged, _, err := foreign.Issue(serviceaccount.ServiceAccountRef{Namespace: "x", Name: "default", UID: ui.UID}, nil, time.Hour, nil)
		if err != nil {
			t.Fatal(err)
		}
		for name, tok := range map[string]string{"forged": forged, "garbage": "not-a-token", "truncated": token[:len(token)-4]} {
			if _, err := tokenClient(t, s, tok).CoreV1().Pods("x").List(ctx, metav1.ListOptions{}); !apierrors.IsUnauthorized(err) {
				t.Errorf("%s token: %v, want 401", name, err)
			}
		}
		// Too short a lifetime is invalid.
		short := int64(60)
		_, err = admin.CoreV1().ServiceAccounts("x").CreateToken(ctx, "default", &authenticationv1.TokenRequest{
			Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: &short}}, metav1.CreateOptions{})
		if !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), "may not specify a duration less than 10 minutes") {
			t.Errorf("10s token: %v", err)
		}
		// A missing service account is NotFound.
		_, err = admin.CoreV1().ServiceAccounts("x").CreateToken(ctx, "nobody", &authenticationv1.TokenRequest{}, metav1.CreateOptions{})
		if !apierrors.IsNotFound(err) {
			t.Errorf("token for a missing service account: %v", err)
		}
		// A token bound to a Secret dies with it.
		mustCreate(t, "secret", func() (*corev1.Secret, error) {
			return admin.CoreV1().Secrets("x").Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "anchor"}}, metav1.CreateOptions{})
		})
		boundToken := strings.TrimSpace(s.mustKubectl(t, "create", "token", "default", "-n", "x",
			"--bound-object-kind", "Secret", "--bound-object-name", "anchor", "--duration", "20m"))
		bound := tokenClient(t, s, boundToken)
		if _, err := bound.CoreV1().Pods("x").List(ctx, metav1.ListOptions{}); err != nil {
			t.Errorf("secret-bound token: %v", err)
		}
		if err := admin.CoreV1().Secrets("x").Delete(ctx, "anchor", metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		controlplanetest.Eventually(t, 10*time.Second, "the token bound to a deleted secret is refused", func() (bool, string) {
			_, err := bound.CoreV1().Pods("x").List(ctx, metav1.ListOptions{})
			return apierrors.IsUnauthorized(err), errString(err)
		})
		_, err = admin.CoreV1().ServiceAccounts("x").CreateToken(ctx, "default", &authenticationv1.TokenRequest{
			Spec: authenticationv1.TokenRequestSpec{BoundObjectRef: &authenticationv1.BoundObjectReference{Kind: "Pod", APIVersion: "v1", Name: "gone"}}},
			metav1.CreateOptions{})
		if !apierrors.IsNotFound(err) {
			t.Errorf("token bound to a missing pod: %v", err)
		}
		// A token bound to a scheduled pod names its node too (kube's pod
		// node info): the token's user has node-name and node-uid extras.
		node := mustCreate(t, "node", func() (*corev1.Node, error) {
			return admin.CoreV1().Nodes().Create(ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "token-node"}}, metav1.CreateOptions{})
		})
		pod := mustCreate(t, "pod", func() (*corev1.Pod, error) {
			return admin.CoreV1().Pods("x").Create(ctx, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "on-node"},
				Spec: corev1.PodSpec{NodeName: "token-node", Containers: []corev1.Container{{Name: "c", Image: "busybox"}}}}, metav1.CreateOptions{})
		})
		for kind, name := range map[string]string{"Pod": pod.Name, "Node": node.Name} {
			tr, err := admin.CoreV1().ServiceAccounts("x").CreateToken(ctx, "default", &authenticationv1.TokenRequest{
				Spec: authenticationv1.TokenRequestSpec{BoundObjectRef: &authenticationv1.BoundObjectReference{Kind: kind, APIVersion: "v1", Name: name}}},
				metav1.CreateOptions{})
			if err != nil {
				t.Fatalf("token bound to a %s: %v", kind, err)
			}
			// The authenticator finds the bound objects in the watch caches,
			// which may not show the node and pod just created yet.
			var review *authenticationv1.TokenReview
			controlplanetest.Eventually(t, 10*time.Second, "the token bound to a "+kind+" authenticates", func() (bool, string) {
				review, err = admin.AuthenticationV1().TokenReviews().Create(ctx, &authenticationv1.TokenReview{
					Spec: authenticationv1.TokenReviewSpec{Token: tr.Status.Token}}, metav1.CreateOptions{})
				return err == nil && review.Status.Authenticated, fmt.Sprintf("%+v, %v", review, err)
			})
			extra := review.Status.User.Extra
			if fmt.Sprint(extra["authentication.kubernetes.io/node-name"]) != "[token-node]" ||
				fmt.Sprint(extra["authentication.kubernetes.io/node-uid"]) != "["+string(node.UID)+"]" {
				t.Errorf("token bound to a %s: extra %v, want the node's name and uid", kind, extra)
			}
			if wantPod := kind == "Pod"; wantPod != (len(extra["authentication.kubernetes.io/pod-name"]) == 1) {
				t.Errorf("token bound to a %s: extra %v", kind, extra)
			}
		}
		tr2, err := admin.CoreV1().ServiceAccounts("x").CreateToken(ctx, "default", &authenticationv1.TokenRequest{
			Spec: authenticationv1.TokenRequestSpec{Audiences: []string{"vault"}}}, metav1.CreateOptions{})
		if err != nil || tr2.Status.Token == "" || *tr2.Spec.ExpirationSeconds != 3600 ||
			time.Until(tr2.Status.ExpirationTimestamp.Time) < 59*time.Minute {
			t.Errorf("token request for vault = %+v, %v", tr2, err)
		} else if _, err := tokenClient(t, s, tr2.Status.Token).CoreV1().Pods("x").List(ctx, metav1.ListOptions{}); !apierrors.IsUnauthorized(err) {
			t.Errorf("a token for another audience was accepted: %v", err)
		}
		// Deleting the service account invalidates its tokens.
		if err := admin.CoreV1().ServiceAccounts("x").Delete(ctx, "default", metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		controlplanetest.Eventually(t, 10*time.Second, "the deleted service account's token is refused", func() (bool, string) {
			_, err := sa.CoreV1().Pods("x").List(ctx, metav1.ListOptions{})
			return apierrors.IsUnauthorized(err), errString(err)
		})
	})

	t.Run("access reviews", func(t *testing.T) {
		sar, err := admin.AuthorizationV1().SubjectAccessReviews().Create(ctx, &authorizationv1.SubjectAccessReview{
			Spec: authorizationv1.SubjectAccessReviewSpec{User: "alice",
				ResourceAttributes: &authorizationv1.ResourceAttributes{Namespace: "x", Verb: "get", Resource: "pods"}},
		}, metav1.CreateOptions{})
		if err != nil || !sar.Status.Allowed {
			t.Errorf("SAR alice get pods in x = %+v, %v", sar, err)
		}
		lsar, err := admin.AuthorizationV1().LocalSubjectAccessReviews("default").Create(ctx, &authorizationv1.LocalSubjectAccessReview{
			ObjectMeta: metav1.ObjectMeta{Namespace: "default"},
			Spec: authorizationv1.SubjectAccessReviewSpec{User: "alice",
				ResourceAttributes: &authorizationv1.ResourceAttributes{Namespace: "default", Verb: "get", Resource: "pods"}},
		}, metav1.CreateOptions{})
		if err != nil || lsar.Status.Allowed {
			t.Errorf("LSAR alice get pods in default = %+v, %v", lsar, err)
		}
		// alice may not review others.
		_, err = alice.cs.AuthorizationV1().SubjectAccessReviews().Create(ctx, &authorizationv1.SubjectAccessReview{
			Spec: authorizationv1.SubjectAccessReviewSpec{User: "bob",
				ResourceAttributes: &authorizationv1.ResourceAttributes{Verb: "get", Resource: "pods"}},
		}, metav1.CreateOptions{})
		if !apierrors.IsForbidden(err) {
			t.Errorf("alice creating a SAR: %v, want 403", err)
		}
		// kubectl create -f validates against the OpenAPI schema (and, for
		// kinds without a patch operation, lists CRDs: hence the admin).
		ssar := "apiVersion: authorization.k8s.io/v1\nkind: SelfSubjectAccessReview\nspec:\n  resourceAttributes:\n    verb: list\n    resource: pods\n    namespace: x\n"
		r := s.kubectl(t, nil, ssar, "create", "-f", "-", "-o", "jsonpath={.status.allowed}")
		if r.Code != 0 || r.Stdout != "true" {
			t.Errorf("kubectl create -f SelfSubjectAccessReview = %d %q %q", r.Code, r.Stdout, r.Stderr)
		}
		_, err = admin.AuthorizationV1().SelfSubjectAccessReviews().Create(ctx, &authorizationv1.SelfSubjectAccessReview{}, metav1.CreateOptions{})
		if !apierrors.IsInvalid(err) {
			t.Errorf("empty SSAR: %v, want invalid", err)
		}
	})

	t.Run("anonymous requests", func(t *testing.T) {
		anon := s.client(t, false)
		for path, want := range map[string]int{
			"/version": 200, "/healthz": 200, "/readyz": 200, "/livez": 200,
			"/api/v1/namespaces/x/pods":     403,
			serviceaccount.OpenIDConfigPath: 403,
		} {
			resp, err := anon.Get(s.cp.URL() + path)
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != want {
				t.Errorf("anonymous GET %s = %d %s, want %d", path, resp.StatusCode, body, want)
			}
		}
	})
}

func errString(err error) string {
	if err == nil {
		return "<nil>"
	}
	return err.Error()
}

func TestBootstrapPolicyReconciledOnRestart(t *testing.T) {
	dir := t.TempDir()
	s := startControlPlane(t, dir)
	ctx := t.Context()
	admin := s.clientset(t, false)
	// A deleted bootstrap binding comes back; an opted-out role is kept.
	if err := admin.RbacV1().ClusterRoleBindings().Delete(ctx, "system:basic-user", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"system:discovery", "system:public-info-viewer"} {
		role, err := admin.RbacV1().ClusterRoles().Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		role.Rules = role.Rules[:0]
		if name == "system:discovery" {
			role.Annotations[rbacv1.AutoUpdateAnnotationKey] = "false"
		}
		if _, err := admin.RbacV1().ClusterRoles().Update(ctx, role, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	s.stop()

	s = startControlPlane(t, dir)
	admin = s.clientset(t, false)
	if _, err := admin.RbacV1().ClusterRoleBindings().Get(ctx, "system:basic-user", metav1.GetOptions{}); err != nil {
		t.Errorf("deleted bootstrap binding not recreated: %v", err)
	}
	discovery, err := admin.RbacV1().ClusterRoles().Get(ctx, "system:discovery", metav1.GetOptions{})
	if err != nil || len(discovery.Rules) != 0 {
		t.Errorf("autoupdate=false role was changed: %+v, %v", discovery, err)
	}
	public, err := admin.RbacV1().ClusterRoles().Get(ctx, "system:public-info-viewer", metav1.GetOptions{})
	if err != nil || len(public.Rules) == 0 {
		t.Errorf("emptied bootstrap role not restored: %+v, %v", public, err)
	}
}

func TestAlwaysAllowMode(t *testing.T) {
	s := startControlPlaneWith(t, controlplane.Options{AuthorizationMode: controlplane.AuthorizationModeAlwaysAllow})
	cp := s.cp

	alice := identityFor(t, s, "alice", nil)
	if _, err := alice.cs.CoreV1().Pods("default").List(t.Context(), metav1.ListOptions{}); err != nil {
		t.Errorf("alice listing pods under AlwaysAllow: %v", err)
	}
	ssar, err := alice.cs.AuthorizationV1().SelfSubjectAccessReviews().Create(t.Context(), &authorizationv1.SelfSubjectAccessReview{
		Spec: authorizationv1.SelfSubjectAccessReviewSpec{ResourceAttributes: &authorizationv1.ResourceAttributes{Verb: "delete", Resource: "nodes"}},
	}, metav1.CreateOptions{})
	if err != nil || !ssar.Status.Allowed {
		t.Errorf("SSAR under AlwaysAllow = %+v, %v", ssar, err)
	}
	// Without an authorizer to decide, anonymous requests stay out.
	resp, err := s.client(t, false).Get(cp.URL() + "/api")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("anonymous GET /api under AlwaysAllow = %d, want 401", resp.StatusCode)
	}
}

// A Secret of type kubernetes.io/service-account-token is filled as kube's
// token controller fills it (a long-lived token, the CA, the namespace,
// the account's uid), and its token signs in as the account while that
// Secret holds it and the account lives; the Secret goes with its
// account.
func TestLegacyServiceAccountTokenSecrets(t *testing.T) {
	s := startControlPlane(t, "")
	admin := s.clientset(t, false)
	ctx := context.Background()
	if _, err := admin.CoreV1().ServiceAccounts("default").Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "robot"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	secrets := admin.CoreV1().Secrets("default")
	tokenSecret := func(name, account string) {
		t.Helper()
		if _, err := secrets.Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: name, Annotations: map[string]string{corev1.ServiceAccountNameKey: account}},
			Type: corev1.SecretTypeServiceAccountToken}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	tokenSecret("robot-token", "robot")
	var secret *corev1.Secret
	controlplanetest.Eventually(t, 10*time.Second, "the token secret filled", func() (bool, string) {
		var err error
		secret, err = secrets.Get(ctx, "robot-token", metav1.GetOptions{})
		return err == nil && len(secret.Data[corev1.ServiceAccountTokenKey]) > 0, errString(err)
	})
	robot, err := admin.CoreV1().ServiceAccounts("default").Get(ctx, "robot", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if string(secret.Data[corev1.ServiceAccountRootCAKey]) != string(s.cp.Certs.CA.CertPEM) || string(secret.Data[corev1.ServiceAccountNamespaceKey]) != "default" ||
		secret.Annotations[corev1.ServiceAccountUIDKey] != string(robot.UID) {
		t.Errorf("filled secret: ca.crt %d bytes, namespace %q, uid annotation %q (account %s)", len(secret.Data[corev1.ServiceAccountRootCAKey]),
			secret.Data[corev1.ServiceAccountNamespaceKey], secret.Annotations[corev1.ServiceAccountUIDKey], robot.UID)
	}
	token := string(secret.Data[corev1.ServiceAccountTokenKey])
	// The authenticator reads the Secret from its cache, which may not
	// hold the filled Secret yet (as kube's: "has been invalidated").
	var review *authenticationv1.SelfSubjectReview
	controlplanetest.Eventually(t, 10*time.Second, "the legacy token signs in", func() (bool, string) {
		var err error
		review, err = tokenClient(t, s, token).AuthenticationV1().SelfSubjectReviews().Create(ctx, &authenticationv1.SelfSubjectReview{}, metav1.CreateOptions{})
		return err == nil, errString(err)
	})
	if ui := review.Status.UserInfo; ui.Username != "system:serviceaccount:default:robot" || ui.UID != string(robot.UID) || !slices.Contains(ui.Groups, "system:serviceaccounts:default") {
		t.Errorf("signed in as %+v", ui)
	}
	tr, err := admin.AuthenticationV1().TokenReviews().Create(ctx, &authenticationv1.TokenReview{Spec: authenticationv1.TokenReviewSpec{Token: token}}, metav1.CreateOptions{})
	if err != nil || !tr.Status.Authenticated || tr.Status.User.Username != "system:serviceaccount:default:robot" {
		t.Errorf("TokenReview of the legacy token: %v %+v", err, tr)
	}

	// A token stops working when its Secret no longer holds it.
	secret.Data[corev1.ServiceAccountTokenKey] = []byte("replaced")
	if _, err := secrets.Update(ctx, secret, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	controlplanetest.Eventually(t, 10*time.Second, "the replaced token refused", func() (bool, string) {
		_, err := tokenClient(t, s, token).AuthenticationV1().SelfSubjectReviews().Create(ctx, &authenticationv1.SelfSubjectReview{}, metav1.CreateOptions{})
		return apierrors.IsUnauthorized(err), errString(err)
	})

	// A Secret naming no account is deleted; so are an account's Secrets
	// when it goes.
	tokenSecret("nobodys-token", "nobody")
	tokenSecret("robot-token-2", "robot")
	controlplanetest.Eventually(t, 10*time.Second, "the second robot secret filled", func() (bool, string) {
		s, err := secrets.Get(ctx, "robot-token-2", metav1.GetOptions{})
		return err == nil && len(s.Data[corev1.ServiceAccountTokenKey]) > 0, errString(err)
	})
	if err := admin.CoreV1().ServiceAccounts("default").Delete(ctx, "robot", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"nobodys-token", "robot-token", "robot-token-2"} {
		controlplanetest.Eventually(t, 10*time.Second, name+" deleted", func() (bool, string) {
			_, err := secrets.Get(ctx, name, metav1.GetOptions{})
			return apierrors.IsNotFound(err), errString(err)
		})
	}
}

package controlplane_test

import (
	"crypto/x509"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/version"
	"k8s.io/client-go/kubernetes"
)

func get(t *testing.T, c *http.Client, url string) (int, string, http.Header) {
	t.Helper()
	resp, err := c.Get(url)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, string(body), resp.Header
}

func TestFoundation(t *testing.T) {
	s := startControlPlane(t, "")
	base := s.cp.URL()
	anon := s.client(t, false)
	admin := s.client(t, true)

	t.Run("verbose readyz lists etcd and every post-start hook", func(t *testing.T) {
		code, body, _ := get(t, anon, base+"/readyz?verbose")
		if code != http.StatusOK {
			t.Fatalf("readyz = %d:\n%s", code, body)
		}
		want := []string{"[+]ping ok", "[+]log ok", "[+]etcd ok", "[+]etcd-readiness ok", "[+]shutdown ok", "readyz check passed"}
		hooks := s.cp.Aggregator.HookStatuses()
		if len(hooks) == 0 {
			t.Fatal("no post-start hooks registered")
		}
		for _, h := range hooks {
			want = append(want, "[+]poststarthook/"+h.Name+" ok")
		}
		for _, w := range want {
			if !strings.Contains(body, w) {
				t.Errorf("readyz?verbose lacks %q:\n%s", w, body)
			}
		}
		if code, body, _ := get(t, anon, base+"/readyz"); code != 200 || body != "ok" {
			t.Errorf("readyz = %d %q, want 200 ok", code, body)
		}
		if code, body, _ := get(t, anon, base+"/readyz/etcd"); code != 200 || body != "ok" {
			t.Errorf("readyz/etcd = %d %q", code, body)
		}
		code, body, _ = get(t, anon, base+"/livez?verbose&exclude=etcd")
		if code != 200 || strings.Contains(body, "[+]etcd ok") || !strings.Contains(body, "[+]ping ok") {
			t.Errorf("livez?exclude=etcd = %d:\n%s", code, body)
		}
		if code, _, _ := get(t, anon, base+"/readyz/no-such-check"); code != http.StatusNotFound {
			t.Errorf("readyz/no-such-check = %d, want 404", code)
		}
	})

	t.Run("version is a semver of the API level", func(t *testing.T) {
		code, body, _ := get(t, anon, base+"/version")
		var v version.Info
		if code != 200 || json.Unmarshal([]byte(body), &v) != nil {
			t.Fatalf("version = %d %s", code, body)
		}
		if v.Major != "1" || !strings.HasPrefix(v.GitVersion, "v1.") || !strings.Contains(v.GitVersion, "-devplane") {
			t.Errorf("unexpected version %+v", v)
		}
	})

	t.Run("anonymous API request is 403 with a Status", func(t *testing.T) {
		// As kube-apiserver with anonymous auth: system:anonymous reaches
		// authorization, and RBAC grants it only the public info paths.
		code, body, hdr := get(t, anon, base+"/api")
		var st metav1.Status
		if code != http.StatusForbidden || json.Unmarshal([]byte(body), &st) != nil {
			t.Fatalf("GET /api anonymously = %d %s", code, body)
		}
		if st.Kind != "Status" || st.Reason != metav1.StatusReasonForbidden || st.Code != 403 ||
			st.Message != `forbidden: User "system:anonymous" cannot get path "/api"` {
			t.Errorf("status = %+v", st)
		}
		if !strings.HasPrefix(hdr.Get("Content-Type"), "application/json") {
			t.Errorf("content type %q", hdr.Get("Content-Type"))
		}
	})

	t.Run("admin certificate from the kubeconfig is accepted", func(t *testing.T) {
		code, body, _ := get(t, admin, base+"/api/v1/namespaces/no-such-ns-x")
		if code == http.StatusUnauthorized {
			t.Fatalf("admin request rejected: %s", body)
		}
		cs, err := kubernetes.NewForConfig(s.cp.RESTConfig())
		if err != nil {
			t.Fatal(err)
		}
		v, err := cs.Discovery().ServerVersion()
		if err != nil || v.Major != "1" {
			t.Fatalf("client-go ServerVersion = %+v, %v", v, err)
		}
	})

	t.Run("HTTP/2 is negotiated", func(t *testing.T) {
		resp, err := anon.Get(base + "/healthz")
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.ProtoMajor != 2 {
			t.Errorf("protocol %s, want HTTP/2", resp.Proto)
		}
	})

	t.Run("serving certificate covers every SAN", func(t *testing.T) {
		pool := x509.NewCertPool()
		pool.AppendCertsFromPEM(s.cp.Certs.CA.CertPEM)
		cert := s.cp.Certs.Serving.Cert
		for _, name := range []string{"kubernetes", "kubernetes.default", "kubernetes.default.svc",
			"kubernetes.default.svc.cluster.local", "localhost", "127.0.0.1", "10.0.0.1"} {
			if _, err := cert.Verify(x509.VerifyOptions{DNSName: name, Roots: pool}); err != nil {
				t.Errorf("serving cert does not verify for %s: %v", name, err)
			}
		}
		if ip := net.ParseIP("10.0.0.2"); cert.VerifyHostname(ip.String()) == nil {
			t.Errorf("serving cert unexpectedly valid for %s", ip)
		}
	})
}

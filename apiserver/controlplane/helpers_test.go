package controlplane_test

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/devplane/devplane/apiserver/controlplane"
	"github.com/devplane/devplane/apiserver/controlplane/controlplanetest"
)

// started is a devplane running in this test process.
type started struct {
	cp *controlplane.ControlPlane
	// stop stops it and checks it stopped; it also runs at the test's end.
	stop func()
}

// startControlPlane starts devplane on a free 127.0.0.1 port in dataDir (a
// temp dir when empty) and waits until it is ready.
func startControlPlane(t testing.TB, dataDir string) *started {
	t.Helper()
	return startControlPlaneWith(t, controlplane.Options{DataDir: dataDir})
}

// startControlPlaneAt is startControlPlane on a given port (0: any), so a
// restart on the same data dir can keep the URL clients already use.
func startControlPlaneAt(t testing.TB, dataDir string, port int) *started {
	t.Helper()
	return startControlPlaneWith(t, controlplane.Options{DataDir: dataDir, Port: port})
}

// startControlPlaneWith starts devplane with opts over controlplanetest's
// defaults.
func startControlPlaneWith(t testing.TB, opts controlplane.Options) *started {
	t.Helper()
	cp, stop := controlplanetest.StartDevplane(t, opts)
	return &started{cp: cp, stop: stop}
}

// client returns an HTTPS client trusting devplane's CA, presenting the
// admin certificate when admin is true.
func (s *started) client(t testing.TB, admin bool) *http.Client {
	t.Helper()
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(s.cp.Certs.CA.CertPEM)
	cfg := &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}
	if admin {
		cert, err := tls.X509KeyPair(s.cp.Certs.Admin.CertPEM, s.cp.Certs.Admin.KeyPEM)
		if err != nil {
			t.Fatal(err)
		}
		cfg.Certificates = []tls.Certificate{cert}
	}
	tr := &http.Transport{TLSClientConfig: cfg, ForceAttemptHTTP2: true}
	t.Cleanup(tr.CloseIdleConnections)
	return &http.Client{Transport: tr, Timeout: 30 * time.Second}
}

// restConfig returns the admin client-go config speaking JSON, or protobuf
// when protobuf is true (kube's content type, JSON still accepted).
func (s *started) restConfig(protobuf bool) *rest.Config {
	cfg := s.cp.RESTConfig()
	// client-go's clientset would otherwise default to protobuf.
	cfg.ContentType = "application/json"
	if protobuf {
		cfg.ContentType = "application/vnd.kubernetes.protobuf"
		cfg.AcceptContentTypes = "application/vnd.kubernetes.protobuf,application/json"
	}
	return cfg
}

// clientset is an admin typed clientset (JSON, or protobuf when asked).
func (s *started) clientset(t testing.TB, protobuf bool) *kubernetes.Clientset {
	t.Helper()
	cs, err := kubernetes.NewForConfig(s.restConfig(protobuf))
	if err != nil {
		t.Fatal(err)
	}
	return cs
}

// kubeconfigFile writes the admin kubeconfig into a temp dir of t and
// returns its path.
func (s *started) kubeconfigFile(t testing.TB) string {
	t.Helper()
	return controlplanetest.WriteKubeconfig(t, s.cp)
}

// kubectl runs kubectl against the control plane, with extra environment
// variables env ("K=V").
func (s *started) kubectl(t testing.TB, env []string, stdin string, args ...string) controlplanetest.KubectlResult {
	t.Helper()
	return controlplanetest.KubectlRun{Kubeconfig: s.kubeconfigFile(t), Args: args, Stdin: stdin, Env: env}.Run(t)
}

// mustKubectl runs kubectl and fails the test unless it exits 0.
func (s *started) mustKubectl(t testing.TB, args ...string) string {
	t.Helper()
	r := s.kubectl(t, nil, "", args...)
	if r.Code != 0 {
		t.Fatalf("kubectl %s: exit %d\nstdout:\n%s\nstderr:\n%s", strings.Join(args, " "), r.Code, r.Stdout, r.Stderr)
	}
	return r.Stdout
}

// checkListItemsWithoutKind GETs path as JSON (twice: the second list may
// be written from the watch cache's item JSON) and fails if an item
// carries apiVersion or kind: kube writes a built-in kind's list items
// without them.
func checkListItemsWithoutKind(t *testing.T, s *started, path string, wantItems int) {
	t.Helper()
	cs := s.clientset(t, false)
	for range 2 {
		raw, err := cs.CoreV1().RESTClient().Get().AbsPath(path).SetHeader("Accept", "application/json").DoRaw(context.Background())
		if err != nil {
			t.Fatalf("GET %s: %v", path, err)
		}
		var list struct{ Items []map[string]any }
		if err := json.Unmarshal(raw, &list); err != nil || len(list.Items) != wantItems {
			t.Fatalf("GET %s: %v, %d items, want %d", path, err, len(list.Items), wantItems)
		}
		for _, item := range list.Items {
			if item["kind"] != nil || item["apiVersion"] != nil {
				t.Fatalf("GET %s: an item with kind %v, apiVersion %v", path, item["kind"], item["apiVersion"])
			}
		}
	}
}

package testenv_test

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	apiextensionsclient "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/devplane/devplane/apiserver/testenv"
	"github.com/devplane/devplane/certs"
)

func clientFor(t testing.TB, cfg *rest.Config) *kubernetes.Clientset {
	t.Helper()
	c, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestStartServesAndStopCleansUp(t *testing.T) {
	env, err := testenv.Start(t.Context(), testenv.Options{})
	if err != nil {
		t.Fatal(err)
	}
	stopped := false
	t.Cleanup(func() {
		if !stopped {
			_ = env.Stop()
		}
	})

	if !strings.HasPrefix(env.URL(), "https://127.0.0.1:") {
		t.Errorf("URL = %q, want https://127.0.0.1:<port>", env.URL())
	}
	if block, _ := pem.Decode(env.CAData()); block == nil || block.Type != "CERTIFICATE" {
		t.Errorf("CAData is not a PEM certificate")
	}
	nss, err := clientFor(t, env.Config()).CoreV1().Namespaces().List(t.Context(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, ns := range nss.Items {
		names = append(names, ns.Name)
	}
	for _, want := range []string{"default", "kube-system", "kube-public", "kube-node-lease"} {
		if !strings.Contains(strings.Join(names, ","), want) {
			t.Errorf("namespace %s missing: %v", want, names)
		}
	}

	// The kubeconfig file works on its own, as kubectl would use it.
	fromFile, err := clientcmd.BuildConfigFromFlags("", env.KubeconfigPath())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := clientFor(t, fromFile).CoreV1().Services("default").Get(t.Context(), "kubernetes", metav1.GetOptions{}); err != nil {
		t.Fatalf("kubernetes Service through the kubeconfig: %v", err)
	}

	addr := strings.TrimPrefix(env.URL(), "https://")
	dir := env.DataDir()
	stopped = true
	if err := env.Stop(); err != nil {
		t.Fatalf("Stop: %v", err)
	}
	if err := env.Stop(); err != nil {
		t.Errorf("second Stop: %v", err)
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("data dir %s still there after Stop: %v", dir, err)
	}
	if conn, err := net.DialTimeout("tcp", addr, time.Second); err == nil {
		conn.Close()
		t.Errorf("%s still accepts connections after Stop", addr)
	}
}

func TestConfigForAuthenticatesAsUser(t *testing.T) {
	env := testenv.StartT(t, testenv.Options{})
	cfg := env.ConfigFor("alice", "developers", "qa")

	// The certificate names the user and groups...
	block, _ := pem.Decode(cfg.CertData)
	if block == nil {
		t.Fatal("ConfigFor has no PEM client certificate")
	}
	cert, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	groups := slices.Sorted(slices.Values(cert.Subject.Organization))
	if cert.Subject.CommonName != "alice" || strings.Join(groups, ",") != "developers,qa" {
		t.Errorf("subject = %v, want CN=alice O=developers,qa", cert.Subject)
	}
	// ...and is signed by the CA the server trusts for clients.
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(env.CAData())
	if _, err := cert.Verify(x509.VerifyOptions{Roots: pool, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}); err != nil {
		t.Errorf("client certificate does not verify against CAData: %v", err)
	}

	// Authenticated as alice: allowed, or (with RBAC) forbidden by name.
	alice := clientFor(t, cfg)
	_, err = alice.CoreV1().ConfigMaps("default").List(t.Context(), metav1.ListOptions{})
	if err != nil && !(apierrors.IsForbidden(err) && strings.Contains(err.Error(), `"alice"`)) {
		t.Fatalf("alice's request: %v, want success or a 403 naming alice", err)
	}
	// The server tells her who she is when it serves SelfSubjectReview.
	review, err := alice.AuthenticationV1().SelfSubjectReviews().Create(t.Context(), &authenticationv1.SelfSubjectReview{}, metav1.CreateOptions{})
	switch {
	case apierrors.IsNotFound(err):
		t.Log("SelfSubjectReview is not served yet; identity checked through the certificate only")
	case err != nil:
		t.Errorf("SelfSubjectReview: %v", err)
	case review.Status.UserInfo.Username != "alice":
		t.Errorf("server sees %q, want alice", review.Status.UserInfo.Username)
	}

	// A certificate from another CA is rejected: the server authenticates
	// client certificates, it does not merely accept any.
	other, err := certs.Ensure(certs.Options{Dir: filepath.Join(t.TempDir(), "pki"), Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	certPEM, keyPEM, err := other.IssueClient("alice", nil, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	forged := env.Config()
	forged.CertData, forged.KeyData = certPEM, keyPEM
	_, err = clientFor(t, forged).CoreV1().ConfigMaps("default").List(t.Context(), metav1.ListOptions{})
	if err == nil {
		t.Fatal("a client certificate from a foreign CA was accepted")
	}
	// Go's TLS server refuses the handshake. Under TLS 1.3 the client may
	// see that as an alert ("bad certificate") or, when its first write
	// races the alert, as a broken pipe, a reset connection, or an HTTP/2
	// connection that never got the server's preface.
	refused := apierrors.IsUnauthorized(err)
	for _, sign := range []string{"certificate", "broken pipe", "connection reset", "EOF", "client conn could not be established"} {
		refused = refused || strings.Contains(err.Error(), sign)
	}
	if !refused {
		t.Errorf("foreign certificate: %v, want 401 or the TLS handshake refused", err)
	}
}

func TestEightInstancesInParallelAreIndependent(t *testing.T) {
	const n = 8
	envs := make([]*testenv.Instance, n)
	var wg sync.WaitGroup
	errs := make([]error, n)
	for i := range n {
		wg.Go(func() {
			env, err := testenv.Start(t.Context(), testenv.Options{})
			envs[i], errs[i] = env, err
		})
	}
	wg.Wait()
	t.Cleanup(func() {
		var wg sync.WaitGroup
		for _, env := range envs {
			if env != nil {
				wg.Go(func() {
					if err := env.Stop(); err != nil {
						t.Errorf("Stop: %v", err)
					}
				})
			}
		}
		wg.Wait()
	})
	if err := errors.Join(errs...); err != nil {
		t.Fatal(err)
	}

	urls := map[string]bool{}
	for i, env := range envs {
		urls[env.URL()] = true
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("instance-%d", i),
			Labels: map[string]string{"suite": "parallel"}}}
		if _, err := clientFor(t, env.Config()).CoreV1().ConfigMaps("default").Create(t.Context(), cm, metav1.CreateOptions{}); err != nil {
			t.Fatalf("instance %d: %v", i, err)
		}
	}
	if len(urls) != n {
		t.Errorf("%d distinct URLs for %d instances", len(urls), n)
	}
	for i, env := range envs {
		list, err := clientFor(t, env.Config()).CoreV1().ConfigMaps("").List(t.Context(), metav1.ListOptions{LabelSelector: "suite=parallel"})
		if err != nil {
			t.Fatal(err)
		}
		if len(list.Items) != 1 || list.Items[0].Name != fmt.Sprintf("instance-%d", i) {
			var got []string
			for _, cm := range list.Items {
				got = append(got, cm.Name)
			}
			t.Errorf("instance %d sees %v, want only instance-%d", i, got, i)
		}
	}
	// Each has its own CA: instance 0's admin is a stranger to instance 1.
	cross := envs[1].Config()
	cross.CertData, cross.KeyData = envs[0].Config().CertData, envs[0].Config().KeyData
	if _, err := clientFor(t, cross).CoreV1().Namespaces().Get(t.Context(), "default", metav1.GetOptions{}); err == nil {
		t.Error("instance 0's admin certificate works on instance 1")
	}
}

func countFDs(t testing.TB) int {
	entries, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Skipf("no /proc/self/fd: %v", err)
	}
	return len(entries)
}

func TestStartStopLeavesNoGoroutinesOrFiles(t *testing.T) {
	cycle := func() {
		env, err := testenv.Start(t.Context(), testenv.Options{})
		if err != nil {
			t.Fatal(err)
		}
		c := clientFor(t, env.Config())
		if _, err := c.CoreV1().ConfigMaps("default").Create(t.Context(),
			&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "x"}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		if err := env.Stop(); err != nil {
			t.Fatal(err)
		}
	}
	// The first start initialises process-wide things (gRPC, TLS caches)
	// once; measure from after it.
	cycle()
	settle := func(goroutines, fds int) (int, int) {
		deadline := time.Now().Add(10 * time.Second)
		for {
			g, f := runtime.NumGoroutine(), countFDs(t)
			if (g <= goroutines && f <= fds) || time.Now().After(deadline) {
				return g, f
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	g0, f0 := settle(runtime.NumGoroutine(), countFDs(t))
	for range 3 {
		cycle()
	}
	g1, f1 := settle(g0, f0)
	if g1 > g0 {
		buf := make([]byte, 1<<20)
		t.Errorf("goroutines: %d before, %d after three Start/Stop cycles\n%s", g0, g1, buf[:runtime.Stack(buf, true)])
	}
	if f1 > f0 {
		t.Errorf("open files: %d before, %d after three Start/Stop cycles", f0, f1)
	}
}

func TestResetRemovesUserObjectsKeepsSystemOnes(t *testing.T) {
	env := testenv.StartT(t, testenv.Options{})
	ctx := t.Context()
	c := clientFor(t, env.Config())

	// A watch from before Reset sees the deletions.
	w, err := c.CoreV1().ConfigMaps("team-a").Watch(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()

	create500(t, env)
	if _, err := c.RbacV1().ClusterRoles().Create(ctx, &rbacClusterRole, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	def, err := c.CoreV1().Namespaces().Get(ctx, "default", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	def.Labels = map[string]string{"changed": "by-test"}
	if _, err := c.CoreV1().Namespaces().Update(ctx, def, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := c.CoreV1().Endpoints("default").Delete(ctx, "kubernetes", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}

	start := time.Now()
	if err := env.Reset(ctx, false); err != nil {
		t.Fatal(err)
	}
	t.Logf("Reset of 500+ objects took %s", time.Since(start))

	for _, ns := range []string{"team-a", "team-b"} {
		if _, err := c.CoreV1().Namespaces().Get(ctx, ns, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			t.Errorf("namespace %s after Reset: %v, want NotFound", ns, err)
		}
	}
	cms, err := c.CoreV1().ConfigMaps("").List(ctx, metav1.ListOptions{LabelSelector: "suite=reset"})
	if err != nil {
		t.Fatal(err)
	}
	if len(cms.Items) != 0 {
		t.Errorf("%d ConfigMaps left after Reset", len(cms.Items))
	}
	if _, err := c.RbacV1().ClusterRoles().Get(ctx, rbacClusterRole.Name, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("ClusterRole after Reset: %v, want NotFound", err)
	}
	for _, ns := range []string{"default", "kube-system", "kube-public", "kube-node-lease"} {
		got, err := c.CoreV1().Namespaces().Get(ctx, ns, metav1.GetOptions{})
		if err != nil {
			t.Errorf("system namespace %s after Reset: %v", ns, err)
		} else if ns == "default" && got.Labels["changed"] != "" {
			t.Errorf("default namespace keeps the test's label after Reset: %v", got.Labels)
		}
	}
	if _, err := c.CoreV1().Services("default").Get(ctx, "kubernetes", metav1.GetOptions{}); err != nil {
		t.Errorf("kubernetes Service after Reset: %v", err)
	}
	if _, err := c.CoreV1().Endpoints("default").Get(ctx, "kubernetes", metav1.GetOptions{}); err != nil {
		t.Errorf("kubernetes Endpoints not restored by Reset: %v", err)
	}

	deleted := 0
	timeout := time.After(10 * time.Second)
	for deleted < 250 {
		select {
		case ev := <-w.ResultChan():
			if ev.Type == "DELETED" {
				deleted++
			}
		case <-timeout:
			t.Fatalf("watch saw %d of 250 deletions", deleted)
		}
	}

	// The cleaned API is usable at once, names included.
	if _, err := c.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "team-a"}}, metav1.CreateOptions{}); err != nil {
		t.Fatalf("re-creating team-a after Reset: %v", err)
	}
	if _, err := c.CoreV1().ConfigMaps("team-a").Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "cm-0"}}, metav1.CreateOptions{}); err != nil {
		t.Fatalf("re-creating a ConfigMap after Reset: %v", err)
	}
	if err := env.Reset(ctx, false); err != nil {
		t.Fatalf("second Reset: %v", err)
	}
	if _, err := c.CoreV1().Namespaces().Get(ctx, "team-a", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("team-a after second Reset: %v", err)
	}
}

func TestAuthorizationModes(t *testing.T) {
	if _, err := testenv.Start(t.Context(), testenv.Options{AuthorizationMode: "Webhook"}); err == nil || !strings.Contains(err.Error(), "Webhook") {
		t.Fatalf("Start with an unknown mode: %v, want a clear refusal", err)
	}
	for _, mode := range []string{"RBAC", "AlwaysAllow"} {
		t.Run(mode, func(t *testing.T) {
			env := testenv.StartT(t, testenv.Options{AuthorizationMode: mode})
			_, err := clientFor(t, env.ConfigFor("alice")).CoreV1().Pods("default").List(t.Context(), metav1.ListOptions{})
			switch mode {
			case "RBAC":
				if !apierrors.IsForbidden(err) || !strings.Contains(err.Error(), `User "alice" cannot list resource "pods"`) {
					t.Errorf("alice listing pods under RBAC: %v, want kube's 403", err)
				}
			default:
				if err != nil {
					t.Errorf("alice listing pods under AlwaysAllow: %v", err)
				}
			}
		})
	}
}

func TestWebhookOptionsPointConfigurationsAtTheTest(t *testing.T) {
	cfgs, err := readWebhookConfig(t)
	if err != nil {
		t.Fatal(err)
	}
	env := testenv.StartT(t, testenv.Options{Webhooks: testenv.WebhookOptions{Validating: cfgs}})
	host, port := env.WebhookAddr()
	got, err := clientFor(t, env.Config()).AdmissionregistrationV1().ValidatingWebhookConfigurations().Get(t.Context(), "widget-validation", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cc := got.Webhooks[0].ClientConfig
	wantURL := fmt.Sprintf("https://%s:%d/validate-widget", host, port)
	if cc.Service != nil || cc.URL == nil || *cc.URL != wantURL {
		t.Errorf("clientConfig = service %v url %v, want url %s", cc.Service, cc.URL, wantURL)
	}
	if string(cc.CABundle) != string(env.WebhookCA()) {
		t.Error("caBundle is not the webhook CA")
	}

	// The serving certificate is what an API server calling 127.0.0.1 or
	// localhost accepts, and the files are where controller-runtime looks.
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(env.WebhookCA())
	block, _ := pem.Decode(env.WebhookServingCert())
	cert, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"127.0.0.1", "localhost"} {
		if _, err := cert.Verify(x509.VerifyOptions{Roots: pool, DNSName: name}); err != nil {
			t.Errorf("serving certificate for %s: %v", name, err)
		}
	}
	for _, f := range []string{testenv.WebhookCertFile, testenv.WebhookKeyFile, testenv.WebhookCAFile} {
		if _, err := os.Stat(filepath.Join(env.WebhookCertDir(), f)); err != nil {
			t.Errorf("webhook cert dir: %v", err)
		}
	}
	if _, err := tls.X509KeyPair(env.WebhookServingCert(), env.WebhookServingKey()); err != nil {
		t.Errorf("serving cert and key do not pair: %v", err)
	}

	// WebhookAddr released the reservation: a server can bind the port.
	ln, err := net.Listen("tcp", net.JoinHostPort(host, fmt.Sprint(port)))
	if err != nil {
		t.Fatalf("binding the webhook port: %v", err)
	}
	ln.Close()
}

func TestWebhookListenerServesTheCertificate(t *testing.T) {
	env := testenv.StartT(t, testenv.Options{})
	ln, err := env.WebhookListener()
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		conn, err := ln.Accept()
		if err == nil {
			_ = conn.(*tls.Conn).Handshake()
			conn.Close()
		}
	}()
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(env.WebhookCA())
	_, port := env.WebhookAddr()
	conn, err := tls.Dial("tcp", fmt.Sprintf("127.0.0.1:%d", port), &tls.Config{RootCAs: pool, ServerName: "127.0.0.1"})
	if err != nil {
		t.Fatalf("TLS to the webhook listener: %v", err)
	}
	conn.Close()
	if _, err := env.WebhookListener(); err == nil {
		t.Error("the webhook listener was handed out twice")
	}
}

func TestReadCRDs(t *testing.T) {
	crds, err := testenv.ReadCRDs(exampleCRDs)
	if err != nil {
		t.Fatal(err)
	}
	if len(crds) != 1 || crds[0].Name != "widgets.examples.devplane.dev" || crds[0].Spec.Names.Kind != "Widget" {
		t.Fatalf("ReadCRDs = %+v", crds)
	}
	if _, err := testenv.ReadCRDs(filepath.Join(t.TempDir(), "missing")); err == nil {
		t.Error("a missing path is not an error")
	}
}

func TestCRDsInstalledAndKeptByReset(t *testing.T) {
	env := testenv.StartT(t, testenv.Options{CRDDirectoryPaths: []string{exampleCRDs}})
	ctx := t.Context()
	widgets := widgetClient(t, env, "default")
	if _, err := widgets.Create(ctx, newWidget("w1", "hello"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := env.Reset(ctx, true); err != nil {
		t.Fatal(err)
	}
	list, err := widgets.List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatalf("Widgets after Reset(keepCRDs): %v", err)
	}
	if len(list.Items) != 0 {
		t.Errorf("%d Widgets left after Reset", len(list.Items))
	}
	if err := env.Reset(ctx, false); err != nil {
		t.Fatal(err)
	}
	ok, err := env.ServesCRDs(ctx)
	if err != nil || !ok {
		t.Fatalf("ServesCRDs after Reset: %v %v", ok, err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		_, err := widgets.List(ctx, metav1.ListOptions{})
		if apierrors.IsNotFound(err) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("Widgets still served 10s after Reset(keepCRDs=false): %v", err)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func BenchmarkStartToReady(b *testing.B) {
	ctx := context.Background()
	for b.Loop() {
		env, err := testenv.Start(ctx, testenv.Options{})
		if err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		if err := env.Stop(); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
	}
}

func BenchmarkReset500Objects(b *testing.B) {
	env := testenv.StartT(b, testenv.Options{})
	ctx := context.Background()
	for b.Loop() {
		b.StopTimer()
		create500(b, env)
		b.StartTimer()
		if err := env.Reset(ctx, false); err != nil {
			b.Fatal(err)
		}
	}
}

// With Workloads, pods run on simulated nodes; Reset keeps the nodes.
func TestWorkloadsOption(t *testing.T) {
	env := testenv.StartT(t, testenv.Options{Workloads: true, Nodes: 2})
	cs := clientFor(t, env.Config())
	ctx := t.Context()
	nodes, err := cs.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(nodes.Items) != 2 {
		t.Fatalf("%d nodes right after Start, want 2", len(nodes.Items))
	}
	run := func(name string) {
		t.Helper()
		pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name},
			Spec: corev1.PodSpec{NodeName: nodes.Items[0].Name, Containers: []corev1.Container{{Name: "c", Image: "nginx"}}}}
		if _, err := cs.CoreV1().Pods("default").Create(ctx, pod, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		deadline := time.Now().Add(30 * time.Second)
		for {
			p, err := cs.CoreV1().Pods("default").Get(ctx, name, metav1.GetOptions{})
			if err == nil && p.Status.Phase == corev1.PodRunning {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("pod %s not Running after 30s (%v)", name, err)
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	run("before-reset")
	if err := env.Reset(ctx, true); err != nil {
		t.Fatal(err)
	}
	if _, err := cs.CoreV1().Pods("default").Get(ctx, "before-reset", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("pod after Reset: %v, want NotFound", err)
	}
	if nodes, err := cs.CoreV1().Nodes().List(ctx, metav1.ListOptions{}); err != nil || len(nodes.Items) != 2 {
		t.Fatalf("nodes after Reset: %v (%v)", nodes, err)
	}
	run("after-reset")
}

// Without Workloads (the default, as envtest) no node registers.
func TestWorkloadsOffByDefaultInTestenv(t *testing.T) {
	env := testenv.StartT(t, testenv.Options{})
	nodes, err := clientFor(t, env.Config()).CoreV1().Nodes().List(t.Context(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(nodes.Items) != 0 {
		t.Errorf("%d nodes without Workloads", len(nodes.Items))
	}
}

// TestResetKeepsTheBaselineToStartUpObjects is the deterministic form of a
// race seen under load: a Reset that has to restore a start-up object
// (here, the default namespace's labels, changed on purpose) must not make
// the CRDs it kept part of what later Resets restore. Before the fix the
// baseline was re-read whole after such a restore, so Reset(false) kept
// serving the CRD.
func TestResetKeepsTheBaselineToStartUpObjects(t *testing.T) {
	env := testenv.StartT(t, testenv.Options{CRDDirectoryPaths: []string{exampleCRDs}})
	ctx := t.Context()
	cs, err := kubernetes.NewForConfig(env.Config())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cs.CoreV1().Namespaces().Patch(ctx, "default", types.MergePatchType, []byte(`{"metadata":{"labels":{"changed":"yes"}}}`), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := env.Reset(ctx, true); err != nil {
		t.Fatal(err)
	}
	ns, err := cs.CoreV1().Namespaces().Get(ctx, "default", metav1.GetOptions{})
	if err != nil || ns.Labels["changed"] != "" {
		t.Fatalf("default namespace not restored by Reset: %v %v", err, ns.Labels)
	}
	if _, err := widgetClient(t, env, "default").List(ctx, metav1.ListOptions{}); err != nil {
		t.Fatalf("Widgets not served after Reset(keepCRDs=true): %v", err)
	}
	if err := env.Reset(ctx, false); err != nil {
		t.Fatal(err)
	}
	crds, err := apiextensionsclient.NewForConfig(env.Config())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := crds.ApiextensionsV1().CustomResourceDefinitions().Get(ctx, "widgets.examples.devplane.dev", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Fatalf("the CRD kept by Reset(keepCRDs=true) survived Reset(keepCRDs=false): %v", err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		_, err := widgetClient(t, env, "default").List(ctx, metav1.ListOptions{})
		if apierrors.IsNotFound(err) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("Widgets still served 10s after Reset(keepCRDs=false): %v", err)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

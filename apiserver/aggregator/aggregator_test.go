package aggregator_test

import (
	"bufio"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	apiregv1 "k8s.io/kube-aggregator/pkg/apis/apiregistration/v1"

	"github.com/devplane/devplane/apiserver/aggregator"
	"github.com/devplane/devplane/apiserver/controlplane"
	"github.com/devplane/devplane/apiserver/controlplane/controlplanetest"
)

var (
	apiservicesGVR = schema.GroupVersionResource{Group: "apiregistration.k8s.io", Version: "v1", Resource: "apiservices"}
	flundersGVR    = schema.GroupVersionResource{Group: wardleGroup, Version: wardleVersion, Resource: "flunders"}
	wardleName     = wardleVersion + "." + wardleGroup
)

// env is a running devplane with the aggregator installed.
type env struct {
	cp         *controlplane.ControlPlane
	cs         kubernetes.Interface
	dyn        dynamic.Interface
	kubeconfig string
	cacheDir   string
}

func start(t *testing.T) *env {
	t.Helper()
	// controlplane.New installs the aggregator at the head of the chain.
	cp, _ := controlplanetest.StartDevplane(t, controlplane.Options{Name: "t"})
	return &env{
		cp:         cp,
		cs:         kubernetes.NewForConfigOrDie(cp.RESTConfig()),
		dyn:        dynamic.NewForConfigOrDie(cp.RESTConfig()),
		kubeconfig: controlplanetest.WriteKubeconfig(t, cp),
		cacheDir:   t.TempDir(),
	}
}

// kubectl runs kubectl with one discovery cache for the env, as a user's
// kubectl keeps across commands.
func (e *env) kubectl(t *testing.T, args ...string) (string, error) {
	t.Helper()
	r := controlplanetest.Kubectl(t, e.kubeconfig, append([]string{"--cache-dir", e.cacheDir}, args...)...)
	if r.Code != 0 {
		return r.Stdout, fmt.Errorf("exit status %d: %s", r.Code, r.Stderr)
	}
	return r.Stdout, nil
}

func testCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func (e *env) apiService(t *testing.T, name string) (*apiregv1.APIService, error) {
	u, err := e.dyn.Resource(apiservicesGVR).Get(testCtx(t), name, metav1.GetOptions{})
	if err != nil {
		return nil, err
	}
	s := &apiregv1.APIService{}
	return s, runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, s)
}

// waitAvailable waits for the Available condition to have status (and,
// when reason is set, that reason).
func (e *env) waitAvailable(t *testing.T, name string, status apiregv1.ConditionStatus, reason string) *apiregv1.APIServiceCondition {
	t.Helper()
	var got *apiregv1.APIServiceCondition
	controlplanetest.Eventually(t, 20*time.Second, name+" Available="+string(status)+" "+reason, func() (bool, string) {
		s, err := e.apiService(t, name)
		if err != nil {
			return false, err.Error()
		}
		for i, c := range s.Status.Conditions {
			if c.Type == apiregv1.Available {
				got = &s.Status.Conditions[i]
				return c.Status == status && (reason == "" || c.Reason == reason), c.Reason + ": " + c.Message
			}
		}
		return false, "no condition"
	})
	return got
}

func (e *env) register(t *testing.T, w *wardle) {
	t.Helper()
	ctx := testCtx(t)
	port := int32(w.port())
	if _, err := e.cs.CoreV1().Services("default").Create(ctx, &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: "wardle"},
		Spec:       corev1.ServiceSpec{Ports: []corev1.ServicePort{{Name: "https", Port: 443, TargetPort: intstr.FromInt32(port)}}},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	e.createSlice(t, port)
	obj := map[string]any{"apiVersion": "apiregistration.k8s.io/v1", "kind": "APIService",
		"metadata": map[string]any{"name": wardleName},
		"spec": map[string]any{"group": wardleGroup, "version": wardleVersion, "groupPriorityMinimum": 1000,
			"versionPriority": 15, "caBundle": w.caPEM, "service": map[string]any{"namespace": "default", "name": "wardle"}}}
	raw, _ := json.Marshal(obj)
	u := &unstructured.Unstructured{}
	if err := u.UnmarshalJSON(raw); err != nil {
		t.Fatal(err)
	}
	if _, err := e.dyn.Resource(apiservicesGVR).Create(ctx, u, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

func (e *env) createSlice(t *testing.T, port int32) {
	t.Helper()
	name, ready := "https", true
	if _, err := e.cs.DiscoveryV1().EndpointSlices("default").Create(testCtx(t), &discoveryv1.EndpointSlice{
		ObjectMeta:  metav1.ObjectMeta{Name: "wardle-1", Labels: map[string]string{discoveryv1.LabelServiceName: "wardle"}},
		AddressType: discoveryv1.AddressTypeIPv4,
		Endpoints:   []discoveryv1.Endpoint{{Addresses: []string{"127.0.0.1"}, Conditions: discoveryv1.EndpointConditions{Ready: &ready}}},
		Ports:       []discoveryv1.EndpointPort{{Name: &name, Port: &port}},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

func (e *env) getFlunder(t *testing.T, cfg *rest.Config) (*unstructured.Unstructured, error) {
	dyn := e.dyn
	if cfg != nil {
		dyn = dynamic.NewForConfigOrDie(cfg)
	}
	return dyn.Resource(flundersGVR).Namespace("default").Get(testCtx(t), "foo", metav1.GetOptions{})
}

func TestAggregator(t *testing.T) {
	e := start(t)
	ctx := testCtx(t)

	t.Run("local APIServices", func(t *testing.T) {
		out, err := e.kubectl(t, "get", "apiservices")
		if err != nil {
			t.Fatal(err)
		}
		for _, want := range []string{"v1.", "v1.apps", "v1.apiregistration.k8s.io", "v1.discovery.k8s.io"} {
			if !hasRow(out, want, "Local", "True") {
				t.Errorf("kubectl get apiservices: no row %q Local True in:\n%s", want, out)
			}
		}
		s, err := e.apiService(t, "v1.apps")
		if err != nil {
			t.Fatal(err)
		}
		if s.Labels[aggregator.AutoManagedLabel] != "onstart" || s.Spec.GroupPriorityMinimum != 17800 || s.Spec.Service != nil {
			t.Errorf("v1.apps = %+v %+v", s.Labels, s.Spec)
		}
		if c := e.waitAvailable(t, "v1.", apiregv1.ConditionTrue, "Local"); c.Message == "" {
			t.Errorf("local condition without message")
		}
	})

	t.Run("local APIService is recreated", func(t *testing.T) {
		if err := e.dyn.Resource(apiservicesGVR).Delete(ctx, "v1.batch", metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		controlplanetest.Eventually(t, 10*time.Second, "v1.batch recreated", func() (bool, string) {
			_, err := e.apiService(t, "v1.batch")
			return err == nil, errString(err)
		})
	})

	t.Run("authentication ConfigMap", func(t *testing.T) {
		cm, err := e.cs.CoreV1().ConfigMaps("kube-system").Get(ctx, "extension-apiserver-authentication", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		want := map[string]string{
			"client-ca-file":                     string(e.cp.Certs.CA.CertPEM),
			"requestheader-client-ca-file":       string(e.cp.Certs.FrontProxyCA.CertPEM),
			"requestheader-allowed-names":        `["front-proxy-client"]`,
			"requestheader-extra-headers-prefix": `["X-Remote-Extra-"]`,
			"requestheader-group-headers":        `["X-Remote-Group"]`,
			"requestheader-username-headers":     `["X-Remote-User"]`,
			"requestheader-uid-headers":          `["X-Remote-Uid"]`,
		}
		for k, v := range want {
			if cm.Data[k] != v {
				t.Errorf("%s = %q, want %q", k, cm.Data[k], v)
			}
		}
	})

	t.Run("validation", func(t *testing.T) {
		u := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "apiregistration.k8s.io/v1", "kind": "APIService",
			"metadata": map[string]any{"name": "wrong.name"},
			"spec": map[string]any{"group": "x.example.com", "version": "v1", "groupPriorityMinimum": 0, "versionPriority": 1,
				"insecureSkipTLSVerify": true, "caBundle": []byte("x"), "service": map[string]any{"namespace": "default", "name": "x"}}}}
		_, err := e.dyn.Resource(apiservicesGVR).Create(ctx, u, metav1.CreateOptions{})
		if !apierrors.IsInvalid(err) {
			t.Fatalf("want Invalid, got %v", err)
		}
		for _, f := range []string{"metadata.name", "spec.groupPriorityMinimum", "spec.insecureSkipTLSVerify"} {
			if !strings.Contains(err.Error(), f) {
				t.Errorf("error does not name %s: %v", f, err)
			}
		}
	})

	w := newWardle(t, e.cp.Certs.FrontProxyCAPool())
	e.register(t, w)
	e.waitAvailable(t, wardleName, apiregv1.ConditionTrue, "Passed")

	t.Run("proxied get as the authenticated user", func(t *testing.T) {
		f, err := e.getFlunder(t, nil)
		if err != nil {
			t.Fatal(err)
		}
		ann := f.GetAnnotations()
		if ann["user"] != "devplane-admin" || !strings.Contains(ann["groups"], "system:masters") {
			t.Errorf("backend saw user %q groups %q", ann["user"], ann["groups"])
		}
		if last := w.lastTo(t, "/apis/wardle.example.com/v1alpha1/namespaces/default/flunders/foo"); last.Proto != "HTTP/2.0" {
			t.Errorf("backend got %s %s, want HTTP/2.0", last.Proto, last.Path)
		}
		list, err := e.dyn.Resource(flundersGVR).Namespace("default").List(ctx, metav1.ListOptions{})
		if err != nil || len(list.Items) != 1 {
			t.Fatalf("list: %v %v", list, err)
		}
	})

	t.Run("forged identity headers are replaced", func(t *testing.T) {
		cfg := e.cp.RESTConfig()
		cfg.WrapTransport = func(rt http.RoundTripper) http.RoundTripper {
			return roundTripperFunc(func(r *http.Request) (*http.Response, error) {
				r = r.Clone(r.Context())
				r.Header.Set("X-Remote-User", "evil")
				r.Header.Add("X-Remote-Group", "evil-group")
				r.Header.Set("X-Remote-Extra-Scopes", "all")
				return rt.RoundTrip(r)
			})
		}
		f, err := e.getFlunder(t, cfg)
		if err != nil {
			t.Fatal(err)
		}
		if u := f.GetAnnotations()["user"]; u != "devplane-admin" {
			t.Errorf("backend saw user %q", u)
		}
		last := w.lastTo(t, "/apis/wardle.example.com/v1alpha1/namespaces/default/flunders/foo")
		if strings.Contains(strings.Join(last.Groups, ","), "evil") || len(last.Extra) != 0 || last.User != "devplane-admin" {
			t.Errorf("forged headers reached the backend: %+v", last)
		}
	})

	t.Run("watch streams through the proxy", func(t *testing.T) {
		wctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		wi, err := e.dyn.Resource(flundersGVR).Namespace("default").Watch(wctx, metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		defer wi.Stop()
		var got []watch.EventType
		start := time.Now()
		for len(got) < 3 {
			select {
			case ev, ok := <-wi.ResultChan():
				if !ok {
					t.Fatalf("watch closed after %v", got)
				}
				got = append(got, ev.Type)
				if len(got) == 1 && time.Since(start) > 2*time.Second {
					t.Errorf("first event took %v: not flushed", time.Since(start))
				}
			case <-wctx.Done():
				t.Fatalf("watch events: got %v", got)
			}
		}
		if got[0] != watch.Added || got[1] != watch.Modified || got[2] != watch.Deleted {
			t.Errorf("events %v", got)
		}
	})

	t.Run("upgrade is hijacked and copied", func(t *testing.T) {
		cert, err := tls.X509KeyPair(e.cp.Certs.Admin.CertPEM, e.cp.Certs.Admin.KeyPEM)
		if err != nil {
			t.Fatal(err)
		}
		pool := x509.NewCertPool()
		pool.AppendCertsFromPEM(e.cp.Certs.CA.CertPEM)
		conn, err := tls.Dial("tcp", strings.TrimPrefix(e.cp.URL(), "https://"),
			&tls.Config{RootCAs: pool, Certificates: []tls.Certificate{cert}, NextProtos: []string{"http/1.1"}})
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		_ = conn.SetDeadline(time.Now().Add(10 * time.Second))
		_, _ = io.WriteString(conn, "POST /apis/wardle.example.com/v1alpha1/namespaces/default/flunders/foo/attach HTTP/1.1\r\n"+
			"Host: devplane\r\nConnection: Upgrade\r\nUpgrade: echo\r\nX-Remote-User: evil\r\n\r\n")
		br := bufio.NewReader(conn)
		resp, err := http.ReadResponse(br, nil)
		if err != nil {
			t.Fatal(err)
		}
		if resp.StatusCode != http.StatusSwitchingProtocols {
			t.Fatalf("status %d", resp.StatusCode)
		}
		_, _ = io.WriteString(conn, "ping\n")
		line, err := br.ReadString('\n')
		if err != nil || line != "ping\n" {
			t.Errorf("echo: %q %v", line, err)
		}
		if last := w.lastTo(t, "/apis/wardle.example.com/v1alpha1/namespaces/default/flunders/foo/attach"); last.User != "devplane-admin" || last.Proto != "HTTP/1.1" {
			t.Errorf("upgrade reached the backend as %+v", last)
		}
	})

	t.Run("kubectl", func(t *testing.T) {
		out, err := e.kubectl(t, "get", "--raw", "/apis/wardle.example.com/v1alpha1")
		if err != nil || !strings.Contains(out, `"flunders"`) {
			t.Errorf("get --raw: %v\n%s", err, out)
		}
		out, err = e.kubectl(t, "api-resources")
		if err != nil || !hasRow(out, "flunders", "wardle.example.com/v1alpha1", "Flunder") || !hasRow(out, "apiservices", "apiregistration.k8s.io/v1") {
			t.Errorf("api-resources: %v\n%s", err, out)
		}
		out, err = e.kubectl(t, "get", "apiservices", wardleName)
		if err != nil || !hasRow(out, wardleName, "default/wardle", "True") {
			t.Errorf("get apiservice: %v\n%s", err, out)
		}
		out, err = e.kubectl(t, "get", "flunders", "-o", "name")
		if err != nil || strings.TrimSpace(out) != "flunder.wardle.example.com/one" {
			t.Errorf("get flunders: %v\n%s", err, out)
		}
	})

	t.Run("discovery", func(t *testing.T) {
		var groups metav1.APIGroupList
		e.getJSON(t, "/apis", "application/json", &groups)
		var found *metav1.APIGroup
		for i := range groups.Groups {
			if groups.Groups[i].Name == wardleGroup {
				found = &groups.Groups[i]
			}
		}
		if found == nil || found.PreferredVersion.Version != wardleVersion || groups.Groups[0].Name != "apiregistration.k8s.io" {
			t.Errorf("legacy /apis: %+v", groups.Groups)
		}
		var group metav1.APIGroup
		e.getJSON(t, "/apis/"+wardleGroup, "application/json", &group)
		if group.Name != wardleGroup || len(group.Versions) != 1 {
			t.Errorf("/apis/%s: %+v", wardleGroup, group)
		}
		if f := e.aggregatedFreshness(t); f != "Current" {
			t.Errorf("aggregated freshness %q", f)
		}
	})

	t.Run("backend down then back", func(t *testing.T) {
		w.stop()
		c := e.waitAvailable(t, wardleName, apiregv1.ConditionFalse, "FailedDiscoveryCheck")
		if !strings.Contains(c.Message, "failing or missing response") {
			t.Errorf("message %q", c.Message)
		}
		// The proxy and discovery see the condition through the watch
		// cache, a moment after a consistent read does.
		controlplanetest.Eventually(t, 10*time.Second, "a 503 service unavailable Status", func() (bool, string) {
			_, err := e.getFlunder(t, nil)
			var st apierrors.APIStatus
			return errors.As(err, &st) && st.Status().Code == http.StatusServiceUnavailable && st.Status().Message == "service unavailable", errString(err)
		})
		controlplanetest.Eventually(t, 10*time.Second, "aggregated freshness Stale while down", func() (bool, string) {
			f := e.aggregatedFreshness(t)
			return f == "Stale", f
		})
		out, err := e.kubectl(t, "get", "apiservices", wardleName)
		if err != nil || !hasRow(out, wardleName, "False (FailedDiscoveryCheck)") {
			t.Errorf("get apiservice while down: %v\n%s", err, out)
		}
		w.start()
		e.waitAvailable(t, wardleName, apiregv1.ConditionTrue, "Passed")
		if _, err := e.getFlunder(t, nil); err != nil {
			t.Errorf("after recovery: %v", err)
		}
	})

	t.Run("Endpoints instead of EndpointSlices", func(t *testing.T) {
		if err := e.cs.DiscoveryV1().EndpointSlices("default").Delete(ctx, "wardle-1", metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		e.waitAvailable(t, wardleName, apiregv1.ConditionFalse, "EndpointsNotFound")
		if _, err := e.cs.CoreV1().Endpoints("default").Create(ctx, &corev1.Endpoints{
			ObjectMeta: metav1.ObjectMeta{Name: "wardle"},
			Subsets: []corev1.EndpointSubset{{Addresses: []corev1.EndpointAddress{{IP: "127.0.0.1"}},
				Ports: []corev1.EndpointPort{{Name: "https", Port: int32(w.port())}}}},
		}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		e.waitAvailable(t, wardleName, apiregv1.ConditionTrue, "Passed")
		if _, err := e.getFlunder(t, nil); err != nil {
			t.Errorf("through Endpoints: %v", err)
		}
	})

	t.Run("service gone", func(t *testing.T) {
		if err := e.cs.CoreV1().Services("default").Delete(ctx, "wardle", metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		c := e.waitAvailable(t, wardleName, apiregv1.ConditionFalse, "ServiceNotFound")
		if c.Message != `service/wardle in "default" is not present` {
			t.Errorf("message %q", c.Message)
		}
	})

	t.Run("unregistered", func(t *testing.T) {
		if err := e.dyn.Resource(apiservicesGVR).Delete(ctx, wardleName, metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		controlplanetest.Eventually(t, 10*time.Second, "group gone", func() (bool, string) {
			_, err := e.getFlunder(t, nil)
			return apierrors.IsNotFound(err), errString(err)
		})
	})
}

type roundTripperFunc func(*http.Request) (*http.Response, error)

func (f roundTripperFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

func errString(err error) string {
	if err == nil {
		return "<nil>"
	}
	return err.Error()
}

// hasRow: some line of out holds every field.
func hasRow(out string, fields ...string) bool {
	for _, line := range strings.Split(out, "\n") {
		cols := strings.Fields(line)
		ok := len(cols) > 0 && cols[0] == fields[0]
		for _, f := range fields[1:] {
			ok = ok && strings.Contains(line, f)
		}
		if ok {
			return true
		}
	}
	return false
}

func (e *env) getJSON(t *testing.T, path, accept string, into any) {
	t.Helper()
	rc := e.cs.Discovery().RESTClient()
	body, err := rc.Get().AbsPath(path).SetHeader("Accept", accept).DoRaw(testCtx(t))
	if err != nil {
		t.Fatalf("GET %s: %v", path, err)
	}
	if err := json.Unmarshal(body, into); err != nil {
		t.Fatalf("GET %s: %v", path, err)
	}
}

// aggregatedFreshness is wardle's freshness in aggregated discovery v2.
func (e *env) aggregatedFreshness(t *testing.T) string {
	t.Helper()
	var list struct {
		Items []struct {
			Metadata struct{ Name string }
			Versions []struct {
				Version   string
				Freshness string
				Resources []struct{ Resource string }
			}
		}
	}
	e.getJSON(t, "/apis", "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList", &list)
	for _, g := range list.Items {
		if g.Metadata.Name == wardleGroup && len(g.Versions) == 1 && len(g.Versions[0].Resources) == 1 {
			f := g.Versions[0].Freshness
			if f == "" {
				f = "Current"
			}
			return f
		}
	}
	return "missing"
}

// TestCRDAPIServicesKeptAcrossRestart: a restart serves the CRDs in storage
// before it reconciles the local APIServices, so their APIServices stay as
// they were (kube's autoregister waits for its CRD informer the same way)
// instead of being deleted as stale and made again on every start.
func TestCRDAPIServicesKeptAcrossRestart(t *testing.T) {
	dir := t.TempDir()
	cp, stop := controlplanetest.StartDevplane(t, controlplane.Options{Name: "t", DataDir: dir})
	e := &env{cp: cp, dyn: dynamic.NewForConfigOrDie(cp.RESTConfig()), kubeconfig: controlplanetest.WriteKubeconfig(t, cp), cacheDir: t.TempDir()}
	crd := `{"apiVersion":"apiextensions.k8s.io/v1","kind":"CustomResourceDefinition",
"metadata":{"name":"gizmos.restart.example.com"},
"spec":{"group":"restart.example.com","scope":"Namespaced",
 "names":{"plural":"gizmos","singular":"gizmo","kind":"Gizmo","listKind":"GizmoList"},
 "versions":[{"name":"v1","served":true,"storage":true,"schema":{"openAPIV3Schema":{"type":"object","x-kubernetes-preserve-unknown-fields":true}}}]}}`
	path := dir + "/crd.json"
	if err := os.WriteFile(path, []byte(crd), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := e.kubectl(t, "create", "-f", path); err != nil {
		t.Fatal(err)
	}
	const name = "v1.restart.example.com"
	// Settled first: made, then its status written by the availability
	// controller (taken before that, the status write looked like the
	// restart's).
	e.waitAvailable(t, name, apiregv1.ConditionTrue, "Local")
	before, err := e.apiService(t, name)
	if err != nil {
		t.Fatal(err)
	}
	stop()

	cp2, _ := controlplanetest.StartDevplane(t, controlplane.Options{Name: "t", DataDir: dir})
	e2 := &env{cp: cp2, dyn: dynamic.NewForConfigOrDie(cp2.RESTConfig())}
	after, err := e2.apiService(t, name)
	if err != nil {
		t.Fatalf("after the restart: %v", err)
	}
	if after.UID != before.UID || after.ResourceVersion != before.ResourceVersion {
		t.Errorf("APIService %s rewritten by the restart: uid %s → %s, resourceVersion %s → %s",
			name, before.UID, after.UID, before.ResourceVersion, after.ResourceVersion)
	}
	if got := after.Labels[aggregator.AutoManagedLabel]; got != "true" {
		t.Errorf("APIService %s automanaged=%q, want \"true\" (a CRD's)", name, got)
	}
}

package controlplane_test

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	admissionv1 "k8s.io/api/admission/v1"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// webhookServer is a TLS admission webhook server on 127.0.0.1 with a
// certificate from devplane's CA.
type webhookServer struct {
	port    int
	calls   sync.Map // path → *atomic.Int32
	dryRuns sync.Map // path + " " + object name → last dryRun flag (controllers create objects too, e.g. kube-root-ca.crt)
	seen    sync.Map // path → last request, summarised
}

func (w *webhookServer) count(path string) int32 {
	v, _ := w.calls.LoadOrStore(path, &atomic.Int32{})
	return v.(*atomic.Int32).Load()
}

func (w *webhookServer) url(path string) *string {
	u := "https://127.0.0.1:" + strconv.Itoa(w.port) + path
	return &u
}

func startWebhookServer(t *testing.T, s *started) *webhookServer {
	t.Helper()
	certPEM, keyPEM, err := s.cp.Certs.IssueServing([]string{"127.0.0.1"}, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := tls.Listen("tcp", "127.0.0.1:0", &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12})
	if err != nil {
		t.Fatal(err)
	}
	ws := &webhookServer{port: ln.Addr().(*net.TCPAddr).Port}
	review := func(w http.ResponseWriter, r *http.Request, decide func(req *admissionv1.AdmissionRequest) *admissionv1.AdmissionResponse) {
		v, _ := ws.calls.LoadOrStore(r.URL.Path, &atomic.Int32{})
		v.(*atomic.Int32).Add(1)
		var in admissionv1.AdmissionReview
		body, _ := io.ReadAll(r.Body)
		if err := json.Unmarshal(body, &in); err != nil || in.Request == nil {
			http.Error(w, "bad review", http.StatusBadRequest)
			return
		}
		if in.Request.DryRun != nil {
			ws.dryRuns.Store(r.URL.Path+" "+in.Request.Name, *in.Request.DryRun)
		}
		resp := decide(in.Request)
		resp.UID = in.Request.UID
		out := admissionv1.AdmissionReview{TypeMeta: in.TypeMeta, Response: resp}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(out)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/add-label", func(w http.ResponseWriter, r *http.Request) {
		review(w, r, func(req *admissionv1.AdmissionRequest) *admissionv1.AdmissionResponse {
			var obj metav1.PartialObjectMetadata
			_ = json.Unmarshal(req.Object.Raw, &obj)
			var patch string
			if obj.Labels == nil {
				patch = `[{"op":"add","path":"/metadata/labels","value":{"admitted":"yes"}}]`
			} else {
				patch = `[{"op":"add","path":"/metadata/labels/admitted","value":"yes"}]`
			}
			pt := admissionv1.PatchTypeJSONPatch
			return &admissionv1.AdmissionResponse{Allowed: true, Patch: []byte(patch), PatchType: &pt,
				Warnings: []string{"label added by the test webhook"}}
		})
	})
	mux.HandleFunc("/deny-bad", func(w http.ResponseWriter, r *http.Request) {
		review(w, r, func(req *admissionv1.AdmissionRequest) *admissionv1.AdmissionResponse {
			var cm corev1.ConfigMap
			_ = json.Unmarshal(req.Object.Raw, &cm)
			if _, bad := cm.Data["bad"]; bad {
				return &admissionv1.AdmissionResponse{Allowed: false, Result: &metav1.Status{
					Code: http.StatusForbidden, Reason: metav1.StatusReasonForbidden, Message: `data key "bad" is not allowed`}}
			}
			return &admissionv1.AdmissionResponse{Allowed: true, Warnings: []string{"configmap checked"}}
		})
	})
	mux.HandleFunc("/delete-seen", func(w http.ResponseWriter, r *http.Request) {
		review(w, r, func(req *admissionv1.AdmissionRequest) *admissionv1.AdmissionResponse {
			var old metav1.PartialObjectMetadata
			_ = json.Unmarshal(req.OldObject.Raw, &old)
			ws.seen.Store(r.URL.Path, fmt.Sprintf("%s old=%s object=%q", req.Operation, old.Name, req.Object.Raw))
			return &admissionv1.AdmissionResponse{Allowed: true}
		})
	})
	mux.HandleFunc("/delete-patch", func(w http.ResponseWriter, r *http.Request) {
		review(w, r, func(*admissionv1.AdmissionRequest) *admissionv1.AdmissionResponse {
			pt := admissionv1.PatchTypeJSONPatch
			return &admissionv1.AdmissionResponse{Allowed: true, PatchType: &pt,
				Patch: []byte(`[{"op":"add","path":"/metadata/labels","value":{"x":"y"}}]`)}
		})
	})
	mux.HandleFunc("/allow", func(w http.ResponseWriter, r *http.Request) {
		review(w, r, func(*admissionv1.AdmissionRequest) *admissionv1.AdmissionResponse {
			return &admissionv1.AdmissionResponse{Allowed: true}
		})
	})
	mux.HandleFunc("/allow-some", func(w http.ResponseWriter, r *http.Request) {
		review(w, r, func(*admissionv1.AdmissionRequest) *admissionv1.AdmissionResponse {
			return &admissionv1.AdmissionResponse{Allowed: true}
		})
	})
	mux.HandleFunc("/sleep", func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-time.After(10 * time.Second): // far beyond the hooks' timeouts
		case <-r.Context().Done():
		}
		review(w, r, func(*admissionv1.AdmissionRequest) *admissionv1.AdmissionResponse {
			return &admissionv1.AdmissionResponse{Allowed: true}
		})
	})
	mux.HandleFunc("/garbage", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, "this is not an AdmissionReview")
	})
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Close() })
	return ws
}

// warningCollector records Warning headers seen by client-go.
type warningCollector struct {
	mu   sync.Mutex
	msgs []string
}

func (c *warningCollector) HandleWarningHeader(_ int, _ string, text string) {
	c.mu.Lock()
	c.msgs = append(c.msgs, text)
	c.mu.Unlock()
}

func (c *warningCollector) all() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return strings.Join(c.msgs, "\n")
}

// clientWithWarnings is an admin clientset whose warnings land in wc.
func clientWithWarnings(t *testing.T, s *started, wc *warningCollector) *kubernetes.Clientset {
	t.Helper()
	cfg := rest.CopyConfig(s.cp.RESTConfig())
	cfg.WarningHandler = wc
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return cs
}

// testNamespace creates a namespace labelled admission-test=<name>.
func testNamespace(t *testing.T, cs kubernetes.Interface, name string, extra map[string]string) {
	t.Helper()
	l := map[string]string{"admission-test": name}
	for k, v := range extra {
		l[k] = v
	}
	_, err := cs.CoreV1().Namespaces().Create(context.Background(),
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: l}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
}

func nsSelector(name string) *metav1.LabelSelector {
	return &metav1.LabelSelector{MatchLabels: map[string]string{"admission-test": name}}
}

func rule(ops []admissionregistrationv1.OperationType, group, resource string) []admissionregistrationv1.RuleWithOperations {
	return []admissionregistrationv1.RuleWithOperations{{Operations: ops,
		Rule: admissionregistrationv1.Rule{APIGroups: []string{group}, APIVersions: []string{"*"}, Resources: []string{resource}}}}
}

var (
	opsCreate       = []admissionregistrationv1.OperationType{admissionregistrationv1.Create}
	opsCreateUpdate = []admissionregistrationv1.OperationType{admissionregistrationv1.Create, admissionregistrationv1.Update}
	sideEffectsNone = admissionregistrationv1.SideEffectClassNone
	sideEffectsSome = admissionregistrationv1.SideEffectClassSome
	policyFail      = admissionregistrationv1.Fail
	policyIgnore    = admissionregistrationv1.Ignore
)

func validatingHook(name string, url *string, ns string, rules []admissionregistrationv1.RuleWithOperations,
	fp admissionregistrationv1.FailurePolicyType) admissionregistrationv1.ValidatingWebhook {
	return admissionregistrationv1.ValidatingWebhook{
		Name: name, ClientConfig: admissionregistrationv1.WebhookClientConfig{URL: url},
		Rules: rules, FailurePolicy: &fp, NamespaceSelector: nsSelector(ns),
		SideEffects: &sideEffectsNone, AdmissionReviewVersions: []string{"v1"},
	}
}

func createValidating(t *testing.T, s *started, cs kubernetes.Interface, name string, hooks ...admissionregistrationv1.ValidatingWebhook) {
	t.Helper()
	ca := s.cp.Certs.CA.CertPEM
	for i := range hooks {
		hooks[i].ClientConfig.CABundle = ca
	}
	_, err := cs.AdmissionregistrationV1().ValidatingWebhookConfigurations().Create(context.Background(),
		&admissionregistrationv1.ValidatingWebhookConfiguration{ObjectMeta: metav1.ObjectMeta{Name: name}, Webhooks: hooks},
		metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cs.AdmissionregistrationV1().ValidatingWebhookConfigurations().Delete(context.Background(), name, metav1.DeleteOptions{})
	})
}

// createUntil repeats a create until check accepts its outcome (the
// configuration reaches the watch cache a moment after it is written).
func createUntil(t *testing.T, what string, create func() error, check func(error) bool) error {
	t.Helper()
	var err error
	deadline := time.Now().Add(10 * time.Second)
	for {
		err = create()
		if check(err) {
			return err
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: unexpected outcome after 10s: %v", what, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func configMap(name string, data map[string]string) *corev1.ConfigMap {
	return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name}, Data: data}
}

func simplePod(name string, labels map[string]string) *corev1.Pod {
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "busybox"}}}}
}

func TestAdmissionWebhooks(t *testing.T) {
	s := startControlPlane(t, "")
	ws := startWebhookServer(t, s)
	wc := &warningCollector{}
	cs := clientWithWarnings(t, s, wc)
	ctx := context.Background()

	t.Run("mutating webhook patches pods, selected by namespace and object labels", func(t *testing.T) {
		testNamespace(t, cs, "mutate", nil)
		testNamespace(t, cs, "mutate-other", nil)
		fp := admissionregistrationv1.Fail
		_, err := cs.AdmissionregistrationV1().MutatingWebhookConfigurations().Create(ctx, &admissionregistrationv1.MutatingWebhookConfiguration{
			ObjectMeta: metav1.ObjectMeta{Name: "add-label"},
			Webhooks: []admissionregistrationv1.MutatingWebhook{{
				Name: "add-label.example.com", ClientConfig: admissionregistrationv1.WebhookClientConfig{URL: ws.url("/add-label"), CABundle: s.cp.Certs.CA.CertPEM},
				Rules: rule(opsCreate, "", "pods"), FailurePolicy: &fp, NamespaceSelector: nsSelector("mutate"),
				ObjectSelector: &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "skip-mutation", Operator: metav1.LabelSelectorOpDoesNotExist}}},
				SideEffects:    &sideEffectsNone, AdmissionReviewVersions: []string{"v1"},
			}},
		}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		i := 0
		var pod *corev1.Pod
		createUntil(t, "mutated pod", func() error {
			i++
			var err error
			pod, err = cs.CoreV1().Pods("mutate").Create(ctx, simplePod(fmt.Sprintf("p%d", i), map[string]string{"app": "x"}), metav1.CreateOptions{})
			return err
		}, func(err error) bool { return err == nil && pod.Labels["admitted"] == "yes" })
		if pod.Labels["app"] != "x" {
			t.Errorf("existing labels lost: %v", pod.Labels)
		}
		// The request's record carries kube's admission annotations.
		var annotations map[string]string
		for _, rec := range s.cp.Auditor().Ring().Records() {
			if ev := rec.Event(); ev.Verb == "create" && ev.ObjectRef != nil && ev.ObjectRef.Resource == "pods" &&
				ev.ObjectRef.Namespace == "mutate" && ev.ObjectRef.Name == pod.Name {
				annotations = ev.Annotations
			}
		}
		if got, want := annotations["mutation.webhook.admission.k8s.io/round_0_index_0"],
			`{"configuration":"add-label","webhook":"add-label.example.com","mutated":true}`; got != want {
			t.Errorf("mutation annotation %q, want %q (all: %v)", got, want, annotations)
		}
		if got := annotations["pod-security.kubernetes.io/enforce-policy"]; got != "privileged:latest" {
			t.Errorf("pod-security annotation %q, want privileged:latest (all: %v)", got, annotations)
		}
		if !strings.Contains(wc.all(), "label added by the test webhook") {
			t.Errorf("webhook warning not passed back; warnings: %q", wc.all())
		}
		// Stored, not just returned.
		got, err := cs.CoreV1().Pods("mutate").Get(ctx, pod.Name, metav1.GetOptions{})
		if err != nil || got.Labels["admitted"] != "yes" {
			t.Errorf("stored pod: %v %v", got.Labels, err)
		}
		skipped, err := cs.CoreV1().Pods("mutate").Create(ctx, simplePod("skipped", map[string]string{"skip-mutation": "1"}), metav1.CreateOptions{})
		if err != nil || skipped.Labels["admitted"] != "" {
			t.Errorf("objectSelector: pod mutated anyway: %v %v", skipped.Labels, err)
		}
		other, err := cs.CoreV1().Pods("mutate-other").Create(ctx, simplePod("other", nil), metav1.CreateOptions{})
		if err != nil || other.Labels["admitted"] != "" {
			t.Errorf("namespaceSelector: pod mutated anyway: %v %v", other.Labels, err)
		}
	})

	t.Run("validating webhook through a service denies with kube's words", func(t *testing.T) {
		testNamespace(t, cs, "validate", nil)
		// The webhook is reached through a Service whose Endpoints point at
		// the test's server.
		if _, err := cs.CoreV1().Services("validate").Create(ctx, &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "hook"},
			Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{{Name: "https", Port: 443}}}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		if _, err := cs.CoreV1().Endpoints("validate").Create(ctx, &corev1.Endpoints{ObjectMeta: metav1.ObjectMeta{Name: "hook"},
			Subsets: []corev1.EndpointSubset{{Addresses: []corev1.EndpointAddress{{IP: "127.0.0.1"}},
				Ports: []corev1.EndpointPort{{Name: "https", Port: int32(ws.port)}}}}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		path := "/deny-bad"
		h := validatingHook("deny-bad.example.com", nil, "validate", rule(opsCreateUpdate, "", "configmaps"), policyFail)
		h.ClientConfig.Service = &admissionregistrationv1.ServiceReference{Namespace: "validate", Name: "hook", Path: &path}
		h.MatchConditions = []admissionregistrationv1.MatchCondition{{Name: "not-skipped",
			Expression: `!has(object.metadata.annotations) || !('skip' in object.metadata.annotations)`}}
		createValidating(t, s, cs, "deny-bad", h)
		want := `admission webhook "deny-bad.example.com" denied the request: data key "bad" is not allowed`
		i := 0
		err := createUntil(t, "denied configmap", func() error {
			i++
			_, err := cs.CoreV1().ConfigMaps("validate").Create(ctx, configMap(fmt.Sprintf("bad%d", i), map[string]string{"bad": "1"}), metav1.CreateOptions{})
			return err
		}, func(err error) bool { return err != nil })
		if err.Error() != want || !apierrors.IsForbidden(err) {
			t.Errorf("got %v (forbidden %v), want %q", err, apierrors.IsForbidden(err), want)
		}
		if _, err := cs.CoreV1().ConfigMaps("validate").Create(ctx, configMap("good", map[string]string{"ok": "1"}), metav1.CreateOptions{}); err != nil {
			t.Fatalf("good configmap: %v", err)
		}
		if !strings.Contains(wc.all(), "configmap checked") {
			t.Errorf("validating webhook warning missing: %q", wc.all())
		}
		// Update to a bad state is denied too.
		cm, _ := cs.CoreV1().ConfigMaps("validate").Get(ctx, "good", metav1.GetOptions{})
		cm.Data["bad"] = "now"
		if _, err := cs.CoreV1().ConfigMaps("validate").Update(ctx, cm, metav1.UpdateOptions{}); err == nil || err.Error() != want {
			t.Errorf("update: got %v, want %q", err, want)
		}
		// matchConditions: an annotated object is not sent.
		skip := configMap("skipped", map[string]string{"bad": "1"})
		skip.Annotations = map[string]string{"skip": "true"}
		if _, err := cs.CoreV1().ConfigMaps("validate").Create(ctx, skip, metav1.CreateOptions{}); err != nil {
			t.Errorf("matchConditions false must skip the webhook: %v", err)
		}
	})

	t.Run("failure policy when the webhook is down, hung or talks garbage", func(t *testing.T) {
		testNamespace(t, cs, "failing", nil)
		closed, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		downURL := "https://" + closed.Addr().String() + "/down"
		_ = closed.Close()
		one := int32(1)
		slow := validatingHook("slow.example.com", ws.url("/sleep"), "failing", rule(opsCreate, "", "secrets"), policyFail)
		slow.TimeoutSeconds = &one
		createValidating(t, s, cs, "failing",
			validatingHook("down-ignore.example.com", &downURL, "failing", rule(opsCreate, "", "configmaps"), policyIgnore),
			validatingHook("down-fail.example.com", &downURL, "failing", rule(opsCreate, "", "services"), policyFail),
			slow,
			validatingHook("garbage.example.com", ws.url("/garbage"), "failing", rule(opsCreate, "", "serviceaccounts"), policyFail),
		)
		svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "svc"}, Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{{Port: 80}}}}
		err = createUntil(t, "down webhook with Fail", func() error {
			_, err := cs.CoreV1().Services("failing").Create(ctx, svc.DeepCopy(), metav1.CreateOptions{})
			return err
		}, func(err error) bool { return err != nil })
		if !apierrors.IsInternalError(err) || !strings.HasPrefix(err.Error(),
			`Internal error occurred: failed calling webhook "down-fail.example.com": failed to call webhook: Post "`+downURL+`?timeout=10s"`) {
			t.Errorf("Fail policy: got %v", err)
		}
		if _, err := cs.CoreV1().ConfigMaps("failing").Create(ctx, configMap("ignored", nil), metav1.CreateOptions{}); err != nil {
			t.Errorf("Ignore policy must let the request through: %v", err)
		}
		start := time.Now()
		_, err = cs.CoreV1().Secrets("failing").Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "s"}}, metav1.CreateOptions{})
		if took := time.Since(start); took > 5*time.Second { // 1 s, with room for a busy CI machine
			t.Errorf("timeoutSeconds 1 not honoured: took %v", took)
		}
		if err == nil || !apierrors.IsInternalError(err) || !strings.Contains(err.Error(), `failed calling webhook "slow.example.com"`) ||
			!strings.Contains(err.Error(), "deadline exceeded") {
			t.Errorf("timeout: got %v", err)
		}
		_, err = cs.CoreV1().ServiceAccounts("failing").Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "sa"}}, metav1.CreateOptions{})
		if err == nil || !strings.Contains(err.Error(), `Internal error occurred: failed calling webhook "garbage.example.com": received invalid webhook response`) {
			t.Errorf("garbage: got %v", err)
		}
	})

	t.Run("mutating webhooks see deletes, and may not patch them", func(t *testing.T) {
		opsDelete := []admissionregistrationv1.OperationType{admissionregistrationv1.Delete}
		for _, hook := range []struct{ name, path, ns string }{
			{"delete-seen", "/delete-seen", "delete-seen"}, {"delete-patch", "/delete-patch", "delete-patch"},
		} {
			testNamespace(t, cs, hook.ns, nil)
			_, err := cs.AdmissionregistrationV1().MutatingWebhookConfigurations().Create(ctx, &admissionregistrationv1.MutatingWebhookConfiguration{
				ObjectMeta: metav1.ObjectMeta{Name: hook.name},
				Webhooks: []admissionregistrationv1.MutatingWebhook{{
					Name: hook.name + ".example.com", ClientConfig: admissionregistrationv1.WebhookClientConfig{URL: ws.url(hook.path), CABundle: s.cp.Certs.CA.CertPEM},
					Rules: rule(opsDelete, "", "configmaps"), FailurePolicy: &policyIgnore, NamespaceSelector: nsSelector(hook.ns),
					SideEffects: &sideEffectsNone, AdmissionReviewVersions: []string{"v1"},
				}},
			}, metav1.CreateOptions{})
			if err != nil {
				t.Fatal(err)
			}
		}
		i := 0
		createUntil(t, "a delete reaching the mutating webhook", func() error {
			i++
			name := fmt.Sprintf("d%d", i)
			if _, err := cs.CoreV1().ConfigMaps("delete-seen").Create(ctx, configMap(name, nil), metav1.CreateOptions{}); err != nil {
				return err
			}
			return cs.CoreV1().ConfigMaps("delete-seen").Delete(ctx, name, metav1.DeleteOptions{})
		}, func(err error) bool { return err == nil && ws.count("/delete-seen") > 0 })
		if got, _ := ws.seen.Load("/delete-seen"); got != fmt.Sprintf(`DELETE old=d%d object=""`, i) {
			t.Errorf("webhook saw %v, want DELETE with the old object and no object", got)
		}
		// A patch on a delete fails the request whatever the failure
		// policy, in kube's words, and the object stays.
		want := `Internal error occurred: admission webhook "delete-patch.example.com" attempted to modify the object, which is not supported for this operation`
		createUntil(t, "a patching delete webhook refused", func() error {
			// Until the webhook is in effect the delete succeeds: make it again.
			if _, err := cs.CoreV1().ConfigMaps("delete-patch").Create(ctx, configMap("keep", nil), metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
				return err
			}
			return cs.CoreV1().ConfigMaps("delete-patch").Delete(ctx, "keep", metav1.DeleteOptions{})
		}, func(err error) bool { return err != nil && err.Error() == want && apierrors.IsInternalError(err) })
		if _, err := cs.CoreV1().ConfigMaps("delete-patch").Get(ctx, "keep", metav1.GetOptions{}); err != nil {
			t.Errorf("object deleted despite the refused patch: %v", err)
		}
	})

	t.Run("dry run reaches webhooks without side effects, flagged", func(t *testing.T) {
		testNamespace(t, cs, "dryrun", nil)
		none := validatingHook("none.example.com", ws.url("/allow"), "dryrun", rule(opsCreate, "", "configmaps"), policyFail)
		onDry := validatingHook("none-on-dry-run.example.com", ws.url("/allow-some"), "dryrun", rule(opsCreate, "", "configmaps"), policyFail)
		noneOnDryRun := admissionregistrationv1.SideEffectClassNoneOnDryRun
		onDry.SideEffects = &noneOnDryRun
		createValidating(t, s, cs, "dryrun", none, onDry)
		// v1 rejects the side-effect classes that cannot be dry-run.
		bad := validatingHook("some.example.com", ws.url("/allow"), "dryrun", rule(opsCreate, "", "secrets"), policyFail)
		bad.SideEffects = &sideEffectsSome
		bad.ClientConfig.CABundle = s.cp.Certs.CA.CertPEM
		_, err := cs.AdmissionregistrationV1().ValidatingWebhookConfigurations().Create(ctx, &admissionregistrationv1.ValidatingWebhookConfiguration{
			ObjectMeta: metav1.ObjectMeta{Name: "some"}, Webhooks: []admissionregistrationv1.ValidatingWebhook{bad}}, metav1.CreateOptions{})
		if !apierrors.IsInvalid(err) {
			t.Errorf("sideEffects Some: got %v, want Invalid", err)
		}
		dry := metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}}
		// Earlier cases called /allow too: wait for calls made by this
		// create, once the new configuration has reached the dispatcher.
		allowBefore, someBefore := ws.count("/allow"), ws.count("/allow-some")
		createUntil(t, "dry run reaching both webhooks", func() error {
			_, err := cs.CoreV1().ConfigMaps("dryrun").Create(ctx, configMap("c", nil), dry)
			return err
		}, func(err error) bool {
			return err == nil && ws.count("/allow") > allowBefore && ws.count("/allow-some") > someBefore
		})
		for _, p := range []string{"/allow", "/allow-some"} {
			if v, _ := ws.dryRuns.Load(p + " c"); v != true {
				t.Errorf("%s: request.dryRun = %v, want true", p, v)
			}
		}
		if _, err := cs.CoreV1().ConfigMaps("dryrun").Get(ctx, "c", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			t.Errorf("dry-run object stored: %v", err)
		}
		if _, err := cs.CoreV1().ConfigMaps("dryrun").Create(ctx, configMap("real", nil), metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		if v, _ := ws.dryRuns.Load("/allow real"); v != false {
			t.Errorf("real request: request.dryRun = %v, want false", v)
		}
	})
}

func TestAdmissionBuiltinPlugins(t *testing.T) {
	s := startControlPlane(t, "")
	wc := &warningCollector{}
	cs := clientWithWarnings(t, s, wc)
	ctx := context.Background()

	t.Run("ServiceAccount, DefaultTolerationSeconds and Priority fill pods", func(t *testing.T) {
		testNamespace(t, cs, "plugins", nil)
		pod, err := cs.CoreV1().Pods("plugins").Create(ctx, simplePod("p", nil), metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if pod.Spec.ServiceAccountName != "default" {
			t.Errorf("serviceAccountName = %q", pod.Spec.ServiceAccountName)
		}
		var vol *corev1.Volume
		for i := range pod.Spec.Volumes {
			if strings.HasPrefix(pod.Spec.Volumes[i].Name, "kube-api-access-") {
				vol = &pod.Spec.Volumes[i]
			}
		}
		if vol == nil || vol.Projected == nil || len(vol.Projected.Sources) != 3 ||
			vol.Projected.Sources[0].ServiceAccountToken == nil || vol.Projected.Sources[1].ConfigMap.Name != "kube-root-ca.crt" ||
			vol.Projected.Sources[2].DownwardAPI.Items[0].FieldRef.FieldPath != "metadata.namespace" {
			t.Fatalf("projected API access volume: %+v", pod.Spec.Volumes)
		}
		m := pod.Spec.Containers[0].VolumeMounts
		if len(m) != 1 || m[0].Name != vol.Name || m[0].MountPath != "/var/run/secrets/kubernetes.io/serviceaccount" || !m[0].ReadOnly {
			t.Errorf("mounts: %+v", m)
		}
		tol := map[string]int64{}
		for _, tl := range pod.Spec.Tolerations {
			if tl.TolerationSeconds != nil && tl.Effect == corev1.TaintEffectNoExecute {
				tol[tl.Key] = *tl.TolerationSeconds
			}
		}
		if tol["node.kubernetes.io/not-ready"] != 300 || tol["node.kubernetes.io/unreachable"] != 300 {
			t.Errorf("tolerations: %+v", pod.Spec.Tolerations)
		}
		if pod.Spec.Priority == nil || *pod.Spec.Priority != 0 {
			t.Errorf("priority: %v", pod.Spec.Priority)
		}
		noMount := simplePod("nomount", nil)
		f := false
		noMount.Spec.AutomountServiceAccountToken = &f
		pod, err = cs.CoreV1().Pods("plugins").Create(ctx, noMount, metav1.CreateOptions{})
		if err != nil || len(pod.Spec.Volumes) != 0 {
			t.Errorf("automount false: %v %+v", err, pod.Spec.Volumes)
		}
		crit := simplePod("critical", nil)
		crit.Spec.PriorityClassName = "system-cluster-critical"
		pod, err = cs.CoreV1().Pods("plugins").Create(ctx, crit, metav1.CreateOptions{})
		if err != nil || pod.Spec.Priority == nil || *pod.Spec.Priority != 2000000000 {
			t.Errorf("system-cluster-critical: %v %v", err, pod.Spec.Priority)
		}
		missing := simplePod("missing", nil)
		missing.Spec.PriorityClassName = "nope"
		_, err = cs.CoreV1().Pods("plugins").Create(ctx, missing, metav1.CreateOptions{})
		if !apierrors.IsForbidden(err) || !strings.Contains(err.Error(), "no PriorityClass with name nope was found") {
			t.Errorf("missing class: %v", err)
		}
	})

	t.Run("PodSecurity restricted rejects a privileged pod in kube's words", func(t *testing.T) {
		testNamespace(t, cs, "restricted", map[string]string{"pod-security.kubernetes.io/enforce": "restricted"})
		testNamespace(t, cs, "warned", map[string]string{"pod-security.kubernetes.io/warn": "baseline"})
		priv := simplePod("priv", nil)
		yes := true
		priv.Spec.Containers[0].SecurityContext = &corev1.SecurityContext{Privileged: &yes}
		_, err := cs.CoreV1().Pods("restricted").Create(ctx, priv.DeepCopy(), metav1.CreateOptions{})
		want := `pods "priv" is forbidden: violates PodSecurity "restricted:latest": privileged (container "c" must not set securityContext.privileged=true), ` +
			`allowPrivilegeEscalation != false (container "c" must set securityContext.allowPrivilegeEscalation=false), ` +
			`unrestricted capabilities (container "c" must set securityContext.capabilities.drop=["ALL"]), ` +
			`runAsNonRoot != true (pod or container "c" must set securityContext.runAsNonRoot=true), ` +
			`seccompProfile (pod or container "c" must set securityContext.seccompProfile.type to "RuntimeDefault" or "Localhost")`
		if !apierrors.IsForbidden(err) || err.Error() != want {
			t.Errorf("got  %v\nwant %s", err, want)
		}
		if _, err := cs.CoreV1().Pods("warned").Create(ctx, priv.DeepCopy(), metav1.CreateOptions{}); err != nil {
			t.Fatalf("warn only: %v", err)
		}
		if !strings.Contains(wc.all(), `would violate PodSecurity "baseline:latest": privileged (container "c" must not set securityContext.privileged=true)`) {
			t.Errorf("warning missing: %q", wc.all())
		}

		// A workload is not denied (its pods will be) but warned about, in
		// the enforcing namespace too; an unchanged template is not again.
		wcDep := &warningCollector{}
		csDep := clientWithWarnings(t, s, wcDep)
		dep := deployment("priv-dep", 1)
		dep.Spec.Template.Spec.Containers[0].SecurityContext = &corev1.SecurityContext{Privileged: &yes}
		created, err := csDep.AppsV1().Deployments("restricted").Create(ctx, dep, metav1.CreateOptions{})
		if err != nil {
			t.Fatalf("deployment with a privileged template: %v", err)
		}
		want = `would violate PodSecurity "restricted:latest": privileged (container "c" must not set securityContext.privileged=true)`
		if got := wcDep.all(); !strings.HasPrefix(got, want) {
			t.Errorf("deployment warning: %q, want it to start %q", got, want)
		}
		wcDep.mu.Lock()
		wcDep.msgs = nil
		wcDep.mu.Unlock()
		created.Labels = map[string]string{"touched": "yes"}
		if _, err := csDep.AppsV1().Deployments("restricted").Update(ctx, created, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
		if got := wcDep.all(); got != "" {
			t.Errorf("unchanged template warned again: %q", got)
		}
	})

	t.Run("ResourceQuota pods=1 rejects the second pod", func(t *testing.T) {
		testNamespace(t, cs, "quota", nil)
		createQuota(t, cs, "quota", &corev1.ResourceQuota{ObjectMeta: metav1.ObjectMeta{Name: "q"},
			Spec: corev1.ResourceQuotaSpec{Hard: corev1.ResourceList{"pods": resourceQty("1")}}})
		if _, err := cs.CoreV1().Pods("quota").Create(ctx, simplePod("first", nil), metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		_, err := cs.CoreV1().Pods("quota").Create(ctx, simplePod("second", nil), metav1.CreateOptions{})
		want := `pods "second" is forbidden: exceeded quota: q, requested: pods=1, used: pods=1, limited: pods=1`
		if !apierrors.IsForbidden(err) || err.Error() != want {
			t.Errorf("got %v, want %s", err, want)
		}
		q, err := cs.CoreV1().ResourceQuotas("quota").Get(ctx, "q", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if used := q.Status.Used["pods"]; used.String() != "1" {
			t.Errorf("status.used = %v", q.Status.Used)
		}
	})

	t.Run("ValidatingAdmissionPolicy denies replicas > 5", func(t *testing.T) {
		testNamespace(t, cs, "vap", nil)
		_, err := cs.AdmissionregistrationV1().ValidatingAdmissionPolicies().Create(ctx, &admissionregistrationv1.ValidatingAdmissionPolicy{
			ObjectMeta: metav1.ObjectMeta{Name: "max-replicas"},
			Spec: admissionregistrationv1.ValidatingAdmissionPolicySpec{
				MatchConstraints: &admissionregistrationv1.MatchResources{ResourceRules: []admissionregistrationv1.NamedRuleWithOperations{{
					RuleWithOperations: rule(opsCreateUpdate, "apps", "deployments")[0]}}},
				Validations: []admissionregistrationv1.Validation{{Expression: "object.spec.replicas <= 5"},
					{Expression: "object.metadata.name != 'forbidden'", MessageExpression: "'name ' + object.metadata.name + ' is reserved'"}},
			},
		}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		_, err = cs.AdmissionregistrationV1().ValidatingAdmissionPolicyBindings().Create(ctx, &admissionregistrationv1.ValidatingAdmissionPolicyBinding{
			ObjectMeta: metav1.ObjectMeta{Name: "max-replicas-binding"},
			Spec: admissionregistrationv1.ValidatingAdmissionPolicyBindingSpec{PolicyName: "max-replicas",
				ValidationActions: []admissionregistrationv1.ValidationAction{admissionregistrationv1.Deny},
				MatchResources:    &admissionregistrationv1.MatchResources{NamespaceSelector: nsSelector("vap")}},
		}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		err = createUntil(t, "denied deployment", func() error {
			_, err := cs.AppsV1().Deployments("vap").Create(ctx, deployment("big", 6), metav1.CreateOptions{})
			return err
		}, func(err error) bool { return err != nil })
		want := "ValidatingAdmissionPolicy 'max-replicas' with binding 'max-replicas-binding' denied request: failed expression: object.spec.replicas <= 5"
		if !apierrors.IsInvalid(err) || err.Error() != want {
			t.Errorf("got %v, want %s", err, want)
		}
		if _, err := cs.AppsV1().Deployments("vap").Create(ctx, deployment("small", 5), metav1.CreateOptions{}); err != nil {
			t.Errorf("5 replicas: %v", err)
		}
		_, err = cs.AppsV1().Deployments("vap").Create(ctx, deployment("forbidden", 1), metav1.CreateOptions{})
		if err == nil || !strings.HasSuffix(err.Error(), "denied request: name forbidden is reserved") {
			t.Errorf("messageExpression: %v", err)
		}
		// Scaling past the limit by update is denied as well.
		d, err := cs.AppsV1().Deployments("vap").Get(ctx, "small", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		d.Spec.Replicas = ptrTo(int32(9))
		if _, err := cs.AppsV1().Deployments("vap").Update(ctx, d, metav1.UpdateOptions{}); err == nil || err.Error() != want {
			t.Errorf("update: %v", err)
		}
		// Outside the bound namespaces the policy does not apply.
		testNamespace(t, cs, "vap-free", nil)
		if _, err := cs.AppsV1().Deployments("vap-free").Create(ctx, deployment("big", 6), metav1.CreateOptions{}); err != nil {
			t.Errorf("unbound namespace: %v", err)
		}
	})
}

// ValidatingAdmissionPolicy params: a ConfigMap named by the binding (or
// picked by a label selector in the request's namespace) feeds "params";
// a missing one denies or allows as parameterNotFoundAction says.
func TestAdmissionPolicyParams(t *testing.T) {
	s := startControlPlane(t, "")
	cs := s.clientset(t, false)
	ctx := context.Background()
	testNamespace(t, cs, "vap-named", nil)
	testNamespace(t, cs, "vap-selected", nil)
	_, err := cs.AdmissionregistrationV1().ValidatingAdmissionPolicies().Create(ctx, &admissionregistrationv1.ValidatingAdmissionPolicy{
		ObjectMeta: metav1.ObjectMeta{Name: "replica-limit"},
		Spec: admissionregistrationv1.ValidatingAdmissionPolicySpec{
			ParamKind: &admissionregistrationv1.ParamKind{APIVersion: "v1", Kind: "ConfigMap"},
			MatchConstraints: &admissionregistrationv1.MatchResources{ResourceRules: []admissionregistrationv1.NamedRuleWithOperations{{
				RuleWithOperations: rule(opsCreateUpdate, "apps", "deployments")[0]}}},
			Validations: []admissionregistrationv1.Validation{{Expression: "object.spec.replicas <= int(params.data.maxReplicas)",
				MessageExpression: "'at most ' + params.data.maxReplicas + ' replicas (' + params.metadata.name + ')'"}},
		},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	deny := admissionregistrationv1.DenyAction
	allow := admissionregistrationv1.AllowAction
	for _, b := range []admissionregistrationv1.ValidatingAdmissionPolicyBinding{
		{ObjectMeta: metav1.ObjectMeta{Name: "named"}, Spec: admissionregistrationv1.ValidatingAdmissionPolicyBindingSpec{
			PolicyName: "replica-limit", ValidationActions: []admissionregistrationv1.ValidationAction{admissionregistrationv1.Deny},
			ParamRef:       &admissionregistrationv1.ParamRef{Name: "limits", Namespace: "default", ParameterNotFoundAction: &deny},
			MatchResources: &admissionregistrationv1.MatchResources{NamespaceSelector: nsSelector("vap-named")}}},
		{ObjectMeta: metav1.ObjectMeta{Name: "selected"}, Spec: admissionregistrationv1.ValidatingAdmissionPolicyBindingSpec{
			PolicyName: "replica-limit", ValidationActions: []admissionregistrationv1.ValidationAction{admissionregistrationv1.Deny},
			ParamRef: &admissionregistrationv1.ParamRef{ParameterNotFoundAction: &allow,
				Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"limits": "replicas"}}},
			MatchResources: &admissionregistrationv1.MatchResources{NamespaceSelector: nsSelector("vap-selected")}}},
	} {
		if _, err := cs.AdmissionregistrationV1().ValidatingAdmissionPolicyBindings().Create(ctx, &b, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	i := 0
	create := func(ns string, replicas int32) error {
		i++
		_, err := cs.AppsV1().Deployments(ns).Create(ctx, deployment(fmt.Sprintf("d%d", i), replicas), metav1.CreateOptions{})
		return err
	}

	// Named param, absent, Deny.
	want := "ValidatingAdmissionPolicy 'replica-limit' with binding 'named' denied request: failed to configure binding: no params found for policy binding with `Deny` parameterNotFoundAction"
	err = createUntil(t, "denied for want of params", func() error { return create("vap-named", 1) },
		func(err error) bool { return err != nil })
	if !apierrors.IsInvalid(err) || err.Error() != want {
		t.Errorf("got %v, want %s", err, want)
	}
	if _, err := cs.CoreV1().ConfigMaps("default").Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "limits"},
		Data: map[string]string{"maxReplicas": "3"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	createUntil(t, "allowed within the param's limit", func() error { return create("vap-named", 3) },
		func(err error) bool { return err == nil })
	err = create("vap-named", 4)
	if want := "ValidatingAdmissionPolicy 'replica-limit' with binding 'named' denied request: at most 3 replicas (limits)"; err == nil || err.Error() != want {
		t.Errorf("over the limit: got %v, want %s", err, want)
	}

	// Selected params in the request's namespace: none is allowed; each
	// one found must pass.
	if err := create("vap-selected", 9); err != nil {
		t.Errorf("no params, parameterNotFoundAction Allow: %v", err)
	}
	for name, max := range map[string]string{"loose": "8", "strict": "2"} {
		if _, err := cs.CoreV1().ConfigMaps("vap-selected").Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name,
			Labels: map[string]string{"limits": "replicas"}}, Data: map[string]string{"maxReplicas": max}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	err = createUntil(t, "the strictest selected param applies", func() error { return create("vap-selected", 5) },
		func(err error) bool { return err != nil })
	if want := "ValidatingAdmissionPolicy 'replica-limit' with binding 'selected' denied request: at most 2 replicas (strict)"; err.Error() != want {
		t.Errorf("got %v, want %s", err, want)
	}
	if err := create("vap-selected", 2); err != nil {
		t.Errorf("within every param: %v", err)
	}
}

func resourceQty(s string) resource.Quantity { return resource.MustParse(s) }

func ptrTo[T any](v T) *T { return &v }

func deployment(name string, replicas int32) *appsv1.Deployment {
	l := map[string]string{"app": name}
	return &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: appsv1.DeploymentSpec{
		Replicas: &replicas, Selector: &metav1.LabelSelector{MatchLabels: l},
		Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: l},
			Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "busybox"}}}}}}
}

// Policies evaluate with kube's CEL environment: its libraries (quantity,
// regex find, lists, url, ip, semver, format) and the authorizer, which
// asks about the request's user.
func TestAdmissionPolicyKubeCELLibraries(t *testing.T) {
	s := startControlPlane(t, "")
	cs := s.clientset(t, false)
	ctx := context.Background()
	testNamespace(t, cs, "vap-cel", nil)
	_, err := cs.AdmissionregistrationV1().ValidatingAdmissionPolicies().Create(ctx, &admissionregistrationv1.ValidatingAdmissionPolicy{
		ObjectMeta: metav1.ObjectMeta{Name: "kube-cel"},
		Spec: admissionregistrationv1.ValidatingAdmissionPolicySpec{
			MatchConstraints: &admissionregistrationv1.MatchResources{ResourceRules: []admissionregistrationv1.NamedRuleWithOperations{{
				RuleWithOperations: rule(opsCreateUpdate, "", "configmaps")[0]}}},
			Validations: []admissionregistrationv1.Validation{
				{Expression: "!has(object.data.size) || quantity(object.data.size).isLessThan(quantity('1Gi'))", Message: "size under 1Gi"},
				{Expression: "!has(object.data.url) || url(object.data.url).getHost() == 'example.com'", Message: "example.com only"},
				{Expression: "[1, 2, 3].isSorted() && 'v1.2.3'.find('[0-9]+') == '1' && ip('10.0.0.1').family() == 4 && isSemver('1.2.3')",
					Message: "kube's libraries"},
				{Expression: "authorizer.group('').resource('secrets').namespace(object.metadata.namespace).check('list').allowed()",
					MessageExpression: "'%s may not list secrets'.format([request.userInfo.username])"},
				{Expression: "authorizer.requestResource.check('create').allowed()", Message: "may not create it"},
			},
		},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cs.AdmissionregistrationV1().ValidatingAdmissionPolicyBindings().Create(ctx, &admissionregistrationv1.ValidatingAdmissionPolicyBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "kube-cel"},
		Spec: admissionregistrationv1.ValidatingAdmissionPolicyBindingSpec{PolicyName: "kube-cel",
			ValidationActions: []admissionregistrationv1.ValidationAction{admissionregistrationv1.Deny},
			MatchResources:    &admissionregistrationv1.MatchResources{NamespaceSelector: nsSelector("vap-cel")}},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	i := 0
	create := func(client kubernetes.Interface, data map[string]string) error {
		i++
		_, err := client.CoreV1().ConfigMaps("vap-cel").Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprint("cm", i)},
			Data: data}, metav1.CreateOptions{})
		return err
	}
	deniedWith := func(msg string) func(error) bool {
		return func(err error) bool { return err != nil && strings.Contains(err.Error(), msg) }
	}
	createUntil(t, "a size over 1Gi denied", func() error { return create(cs, map[string]string{"size": "2Gi"}) }, deniedWith("size under 1Gi"))
	if err := create(cs, map[string]string{"size": "512Mi", "url": "https://example.com/x"}); err != nil {
		t.Errorf("within every rule, as the admin: %v", err)
	}
	if err := create(cs, map[string]string{"url": "https://other.org/"}); err == nil || !strings.Contains(err.Error(), "example.com only") {
		t.Errorf("another host: %v", err)
	}

	// jane may create config maps but not list secrets.
	s.mustKubectl(t, "create", "role", "cm-writer", "-n", "vap-cel", "--verb=create", "--resource=configmaps")
	s.mustKubectl(t, "create", "rolebinding", "jane-cm", "-n", "vap-cel", "--role=cm-writer", "--user=jane")
	cfg := s.restConfig(false)
	cfg.Impersonate = rest.ImpersonationConfig{UserName: "jane"}
	jane, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	err = createUntil(t, "jane denied by the authorizer check", func() error { return create(jane, map[string]string{"k": "v"}) }, func(err error) bool { return err != nil })
	if !strings.Contains(err.Error(), "jane may not list secrets") || strings.Contains(err.Error(), "may not create it") {
		t.Errorf("jane: %v", err)
	}
	s.mustKubectl(t, "create", "role", "secret-lister", "-n", "vap-cel", "--verb=list", "--resource=secrets")
	s.mustKubectl(t, "create", "rolebinding", "jane-secrets", "-n", "vap-cel", "--role=secret-lister", "--user=jane")
	createUntil(t, "jane allowed once she may list secrets", func() error { return create(jane, map[string]string{"k": "v"}) }, func(err error) bool { return err == nil })
}

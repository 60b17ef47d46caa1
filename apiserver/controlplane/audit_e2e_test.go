package controlplane_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	auditv1 "k8s.io/apiserver/pkg/apis/audit/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/devplane/devplane/apiserver/audit"
	"github.com/devplane/devplane/apiserver/controlplane"
	"github.com/devplane/devplane/apiserver/controlplane/controlplanetest"
)

// auditTestdata is the path of a file under testdata/audit.
func auditTestdata(name string) string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..", "testdata", "audit", name)
}

// TestAuditLogMatchesKube runs testdata/audit/session.sh (kubectl) against
// devplane with testdata/audit/policy.yaml and compares the audit log with
// kube-apiserver's for the same session (kube-events.jsonl, made by
// regenerate.sh): event by event, in order, the level, stage, verb, URI,
// user and impersonated user, objectRef, responseStatus, whether request
// and response objects are there, and the authorization decision.
func TestAuditLogMatchesKube(t *testing.T) {
	dir := t.TempDir()
	tokens := filepath.Join(dir, "tokens.csv")
	if err := os.WriteFile(tokens, []byte("admintoken,admin,admin,system:masters\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	logPath := filepath.Join(dir, "audit.log")
	s := startControlPlaneWith(t, controlplane.Options{
		TokenAuthFile: tokens,
		Audit:         audit.Options{PolicyFile: auditTestdata("policy.yaml"), LogPath: logPath},
	})
	kubeconfig := filepath.Join(dir, "kubeconfig")
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["devplane"] = &clientcmdapi.Cluster{Server: s.cp.URL(), CertificateAuthorityData: s.cp.Certs.CA.CertPEM}
	cfg.AuthInfos["admin"] = &clientcmdapi.AuthInfo{Token: "admintoken"}
	cfg.Contexts["devplane"] = &clientcmdapi.Context{Cluster: "devplane", AuthInfo: "admin"}
	cfg.CurrentContext = "devplane"
	if err := clientcmd.WriteToFile(*cfg, kubeconfig); err != nil {
		t.Fatal(err)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "sh", auditTestdata("session.sh"))
	cmd.Env = append(os.Environ(), "KUBECONFIG="+kubeconfig, "HOME="+dir)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("session.sh: %v\n%s", err, out)
	}
	s.stop() // the log is complete once requests have drained

	got := readAuditEvents(t, logPath)
	want := readAuditEvents(t, auditTestdata("kube-events.jsonl"))
	n := max(len(got), len(want))
	mismatches := 0
	for i := 0; i < n && mismatches < 5; i++ {
		var g, w string
		if i < len(got) {
			g = got[i]
		}
		if i < len(want) {
			w = want[i]
		}
		if g != w {
			mismatches++
			t.Errorf("event %d differs from kube-apiserver's:\n devplane: %s\n     kube: %s", i, g, w)
		}
	}
	if len(got) != len(want) {
		t.Errorf("devplane wrote %d events, kube-apiserver %d", len(got), len(want))
	}
}

// readAuditEvents reads a JSON-lines audit log, each event reduced to the
// compared fields (as one JSON line, keys sorted).
func readAuditEvents(t *testing.T, path string) []string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(nil, 16<<20)
	for sc.Scan() {
		if len(bytes.TrimSpace(sc.Bytes())) == 0 {
			continue
		}
		var ev map[string]any
		if err := json.Unmarshal(sc.Bytes(), &ev); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		if ev["kind"] != "Event" || ev["apiVersion"] != "audit.k8s.io/v1" {
			t.Fatalf("%s: not an audit.k8s.io/v1 Event: %s", path, sc.Text())
		}
		out = append(out, comparedFields(ev))
	}
	return out
}

// comparedFields keeps what the two servers must agree on; values that
// change from run to run (uids, resourceVersions, bodies) count only by
// being there.
func comparedFields(ev map[string]any) string {
	set := func(m map[string]any, key string) {
		if v, ok := m[key]; ok && v != nil && v != "" {
			m[key] = "<set>"
		}
	}
	kept := map[string]any{}
	for _, k := range []string{"level", "stage", "verb", "requestURI", "user", "impersonatedUser", "objectRef", "responseStatus", "requestObject", "responseObject"} {
		if v, ok := ev[k]; ok {
			kept[k] = v
		}
	}
	set(kept, "requestObject")
	set(kept, "responseObject")
	if ref, ok := kept["objectRef"].(map[string]any); ok {
		set(ref, "uid")
		set(ref, "resourceVersion")
	}
	if st, ok := kept["responseStatus"].(map[string]any); ok {
		if d, ok := st["details"].(map[string]any); ok {
			set(d, "uid")
		}
	}
	if ann, ok := ev["annotations"].(map[string]any); ok {
		kept["decision"] = ann[audit.AnnotationDecision]
	}
	b, err := json.Marshal(kept)
	if err != nil {
		return fmt.Sprint(kept)
	}
	return strings.TrimSpace(string(b))
}

// TestTrafficSummaryCounts checks the dashboard's data source against a
// real devplane: after 20 requests of one client, 5 of them failing, and
// with one of its watches open, the last minute's summary counts them.
func TestTrafficSummaryCounts(t *testing.T) {
	s := startControlPlane(t, "")
	cfg := s.cp.RESTConfig()
	cfg.UserAgent = "summary-test/1.0"
	cs := kubernetes.NewForConfigOrDie(cfg)
	ctx := testCtx(t)
	for i := range 20 {
		name := "kube-root-ca.crt"
		if i%4 == 0 {
			name = "missing"
		}
		_, _ = cs.CoreV1().ConfigMaps("default").Get(ctx, name, metav1.GetOptions{})
	}
	watchers := s.cp.Auditor().OpenWatches()
	w, err := cs.CoreV1().ConfigMaps("default").Watch(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	controlplanetest.Eventually(t, 10*time.Second, "the watch counted", func() (bool, string) {
		n := s.cp.Auditor().OpenWatches()
		return n > watchers, fmt.Sprintf("%d open watches, %d before", n, watchers)
	})

	sum := s.cp.Auditor().Summarize(time.Now(), time.Minute, 100)
	var ours *audit.Caller
	for i, c := range sum.TopCallers {
		if c.Who == "devplane-admin (summary-test)" {
			ours = &sum.TopCallers[i]
		}
	}
	if ours == nil || ours.Requests != 20 || ours.Errors != 5 {
		t.Fatalf("the client's share: %+v, want 20 requests, 5 errors (callers: %+v)", ours, sum.TopCallers)
	}
	if sum.Requests < 20 || sum.Errors < 5 || sum.PerSecond < 20.0/60 || sum.P99 <= 0 {
		t.Errorf("summary %+v does not count the client's requests", sum)
	}
}

// TestAuditWebhookReceivesBatches points --audit-webhook-config-file at
// a local server: kube's webhook backend, batched (a batch a second at
// most), posts audit.k8s.io/v1 EventLists that hold a request made with
// a chosen Audit-Id.
func TestAuditWebhookReceivesBatches(t *testing.T) {
	received := make(chan []byte, 100)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		select {
		case received <- body:
		default:
		}
		w.WriteHeader(http.StatusOK)
	}))
	t.Cleanup(srv.Close) // after devplane's stop, which delivers what its backend holds
	dir := t.TempDir()
	hookConfig := filepath.Join(dir, "webhook.kubeconfig")
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["sink"] = &clientcmdapi.Cluster{Server: srv.URL}
	cfg.Contexts["sink"] = &clientcmdapi.Context{Cluster: "sink"}
	cfg.CurrentContext = "sink"
	if err := clientcmd.WriteToFile(*cfg, hookConfig); err != nil {
		t.Fatal(err)
	}
	policy := filepath.Join(dir, "policy.yaml")
	if err := os.WriteFile(policy, []byte("apiVersion: audit.k8s.io/v1\nkind: Policy\nrules:\n- level: Metadata\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	opts := audit.NewOptions()
	opts.PolicyFile, opts.WebhookConfigFile = policy, hookConfig
	opts.WebhookBatch.MaxWait = time.Second
	s := startControlPlaneWith(t, controlplane.Options{Audit: opts})

	const id = "0b9e7d1e-webhook-test"
	req, err := http.NewRequest(http.MethodGet, s.cp.URL()+"/api/v1/namespaces/default", nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set(audit.HeaderAuditID, id)
	resp, err := s.client(t, true).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if got := resp.Header.Get(audit.HeaderAuditID); got != id {
		t.Fatalf("Audit-Id %q echoed as %q", id, got)
	}
	deadline := time.After(30 * time.Second)
	stages := map[string]bool{}
	for !stages["RequestReceived"] || !stages["ResponseComplete"] {
		select {
		case body := <-received:
			var list struct {
				Kind, APIVersion string
				Items            []struct {
					AuditID, Stage string
				}
			}
			if err := json.Unmarshal(body, &list); err != nil || list.Kind != "EventList" || list.APIVersion != "audit.k8s.io/v1" {
				t.Fatalf("the webhook got %v, not an audit.k8s.io/v1 EventList: %.300s", err, body)
			}
			for _, ev := range list.Items {
				if ev.AuditID == id {
					stages[ev.Stage] = true
				}
			}
		case <-deadline:
			t.Fatalf("the webhook got no RequestReceived and ResponseComplete for %s within 30s (got %v)", id, stages)
		}
	}

	// A webhook gone dead does not hold a stop for its retries' back-off.
	srv.Close()
	if resp, err := s.client(t, true).Get(s.cp.URL() + "/api/v1/namespaces"); err == nil {
		resp.Body.Close()
	}
	start := time.Now()
	s.stop()
	if took := time.Since(start); took > 15*time.Second {
		t.Errorf("stopping took %s with the audit webhook gone", took)
	}
}

// TestAuditLogTruncatesOversizedEvents: with --audit-log-truncate-enabled,
// kube's truncating backend writes an event larger than
// --audit-log-truncate-max-event-size without its request and response
// objects, marked with the audit.k8s.io/truncated annotation, and leaves
// smaller events whole.
func TestAuditLogTruncatesOversizedEvents(t *testing.T) {
	dir := t.TempDir()
	policy := filepath.Join(dir, "policy.yaml")
	if err := os.WriteFile(policy, []byte("apiVersion: audit.k8s.io/v1\nkind: Policy\nomitStages: [RequestReceived]\nrules:\n"+
		"- level: RequestResponse\n  resources: [{group: \"\", resources: [configmaps]}]\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	opts := audit.NewOptions()
	opts.PolicyFile, opts.LogPath = policy, filepath.Join(dir, "audit.log")
	opts.LogTruncate = audit.TruncateOptions{Enabled: true, MaxEventSize: 16 << 10, MaxBatchSize: 1 << 20}
	s := startControlPlaneWith(t, controlplane.Options{Audit: opts})
	cs := s.clientset(t, true)
	ctx := context.Background()
	for name, size := range map[string]int{"small": 100, "large": 64 << 10} {
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name}, Data: map[string]string{"blob": strings.Repeat("x", size)}}
		if _, err := cs.CoreV1().ConfigMaps("default").Create(ctx, cm, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	data, err := os.ReadFile(opts.LogPath)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for line := range strings.Lines(string(data)) {
		var ev auditv1.Event
		if err := json.Unmarshal([]byte(line), &ev); err != nil {
			t.Fatalf("audit log line %.200q: %v", line, err)
		}
		if ev.Verb != "create" || ev.ObjectRef == nil || ev.ObjectRef.Resource != "configmaps" {
			continue
		}
		name := ev.ObjectRef.Name
		seen[name] = true
		truncated := ev.Annotations["audit.k8s.io/truncated"] == "true"
		whole := ev.RequestObject != nil && ev.ResponseObject != nil
		switch {
		case name == "large" && (!truncated || ev.RequestObject != nil || ev.ResponseObject != nil):
			t.Errorf("the 64 KiB create's event (%d bytes): annotations %v, request object %v, response object %v; want it truncated",
				len(line), ev.Annotations, ev.RequestObject != nil, ev.ResponseObject != nil)
		case name == "small" && (truncated || !whole):
			t.Errorf("the small create's event: annotations %v, whole %v; want it untouched", ev.Annotations, whole)
		}
		if len(line) > 16<<10 {
			t.Errorf("an event of %d bytes was written, above the 16 KiB bound", len(line))
		}
	}
	if !seen["small"] || !seen["large"] {
		t.Errorf("create events seen for %v, want small and large", seen)
	}
}

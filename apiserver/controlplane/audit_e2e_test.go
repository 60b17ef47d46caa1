package controlplane_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/devplane/devplane/apiserver/audit"
	"github.com/devplane/devplane/apiserver/controlplane"
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

package cli_test

import (
	"bufio"
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	auditv1 "k8s.io/apiserver/pkg/apis/audit/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/devplane/devplane/apiserver/audit"
	"github.com/devplane/devplane/apiserver/testenv"
	"github.com/devplane/devplane/cli"
)

// TestRequestsShowsRecentRequests drives a real devplane, then reads its
// recent requests with devplane requests: the table and its filters, an
// injected fault and a 404 among the failures, -o json as audit Events
// carrying the Audit-Id the client was given, --top's repeated LISTs, and
// the endpoint refused to anyone but cluster admins.
func TestRequestsShowsRecentRequests(t *testing.T) {
	env := testenv.StartT(t, testenv.Options{})
	kc := env.KubeconfigPath()
	cfg := env.Config()
	cfg.UserAgent = "poller/1.0"
	cfg.WarningHandler = rest.NoWarnings{}
	c := kubernetes.NewForConfigOrDie(cfg)
	ctx := t.Context()

	if _, err := c.CoreV1().ConfigMaps("default").Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "seen"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	for range 6 {
		if _, err := c.CoreV1().ConfigMaps("default").List(ctx, metav1.ListOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := c.CoreV1().ConfigMaps("default").Get(ctx, "missing", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Fatalf("get missing: %v", err)
	}
	if out, err := devplaneIn(t, "fault", "add", "--kubeconfig", kc, "--verb", "get", "--resource", "configmaps",
		"--error", "503", "--times", "1", "get-fails"); err != nil {
		t.Fatalf("fault add: %v %s", err, out)
	}
	if _, err := c.CoreV1().ConfigMaps("default").Get(ctx, "seen", metav1.GetOptions{}); !apierrors.IsServiceUnavailable(err) {
		t.Fatalf("get under the fault: %v", err)
	}
	// The Audit-Id a client is given names its request in the record.
	httpClient, err := rest.HTTPClientFor(cfg)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := httpClient.Get(cfg.Host + "/api/v1/namespaces/default/configmaps/seen")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	auditID := resp.Header.Get(audit.HeaderAuditID)
	if resp.StatusCode != http.StatusOK || auditID == "" {
		t.Fatalf("get: %d, Audit-Id %q", resp.StatusCode, auditID)
	}

	out, err := devplaneIn(t, "requests", "--kubeconfig", kc, "--resource", "configmaps", "--failed")
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 3 || !strings.HasPrefix(lines[0], "TIME") {
		t.Fatalf("configmaps that failed: want a header and 2 rows, got:\n%s", out)
	}
	for _, want := range []string{"404", "default/missing"} {
		if !strings.Contains(lines[1], want) {
			t.Errorf("first failure %q lacks %q", lines[1], want)
		}
	}
	for _, want := range []string{"503", "default/seen", "fault get-fails", "(poller)"} {
		if !strings.Contains(lines[2], want) {
			t.Errorf("second failure %q lacks %q", lines[2], want)
		}
	}

	out, err = devplaneIn(t, "requests", "--kubeconfig", kc, "--verb", "get", "-n", "default", "-o", "json")
	if err != nil {
		t.Fatal(err)
	}
	found := false
	sc := bufio.NewScanner(strings.NewReader(out))
	for sc.Scan() {
		var ev auditv1.Event
		if err := json.Unmarshal(sc.Bytes(), &ev); err != nil || ev.Kind != "Event" || ev.APIVersion != "audit.k8s.io/v1" {
			t.Fatalf("-o json line is not an audit Event (%v): %s", err, sc.Text())
		}
		if ev.Verb != "get" || ev.ObjectRef == nil || ev.ObjectRef.Namespace != "default" {
			t.Errorf("the filters let through %s %+v", ev.Verb, ev.ObjectRef)
		}
		if string(ev.AuditID) == auditID {
			found = true
			if ev.Stage != auditv1.StageResponseComplete || ev.Level != auditv1.LevelMetadata ||
				ev.ResponseStatus == nil || ev.ResponseStatus.Code != 200 || ev.Annotations[audit.AnnotationDecision] != "allow" {
				t.Errorf("the recorded request: %+v", ev)
			}
		}
	}
	if !found {
		t.Errorf("no event with the Audit-Id %s the client was given:\n%s", auditID, out)
	}

	out, err = devplaneIn(t, "requests", "--kubeconfig", kc, "--top")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, "(poller)") || !strings.Contains(out, "configmaps in default: 6 lists") {
		t.Errorf("--top does not flag poller's 6 lists of configmaps:\n%s", out)
	}

	// Only cluster admins may read the endpoint.
	nobody := kubernetes.NewForConfigOrDie(env.ConfigFor("nobody"))
	_, err = nobody.CoreV1().RESTClient().Get().AbsPath(audit.RecentPath).DoRaw(ctx)
	if !apierrors.IsForbidden(err) {
		t.Errorf("a user without rights read %s: %v", audit.RecentPath, err)
	}
}

// TestRequestsFollow checks -f: requests made after it started are
// printed as they end.
func TestRequestsFollow(t *testing.T) {
	env := testenv.StartT(t, testenv.Options{})
	cfg := env.Config()
	cfg.UserAgent = "follow-test/1.0"
	c := kubernetes.NewForConfigOrDie(cfg)

	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	out := &outputBuffer{}
	app := cli.NewApp()
	app.Writer, app.ErrWriter = out, out
	done := make(chan error, 1)
	go func() {
		done <- app.RunContext(ctx, []string{"devplane", "requests", "--kubeconfig", env.KubeconfigPath(), "-f", "--user", "follow-test"})
	}()
	for i := 0; ; i++ {
		// Until the follower is attached, a create may end before it:
		// make new ones until one shows.
		name := "followed-" + string(rune('a'+i%26))
		_, _ = c.CoreV1().ConfigMaps("default").Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{GenerateName: name}}, metav1.CreateOptions{})
		if s := out.String(); strings.Contains(s, "create") && strings.Contains(s, "default/followed-") {
			break
		}
		if ctx.Err() != nil {
			t.Fatalf("-f printed no create within 30s:\n%s", out.String())
		}
		time.Sleep(100 * time.Millisecond)
	}
	cancel()
	if err := <-done; err != nil {
		t.Errorf("-f ended with %v", err)
	}
	for _, line := range strings.Split(strings.TrimSpace(out.String()), "\n")[1:] {
		if !strings.Contains(line, "(follow-test)") {
			t.Errorf("--user follow-test let through %q", line)
		}
	}
}

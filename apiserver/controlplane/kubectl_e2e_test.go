package controlplane_test

// End-to-end tests with kubectl v1.32 (/usr/bin/kubectl): tables, watch,
// discovery (issue 3) and apply, server-side apply, diff, patch, edit,
// explain, validation and allocation (issue 4).

import (
	"bufio"
	"context"
	"encoding/json"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// manifest is the path of a file under testdata/manifests.
func manifest(t testing.TB, name string) string {
	t.Helper()
	_, file, _, _ := runtime.Caller(0)
	p := filepath.Join(filepath.Dir(file), "..", "..", "testdata", "manifests", name)
	if _, err := os.Stat(p); err != nil {
		t.Fatal(err)
	}
	return p
}

// writeFile writes content to a new temp file and returns its path.
func writeFile(t testing.TB, name, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(content), 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

// headers returns the header row of a kubectl table, split into columns
// (kubectl separates columns by at least three spaces).
var columnGap = regexp.MustCompile(`\s{2,}`)

func headers(out string) []string {
	first, _, _ := strings.Cut(out, "\n")
	return columnGap.Split(strings.TrimSpace(first), -1)
}

func TestKubectlE2EGet(t *testing.T) {
	s := startControlPlane(t, "")
	ctx := testCtx(t)
	cs := s.clientset(t, false)
	ns := createNamespace(t, cs, "tables")
	// One refused object (reported here) must not hide the other tables.
	if r := s.kubectl(t, nil, "", "create", "-n", ns, "-f", manifest(t, "app.yaml"), "-f", manifest(t, "more-kinds.yaml")); r.Code != 0 {
		t.Errorf("kubectl create of the manifests: exit %d\n%s", r.Code, r.Stderr)
	}
	now := metav1.Now()
	if _, err := cs.CoreV1().Events(ns).Create(ctx, &corev1.Event{
		ObjectMeta:     metav1.ObjectMeta{Name: "standalone.started"},
		InvolvedObject: corev1.ObjectReference{APIVersion: "v1", Kind: "Pod", Namespace: ns, Name: "standalone"},
		Reason:         "Started", Message: "Started container main", Type: corev1.EventTypeNormal,
		Source: corev1.EventSource{Component: "kubelet"}, FirstTimestamp: now, LastTimestamp: now, Count: 1,
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	// Column names of kube-apiserver's server-side printing (-o wide).
	want := map[string]string{
		"pods":                   "NAME|READY|STATUS|RESTARTS|AGE|IP|NODE|NOMINATED NODE|READINESS GATES",
		"deployments":            "NAME|READY|UP-TO-DATE|AVAILABLE|AGE|CONTAINERS|IMAGES|SELECTOR",
		"services":               "NAME|TYPE|CLUSTER-IP|EXTERNAL-IP|PORT(S)|AGE|SELECTOR",
		"configmaps":             "NAME|DATA|AGE",
		"secrets":                "NAME|TYPE|DATA|AGE",
		"namespaces":             "NAME|STATUS|AGE",
		"serviceaccounts":        "NAME|SECRETS|AGE",
		"jobs":                   "NAME|STATUS|COMPLETIONS|DURATION|AGE|CONTAINERS|IMAGES|SELECTOR",
		"cronjobs":               "NAME|SCHEDULE|TIMEZONE|SUSPEND|ACTIVE|LAST SCHEDULE|AGE|CONTAINERS|IMAGES|SELECTOR",
		"ingresses":              "NAME|CLASS|HOSTS|ADDRESS|PORTS|AGE",
		"persistentvolumeclaims": "NAME|STATUS|VOLUME|CAPACITY|ACCESS MODES|STORAGECLASS|VOLUMEATTRIBUTESCLASS|AGE|VOLUMEMODE",
		"statefulsets":           "NAME|READY|AGE|CONTAINERS|IMAGES",
		"daemonsets":             "NAME|DESIRED|CURRENT|READY|UP-TO-DATE|AVAILABLE|NODE SELECTOR|AGE|CONTAINERS|IMAGES|SELECTOR",
		"replicasets":            "NAME|DESIRED|CURRENT|READY|AGE|CONTAINERS|IMAGES|SELECTOR",
		"events":                 "LAST SEEN|TYPE|REASON|OBJECT|SUBOBJECT|SOURCE|MESSAGE|FIRST SEEN|COUNT|NAME",
	}
	for resource, cols := range want {
		t.Run("wide columns of "+resource, func(t *testing.T) {
			args := []string{"get", resource, "-o", "wide"}
			if resource != "namespaces" {
				args = append(args, "-n", ns)
			}
			out := s.mustKubectl(t, args...)
			if got := strings.Join(headers(out), "|"); got != cols {
				t.Errorf("kubectl get %s -o wide columns\n got: %s\nwant: %s\n%s", resource, got, cols, out)
			}
			if strings.Count(strings.TrimSpace(out), "\n") < 1 {
				t.Errorf("no rows:\n%s", out)
			}
		})
	}

	t.Run("one get of every kind", func(t *testing.T) {
		out := s.mustKubectl(t, "get", "pods,deploy,svc,cm,secrets,ns,sa,jobs,cronjobs,ingress,pvc,sts,ds,rs,events", "-o", "wide", "-n", ns)
		for _, row := range []string{"pod/standalone", "deployment.apps/web", "service/web", "configmap/app-config",
			"secret/app-secret", "namespace/" + ns, "serviceaccount/app", "job.batch/migrate", "cronjob.batch/nightly",
			"ingress.networking.k8s.io/web", "persistentvolumeclaim/scratch", "statefulset.apps/db",
			"daemonset.apps/agent", "replicaset.apps/frontend"} {
			if !regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(row) + `\s`).MatchString(out) {
				t.Errorf("no %s row in:\n%s", row, out)
			}
		}
		// The events table ends with its NAME column (-o wide).
		if !regexp.MustCompile(`(?m)\sNormal\s+Started\s+pod/standalone\s.*\sevent/standalone\.started$`).MatchString(out) {
			t.Errorf("no event/standalone.started row in:\n%s", out)
		}
		// Cells come from the server's printers.
		if !regexp.MustCompile(`(?m)^pod/standalone\s+0/1\s+Pending\s+0\s+\S+\s+<none>\s+node-1\s`).MatchString(out) {
			t.Errorf("pod row is not READY 0/1 STATUS Pending RESTARTS 0 ... NODE node-1:\n%s", out)
		}
		if !regexp.MustCompile(`(?m)^cronjob.batch/nightly\s+0 3 \* \* \*\s+<none>\s+False\s+0\s+<none>\s`).MatchString(out) {
			t.Errorf("cronjob row is not SCHEDULE '0 3 * * *' TIMEZONE <none> SUSPEND False ACTIVE 0 LAST SCHEDULE <none>:\n%s", out)
		}
	})

	t.Run("get -w sees ADDED, MODIFIED and DELETED", func(t *testing.T) {
		wctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		defer cancel()
		cmd := exec.CommandContext(wctx, "/usr/bin/kubectl", "--kubeconfig", s.kubeconfigFile(t),
			"get", "configmaps", "-w", "--output-watch-events", "-n", ns)
		stdout, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		cmd.Stderr = os.Stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		defer func() { cancel(); _ = cmd.Wait() }()
		lines := make(chan string, 100)
		go func() {
			sc := bufio.NewScanner(stdout)
			for sc.Scan() {
				lines <- sc.Text()
			}
			close(lines)
		}()
		expect := func(re string) {
			t.Helper()
			pattern := regexp.MustCompile(re)
			var seen []string
			for {
				select {
				case line, ok := <-lines:
					if !ok {
						t.Fatalf("kubectl get -w ended before %q; saw %q", re, seen)
					}
					if pattern.MatchString(line) {
						return
					}
					seen = append(seen, line)
				case <-wctx.Done():
					t.Fatalf("no line matching %q within 30s; saw %q", re, seen)
				}
			}
		}
		expect(`^EVENT\s+NAME\s+DATA\s+AGE$`)
		expect(`^ADDED\s+app-config\s+2\s`) // the initial list
		cms := cs.CoreV1().ConfigMaps(ns)
		cm, err := cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "watched"}}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		expect(`^ADDED\s+watched\s+0\s`)
		cm.Data = map[string]string{"a": "1"}
		if _, err := cms.Update(ctx, cm, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
		expect(`^MODIFIED\s+watched\s+1\s`)
		if err := cms.Delete(ctx, "watched", metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		expect(`^DELETED\s+watched\s+1\s`)
	})

	t.Run("discovery", func(t *testing.T) {
		var groups metav1.APIGroupList
		if err := json.Unmarshal([]byte(s.mustKubectl(t, "get", "--raw", "/apis")), &groups); err != nil || groups.Kind != "APIGroupList" {
			t.Fatalf("kubectl get --raw /apis: %+v %v", groups, err)
		}
		names := map[string]bool{}
		for _, g := range groups.Groups {
			names[g.Name] = true
		}
		for _, g := range []string{"apps", "batch", "networking.k8s.io", "rbac.authorization.k8s.io", "policy", "apiextensions.k8s.io"} {
			if !names[g] {
				t.Errorf("/apis lacks group %s", g)
			}
		}
		// kubectl asks for aggregated discovery and must get it.
		r := s.kubectl(t, nil, "", "api-resources", "-v=8")
		if r.Code != 0 {
			t.Fatalf("kubectl api-resources: %d\n%s", r.Code, r.Stderr)
		}
		aggregated := regexp.MustCompile(`(?i)Content-Type: application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList`)
		if n := len(aggregated.FindAllString(r.Stderr, -1)); n < 2 {
			t.Errorf("kubectl did not receive aggregated discovery for /api and /apis (%d responses):\n%s", n, r.Stderr)
		}
		for _, row := range []string{`(?m)^deployments\s+deploy\s+apps/v1\s+true\s+Deployment$`,
			`(?m)^configmaps\s+cm\s+v1\s+true\s+ConfigMap$`, `(?m)^namespaces\s+ns\s+v1\s+false\s+Namespace$`,
			`(?m)^cronjobs\s+cj\s+batch/v1\s+true\s+CronJob$`} {
			if !regexp.MustCompile(row).MatchString(r.Stdout) {
				t.Errorf("kubectl api-resources lacks %s:\n%s", row, r.Stdout)
			}
		}
	})
}

// TestKubectlE2EApply covers client-side apply on the multi-document
// manifest: create, re-apply, change, diff.
func TestKubectlE2EApply(t *testing.T) {
	s := startControlPlane(t, "")
	ctx := testCtx(t)
	cs := s.clientset(t, false)
	ns := createNamespace(t, cs, "apply")
	path := manifest(t, "app.yaml")
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	objects := []string{"serviceaccount/app", "configmap/app-config", "secret/app-secret", "service/web",
		"deployment.apps/web", "statefulset.apps/db", "job.batch/migrate", "cronjob.batch/nightly",
		"ingress.networking.k8s.io/web", "networkpolicy.networking.k8s.io/web-ingress",
		"role.rbac.authorization.k8s.io/config-reader", "rolebinding.rbac.authorization.k8s.io/app-config-reader",
		"poddisruptionbudget.policy/web"}
	expectLines := func(t *testing.T, out string, verbs map[string]string, def string) {
		t.Helper()
		for _, o := range objects {
			verb := def
			if v, ok := verbs[o]; ok {
				verb = v
			}
			if !strings.Contains(out, o+" "+verb+"\n") {
				t.Errorf("no %q in:\n%s", o+" "+verb, out)
			}
		}
	}

	out := s.mustKubectl(t, "apply", "-n", ns, "-f", path)
	expectLines(t, out, nil, "created")
	before := resourceVersions(t, s, ns, path)
	// managedFields times have a one-second resolution: let one pass, so a
	// server that refreshes them on a no-op patch is seen writing.
	time.Sleep(1100 * time.Millisecond)
	out = s.mustKubectl(t, "apply", "-n", ns, "-f", path)
	// kubectl's three-way patch is never empty for these, against any
	// server: a Secret's write-only stringData, a StatefulSet's atomic
	// volumeClaimTemplates (the server defaults their status) and a PDB's
	// selector (patchStrategy=replace). The server must still not write.
	alwaysPatched := map[string]string{"secret/app-secret": "configured", "statefulset.apps/db": "configured",
		"poddisruptionbudget.policy/web": "configured"}
	expectLines(t, out, alwaysPatched, "unchanged")
	if after := resourceVersions(t, s, ns, path); after != before {
		t.Errorf("re-applying the same manifest wrote objects:\nbefore: %s\nafter:  %s", before, after)
	}

	t.Run("diff without changes exits 0", func(t *testing.T) {
		r := s.kubectl(t, nil, "", "diff", "-n", ns, "-f", path)
		if r.Code != 0 || r.Stdout != "" {
			t.Errorf("kubectl diff of the applied manifest: exit %d\n%s\n%s", r.Code, r.Stdout, r.Stderr)
		}
	})

	changed := strings.Replace(string(raw), "color: blue", "color: green", 1)
	changed = strings.Replace(changed, "replicas: 2", "replicas: 3", 1)
	changedPath := writeFile(t, "app-changed.yaml", changed)

	t.Run("diff with changes exits 1", func(t *testing.T) {
		r := s.kubectl(t, nil, "", "diff", "-n", ns, "-f", changedPath)
		if r.Code != 1 || !strings.Contains(r.Stdout, "-  color: blue") || !strings.Contains(r.Stdout, "+  color: green") ||
			!strings.Contains(r.Stdout, "-  replicas: 2") || !strings.Contains(r.Stdout, "+  replicas: 3") {
			t.Errorf("kubectl diff of a changed manifest: exit %d (want 1)\n%s\n%s", r.Code, r.Stdout, r.Stderr)
		}
		if cm, err := cs.CoreV1().ConfigMaps(ns).Get(ctx, "app-config", metav1.GetOptions{}); err != nil || cm.Data["color"] != "blue" {
			t.Errorf("kubectl diff changed the object: %v %v", cm.Data, err)
		}
	})

	t.Run("apply a change", func(t *testing.T) {
		out := s.mustKubectl(t, "apply", "-n", ns, "-f", changedPath)
		changedOnes := map[string]string{"configmap/app-config": "configured", "deployment.apps/web": "configured"}
		for k, v := range alwaysPatched {
			changedOnes[k] = v
		}
		expectLines(t, out, changedOnes, "unchanged")
		cm, err := cs.CoreV1().ConfigMaps(ns).Get(ctx, "app-config", metav1.GetOptions{})
		if err != nil || cm.Data["color"] != "green" {
			t.Fatalf("configmap after apply: %v %v", cm.Data, err)
		}
		dep, err := cs.AppsV1().Deployments(ns).Get(ctx, "web", metav1.GetOptions{})
		if err != nil || *dep.Spec.Replicas != 3 || dep.Generation != 2 {
			t.Fatalf("deployment after apply: replicas %v generation %d %v", dep.Spec.Replicas, dep.Generation, err)
		}
		if dep.Annotations[corev1.LastAppliedConfigAnnotation] == "" {
			t.Error("no last-applied-configuration annotation")
		}
	})

	t.Run("prune-free removal of a field", func(t *testing.T) {
		// Dropping a key from the manifest removes it (three-way merge).
		noIni := regexp.MustCompile(`(?s)  settings.ini: \|\n    \[server\]\n    port = 8080\n`).ReplaceAllString(changed, "")
		out := s.mustKubectl(t, "apply", "-n", ns, "-f", writeFile(t, "no-ini.yaml", noIni))
		if !strings.Contains(out, "configmap/app-config configured\n") {
			t.Errorf("apply:\n%s", out)
		}
		cm, err := cs.CoreV1().ConfigMaps(ns).Get(ctx, "app-config", metav1.GetOptions{})
		if _, has := cm.Data["settings.ini"]; err != nil || has {
			t.Errorf("settings.ini not removed: %v %v", cm.Data, err)
		}
	})
}

// resourceVersions is "kind/name=rv ..." of every object of a manifest.
func resourceVersions(t *testing.T, s *started, ns, path string) string {
	t.Helper()
	out := s.mustKubectl(t, "get", "-n", ns, "-f", path, "-o", `jsonpath={range .items[*]}{.kind}/{.metadata.name}={.metadata.resourceVersion} {end}`)
	if strings.Count(out, "=") < 13 {
		t.Fatalf("kubectl get -f %s: %s", path, out)
	}
	return out
}

func TestKubectlE2EServerSideApply(t *testing.T) {
	s := startControlPlane(t, "")
	ctx := testCtx(t)
	cs := s.clientset(t, false)
	ns := createNamespace(t, cs, "ssa")
	cm := func(color string) string {
		return writeFile(t, "cm-"+color+".yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: shared\ndata:\n  color: "+color+"\n  size: large\n")
	}

	out := s.mustKubectl(t, "apply", "--server-side", "-n", ns, "-f", cm("blue"))
	if !strings.Contains(out, "configmap/shared serverside-applied") {
		t.Errorf("first server-side apply: %s", out)
	}
	r := s.kubectl(t, nil, "", "apply", "--server-side", "--field-manager=other", "-n", ns, "-f", cm("red"))
	if r.Code == 0 || !strings.Contains(r.Stderr, "conflict") || !strings.Contains(r.Stderr, "--force-conflicts") ||
		!strings.Contains(r.Stderr, `.data.color`) || !strings.Contains(r.Stderr, `"kubectl"`) {
		t.Fatalf("conflicting apply by a second manager: exit %d\n%s\n%s", r.Code, r.Stdout, r.Stderr)
	}
	got, err := cs.CoreV1().ConfigMaps(ns).Get(ctx, "shared", metav1.GetOptions{})
	if err != nil || got.Data["color"] != "blue" {
		t.Fatalf("conflicting apply changed the object: %v %v", got.Data, err)
	}
	out = s.mustKubectl(t, "apply", "--server-side", "--field-manager=other", "--force-conflicts", "-n", ns, "-f", cm("red"))
	if !strings.Contains(out, "configmap/shared serverside-applied") {
		t.Errorf("forced apply: %s", out)
	}
	got, err = cs.CoreV1().ConfigMaps(ns).Get(ctx, "shared", metav1.GetOptions{})
	if err != nil || got.Data["color"] != "red" {
		t.Fatalf("after --force-conflicts: %v %v", got.Data, err)
	}
	owners := map[string]string{}
	for _, mf := range got.ManagedFields {
		if mf.Operation != metav1.ManagedFieldsOperationApply || mf.FieldsV1 == nil {
			continue
		}
		for _, key := range []string{"color", "size"} {
			if strings.Contains(string(mf.FieldsV1.Raw), `"f:`+key+`"`) {
				owners[key] += mf.Manager + " "
			}
		}
	}
	// The forced manager took color; both own size (same value).
	if owners["color"] != "other " || !strings.Contains(owners["size"], "kubectl") || !strings.Contains(owners["size"], "other") {
		t.Errorf("field owners after force: %q\n%+v", owners, got.ManagedFields)
	}

	t.Run("client-side to server-side migration", func(t *testing.T) {
		ns := createNamespace(t, cs, "ssa-migrate")
		// Every kind of the manifest but the StatefulSet: its
		// volumeClaimTemplates are an atomic list the server defaults
		// (volumeMode, status), which makes migration conflict on real
		// clusters too (a known ecosystem issue), so it proves nothing here.
		raw, err := os.ReadFile(manifest(t, "app.yaml"))
		if err != nil {
			t.Fatal(err)
		}
		var docs []string
		for _, doc := range strings.Split(string(raw), "\n---\n") {
			if !strings.Contains(doc, "kind: StatefulSet") {
				docs = append(docs, doc)
			}
		}
		path := writeFile(t, "app-no-sts.yaml", strings.Join(docs, "\n---\n"))
		s.mustKubectl(t, "apply", "-n", ns, "-f", path)
		r := s.kubectl(t, nil, "", "apply", "--server-side", "-n", ns, "-f", path)
		if r.Code != 0 || strings.Contains(r.Stderr, "conflict") || !strings.Contains(r.Stdout, "deployment.apps/web serverside-applied") {
			t.Fatalf("server-side apply after client-side apply: exit %d\n%s\n%s", r.Code, r.Stdout, r.Stderr)
		}
		// Afterwards the server-side manager owns what client-side apply set,
		// so dropping a field from the manifest removes it.
		raw, _ = os.ReadFile(path)
		smaller := strings.Replace(string(raw), "  color: blue\n", "", 1)
		s.mustKubectl(t, "apply", "--server-side", "-n", ns, "-f", writeFile(t, "smaller.yaml", smaller))
		got, err := cs.CoreV1().ConfigMaps(ns).Get(ctx, "app-config", metav1.GetOptions{})
		if _, has := got.Data["color"]; err != nil || has {
			t.Errorf("color still present after removing it from the server-side applied manifest: %v %v", got.Data, err)
		}
	})
}

func TestKubectlE2EPatchEditExplain(t *testing.T) {
	s := startControlPlane(t, "")
	ctx := testCtx(t)
	cs := s.clientset(t, false)
	ns := createNamespace(t, cs, "patching")
	// Only the Deployment and ConfigMap are used: another refused object
	// (reported here) must not hide these checks.
	if r := s.kubectl(t, nil, "", "apply", "-n", ns, "-f", manifest(t, "app.yaml")); r.Code != 0 {
		t.Errorf("kubectl apply of app.yaml: exit %d\n%s", r.Code, r.Stderr)
	}
	deps := cs.AppsV1().Deployments(ns)

	t.Run("patch --type strategic", func(t *testing.T) {
		s.mustKubectl(t, "patch", "-n", ns, "deployment", "web", "--type", "strategic",
			"-p", `{"spec":{"template":{"spec":{"containers":[{"name":"sidecar","image":"busybox:1.37"},{"name":"web","image":"nginx:1.28"}]}}}}`)
		d, err := deps.Get(ctx, "web", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		images := map[string]string{}
		for _, c := range d.Spec.Template.Spec.Containers {
			images[c.Name] = c.Image
		}
		// Merged by name: web keeps its ports and env, sidecar is added.
		web := d.Spec.Template.Spec.Containers
		if len(web) != 2 || images["web"] != "nginx:1.28" || images["sidecar"] != "busybox:1.37" {
			t.Fatalf("containers after strategic patch: %v", images)
		}
		for _, c := range web {
			if c.Name == "web" && (len(c.Ports) != 1 || len(c.Env) != 1) {
				t.Errorf("strategic patch replaced the web container: %+v", c)
			}
		}
	})
	t.Run("patch --type merge", func(t *testing.T) {
		s.mustKubectl(t, "patch", "-n", ns, "deployment", "web", "--type", "merge", "-p", `{"metadata":{"labels":{"tier":"frontend"}}}`)
		d, err := deps.Get(ctx, "web", metav1.GetOptions{})
		if err != nil || d.Labels["tier"] != "frontend" || d.Labels["app"] != "web" {
			t.Fatalf("labels after merge patch: %v %v", d.Labels, err)
		}
	})
	t.Run("patch --type json", func(t *testing.T) {
		s.mustKubectl(t, "patch", "-n", ns, "deployment", "web", "--type", "json", "-p", `[{"op":"replace","path":"/spec/replicas","value":4}]`)
		d, err := deps.Get(ctx, "web", metav1.GetOptions{})
		if err != nil || *d.Spec.Replicas != 4 {
			t.Fatalf("replicas after json patch: %v %v", d.Spec.Replicas, err)
		}
		r := s.kubectl(t, nil, "", "patch", "-n", ns, "deployment", "web", "--type", "json", "-p", `[{"op":"test","path":"/spec/replicas","value":9}]`)
		// kube answers a failed test op with a bare 422 (NewGenericServerResponse drops the detail).
		if r.Code == 0 || !strings.Contains(r.Stderr, "The request is invalid: the server rejected our request due to an error in our request") {
			t.Errorf("failing json patch test op: exit %d\n%s", r.Code, r.Stderr)
		}
	})
	t.Run("patch with no change", func(t *testing.T) {
		out := s.mustKubectl(t, "patch", "-n", ns, "deployment", "web", "--type", "merge", "-p", `{"metadata":{"labels":{"tier":"frontend"}}}`)
		if !strings.Contains(out, "deployment.apps/web patched (no change)") {
			t.Errorf("no-op patch: %s", out)
		}
	})

	t.Run("edit with KUBE_EDITOR", func(t *testing.T) {
		editor := writeFile(t, "editor.sh", "#!/bin/sh\nsed -i 's/color: blue/color: purple/' \"$1\"\n")
		r := s.kubectl(t, []string{"KUBE_EDITOR=" + editor, "EDITOR=" + editor}, "", "edit", "-n", ns, "configmap", "app-config")
		if r.Code != 0 || !strings.Contains(r.Stdout, "configmap/app-config edited") {
			t.Fatalf("kubectl edit: exit %d\n%s\n%s", r.Code, r.Stdout, r.Stderr)
		}
		cm, err := cs.CoreV1().ConfigMaps(ns).Get(ctx, "app-config", metav1.GetOptions{})
		if err != nil || cm.Data["color"] != "purple" {
			t.Fatalf("after edit: %v %v", cm.Data, err)
		}
	})

	t.Run("managedFields record every writer", func(t *testing.T) {
		s.mustKubectl(t, "create", "configmap", "-n", ns, "made", "--from-literal=a=1")
		s.mustKubectl(t, "label", "-n", ns, "configmap", "made", "x=y")
		if _, err := cs.CoreV1().ConfigMaps(ns).Update(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "made", Labels: map[string]string{"x": "y"}},
			Data: map[string]string{"a": "2"}}, metav1.UpdateOptions{FieldManager: "my-controller"}); err != nil {
			t.Fatal(err)
		}
		out := s.mustKubectl(t, "get", "-n", ns, "configmap", "made", "-o", "yaml", "--show-managed-fields")
		for _, want := range []string{"managedFields:", "manager: kubectl-create", "manager: kubectl-label", "manager: my-controller", "operation: Update", "fieldsType: FieldsV1"} {
			if !strings.Contains(out, want) {
				t.Errorf("no %q in:\n%s", want, out)
			}
		}
		if out := s.mustKubectl(t, "get", "-n", ns, "configmap", "made", "-o", "yaml"); strings.Contains(out, "managedFields") {
			t.Errorf("managedFields shown without --show-managed-fields:\n%s", out)
		}
		d, err := deps.Get(ctx, "web", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		managers := map[string]bool{}
		for _, mf := range d.ManagedFields {
			managers[mf.Manager+"/"+string(mf.Operation)] = true
		}
		for _, m := range []string{"kubectl-client-side-apply/Update", "kubectl-patch/Update"} {
			if !managers[m] {
				t.Errorf("deployment managedFields lack %s: %v", m, managers)
			}
		}
	})

	t.Run("explain", func(t *testing.T) {
		out := s.mustKubectl(t, "explain", "deployment.spec.strategy")
		for _, want := range []string{"GROUP:      apps", "KIND:       Deployment", "VERSION:    v1", "FIELD: strategy <DeploymentStrategy>",
			"The deployment strategy to use to replace existing pods with new ones.", "rollingUpdate\t<RollingUpdateDeployment>", "type\t<string>"} {
			if !strings.Contains(out, want) {
				t.Errorf("kubectl explain deployment.spec.strategy lacks %q:\n%s", want, out)
			}
		}
		out = s.mustKubectl(t, "explain", "pods", "--recursive")
		for _, want := range []string{"KIND:       Pod", "containers\t<[]Container> -required-", "livenessProbe\t<Probe>", "nodeName\t<string>"} {
			if !strings.Contains(out, want) {
				t.Errorf("kubectl explain pods --recursive lacks %q", want)
			}
		}
		if n := strings.Count(out, "\n"); n < 500 {
			t.Errorf("kubectl explain pods --recursive printed only %d lines", n)
		}
	})
}

func TestKubectlE2EValidation(t *testing.T) {
	s := startControlPlane(t, "")
	cs := s.clientset(t, false)
	ns := createNamespace(t, cs, "validation")

	t.Run("unknown field", func(t *testing.T) {
		dep := `apiVersion: apps/v1
kind: Deployment
metadata:
  name: typo
spec:
  foo: bar
  selector:
    matchLabels: {app: typo}
  template:
    metadata:
      labels: {app: typo}
    spec:
      containers:
      - name: c
        image: nginx
`
		path := writeFile(t, "typo.yaml", dep)
		for _, verb := range []string{"create", "apply"} {
			r := s.kubectl(t, nil, "", verb, "-n", ns, "-f", path)
			if r.Code == 0 || !strings.Contains(r.Stderr, `unknown field "spec.foo"`) {
				t.Errorf("kubectl %s with spec.foo: exit %d, want an error naming unknown field \"spec.foo\":\n%s", verb, r.Code, r.Stderr)
			}
		}
		if r := s.kubectl(t, nil, "", "create", "--validate=false", "-n", ns, "-f", path); r.Code != 0 {
			t.Errorf("--validate=false: exit %d\n%s", r.Code, r.Stderr)
		}
	})

	t.Run("annotations over 256 KiB", func(t *testing.T) {
		const msg = "metadata.annotations: Too long: may not be more than 262144 bytes"
		big := strings.Repeat("a", 300*1024)
		annotated := writeFile(t, "annotated.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: annotated\n  annotations:\n    big: "+big+"\n")
		r := s.kubectl(t, nil, "", "create", "-n", ns, "-f", annotated)
		if r.Code == 0 || !strings.Contains(r.Stderr, msg) {
			t.Errorf("kubectl create of a 300 KiB annotation: exit %d, want %q:\n%.2000s", r.Code, msg, r.Stderr)
		}
		// Client-side apply copies the object into an annotation.
		bigData := writeFile(t, "bigdata.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: bigdata\ndata:\n  big: "+big+"\n")
		r = s.kubectl(t, nil, "", "apply", "-n", ns, "-f", bigData)
		if r.Code == 0 || !strings.Contains(r.Stderr, msg) {
			t.Errorf("kubectl apply of a 300 KiB ConfigMap: exit %d, want %q:\n%.2000s", r.Code, msg, r.Stderr)
		}
		// Without the annotation the same object is fine.
		if r := s.kubectl(t, nil, "", "apply", "--server-side", "-n", ns, "-f", bigData); r.Code != 0 {
			t.Errorf("server-side apply of a 300 KiB ConfigMap: exit %d\n%.2000s", r.Code, r.Stderr)
		}
	})

	t.Run("service cluster IP and node port", func(t *testing.T) {
		ctx := testCtx(t)
		s.mustKubectl(t, "create", "service", "clusterip", "-n", ns, "plain", "--tcp=80:8080")
		s.mustKubectl(t, "create", "service", "nodeport", "-n", ns, "np", "--tcp=80:8080")
		_, cidr, _ := net.ParseCIDR("10.0.0.0/24")
		ips := map[string]bool{}
		for _, name := range []string{"plain", "np"} {
			svc, err := cs.CoreV1().Services(ns).Get(ctx, name, metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			ip := net.ParseIP(svc.Spec.ClusterIP)
			if ip == nil || !cidr.Contains(ip) || svc.Spec.ClusterIP == "10.0.0.1" || len(svc.Spec.ClusterIPs) != 1 || svc.Spec.ClusterIPs[0] != svc.Spec.ClusterIP {
				t.Errorf("%s: clusterIP %q clusterIPs %v, want one address of 10.0.0.0/24 other than 10.0.0.1", name, svc.Spec.ClusterIP, svc.Spec.ClusterIPs)
			}
			if ips[svc.Spec.ClusterIP] {
				t.Errorf("cluster IP %s given twice", svc.Spec.ClusterIP)
			}
			ips[svc.Spec.ClusterIP] = true
			if name == "np" {
				port := svc.Spec.Ports[0].NodePort
				if port < 30000 || port > 32767 {
					t.Errorf("node port %d outside 30000-32767", port)
				}
				out := s.mustKubectl(t, "get", "svc", "np", "-n", ns)
				if !regexp.MustCompile(`np\s+NodePort\s+` + regexp.QuoteMeta(svc.Spec.ClusterIP) + `\s+<none>\s+80:` + strconv.Itoa(int(port)) + `/TCP\s`).MatchString(out) {
					t.Errorf("kubectl get svc np:\n%s", out)
				}
			}
		}
		// A requested address that is taken is refused with kube's message.
		taken := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "taken"}, Spec: corev1.ServiceSpec{
			ClusterIP: "10.0.0.1", Ports: []corev1.ServicePort{{Port: 80, TargetPort: intstr.FromInt32(80)}}}}
		_, err := cs.CoreV1().Services(ns).Create(ctx, taken, metav1.CreateOptions{})
		if err == nil || !strings.Contains(err.Error(), "provided IP is already allocated") {
			t.Errorf("service asking for 10.0.0.1: want 'provided IP is already allocated', got %v", err)
		}
	})
}

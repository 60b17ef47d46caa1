package controlplane_test

// helm against devplane, as a user runs it: install a chart with a CRD, a
// Deployment, a Service and a post-install hook Job, --wait for it, upgrade,
// roll back and uninstall. Opt-in: skipped unless a helm binary is found
// (`task helm` builds one from helm's Go module).

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func helmBinary(t *testing.T) string {
	t.Helper()
	if p := os.Getenv("DEVPLANE_HELM"); p != "" {
		return p
	}
	if cache, err := os.UserCacheDir(); err == nil {
		if p := filepath.Join(cache, "devplane-peer", "bin", "helm"); fileExists(p) {
			return p
		}
	}
	if p, err := exec.LookPath("helm"); err == nil {
		return p
	}
	t.Skip("helm is not installed: run `task helm` (builds it from helm.sh/helm/v3 into the cache dir) or set DEVPLANE_HELM")
	return ""
}

func fileExists(p string) bool { _, err := os.Stat(p); return err == nil }

// writeChart writes a small chart: a CRD, a Deployment and Service of
// .Values.replicas nginx pods, and a post-install/upgrade hook Job.
func writeChart(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "demo")
	files := map[string]string{
		"Chart.yaml":  "apiVersion: v2\nname: demo\nversion: 0.1.0\nappVersion: \"1.0\"\n",
		"values.yaml": "replicas: 2\nimage: nginx:1.27\n",
		"crds/gadgets.yaml": `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: gadgets.demo.example.com}
spec:
  group: demo.example.com
  names: {kind: Gadget, plural: gadgets, singular: gadget}
  scope: Namespaced
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}
`,
		"templates/deployment.yaml": `apiVersion: apps/v1
kind: Deployment
metadata: {name: {{ .Release.Name }}-web}
spec:
  replicas: {{ .Values.replicas }}
  selector: {matchLabels: {app: {{ .Release.Name }}-web}}
  template:
    metadata: {labels: {app: {{ .Release.Name }}-web}}
    spec:
      containers:
      - name: web
        image: {{ .Values.image }}
        ports: [{containerPort: 80}]
        readinessProbe: {httpGet: {path: /, port: 80}}
`,
		"templates/service.yaml": `apiVersion: v1
kind: Service
metadata: {name: {{ .Release.Name }}-web}
spec:
  selector: {app: {{ .Release.Name }}-web}
  ports: [{port: 80, targetPort: 80}]
`,
		"templates/gadget.yaml": `apiVersion: demo.example.com/v1
kind: Gadget
metadata: {name: {{ .Release.Name }}-gadget}
spec: {size: {{ .Values.replicas }}}
`,
		"templates/hook.yaml": `apiVersion: batch/v1
kind: Job
metadata:
  name: {{ .Release.Name }}-migrate
  annotations:
    "helm.sh/hook": post-install,post-upgrade
    "helm.sh/hook-delete-policy": before-hook-creation
spec:
  backoffLimit: 1
  template:
    spec:
      restartPolicy: Never
      containers: [{name: migrate, image: busybox, command: ["true"]}]
`,
	}
	for name, content := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func TestHelmInstallUpgradeRollbackUninstall(t *testing.T) {
	helm := helmBinary(t)
	s, cs := startWorkloads(t, 1)
	kubeconfig := s.kubeconfigFile(t)
	chart := writeChart(t)
	ctx := context.Background()
	ns := createNamespace(t, cs, "helm")
	run := func(args ...string) string {
		t.Helper()
		cmd := exec.Command(helm, append(args, "--kubeconfig", kubeconfig, "--namespace", ns)...)
		cmd.Env = append(os.Environ(), "HELM_CACHE_HOME="+t.TempDir(), "HELM_CONFIG_HOME="+t.TempDir(), "HELM_DATA_HOME="+t.TempDir())
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("helm %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return string(out)
	}
	replicas := func() int32 {
		t.Helper()
		d, err := cs.AppsV1().Deployments(ns).Get(ctx, "demo-web", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return *d.Spec.Replicas
	}

	run("install", "demo", chart, "--wait", "--wait-for-jobs", "--timeout", "2m")
	d, err := cs.AppsV1().Deployments(ns).Get(ctx, "demo-web", metav1.GetOptions{})
	if err != nil || d.Status.AvailableReplicas != 2 {
		t.Fatalf("after install --wait: %v, %d available", err, d.Status.AvailableReplicas)
	}
	if job, err := cs.BatchV1().Jobs(ns).Get(ctx, "demo-migrate", metav1.GetOptions{}); err != nil || job.Status.Succeeded != 1 {
		t.Errorf("post-install hook Job: %v %+v", err, job.Status)
	}

	run("upgrade", "demo", chart, "--set", "replicas=3", "--wait", "--timeout", "2m")
	if got := replicas(); got != 3 {
		t.Errorf("after upgrade: %d replicas, want 3", got)
	}
	run("rollback", "demo", "1", "--wait", "--timeout", "2m")
	if got := replicas(); got != 2 {
		t.Errorf("after rollback: %d replicas, want 2", got)
	}
	if out := run("history", "demo"); !strings.Contains(out, "Rollback to 1") {
		t.Errorf("helm history:\n%s", out)
	}
	run("uninstall", "demo", "--wait", "--timeout", "2m")
	deadline := time.Now().Add(60 * time.Second)
	for {
		pods, err := cs.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: "app=demo-web"})
		if err == nil && len(pods.Items) == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("pods left after uninstall: %v %d", err, len(pods.Items))
		}
		time.Sleep(100 * time.Millisecond)
	}
	if _, err := cs.AppsV1().Deployments(ns).Get(ctx, "demo-web", metav1.GetOptions{}); err == nil {
		t.Error("the Deployment survived uninstall")
	}
}

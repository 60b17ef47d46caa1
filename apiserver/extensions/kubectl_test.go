package extensions_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/devplane/devplane/apiserver/controlplane/controlplanetest"
)

const invalidCronTab = `apiVersion: stable.example.com/v1
kind: CronTab
metadata:
  name: bad
  namespace: default
spec:
  cronSpec: "* * * * *"
  replicas: 20
  concurrencyPolicy: Sometimes
`

const unknownFieldCronTab = `apiVersion: stable.example.com/v1
kind: CronTab
metadata:
  name: %s
  namespace: default
spec:
  cronSpec: "* * * * *"
  image: nginx
  foo: bar
`

func TestCRDLifecycleWithKubectl(t *testing.T) {
	d := start(t)
	d.mustKubectl(t, "", "apply", "-f", "testdata/crontab-crd.yaml")
	began := time.Now()
	d.mustKubectl(t, "", "wait", "--for", "condition=established", "--timeout=10s", "crd/crontabs.stable.example.com")
	if waited := time.Since(began); waited > 5*time.Second {
		t.Errorf("kubectl wait took %v", waited)
	}

	// Create, defaults, printer columns.
	d.mustKubectl(t, "", "apply", "-f", "testdata/crontab.yaml")
	var obj map[string]any
	if err := json.Unmarshal([]byte(d.mustKubectl(t, "", "get", "ct", "nightly", "-o", "json")), &obj); err != nil {
		t.Fatal(err)
	}
	spec := obj["spec"].(map[string]any)
	if spec["concurrencyPolicy"] != "Allow" || spec["maxReplicas"] != float64(10) || spec["replicas"] != float64(2) {
		t.Errorf("defaults not applied: %v", spec)
	}
	table := d.mustKubectl(t, "", "get", "crontabs")
	for _, want := range []string{"NAME", "SPEC", "REPLICAS", "POLICY", "nightly", "0 3 * * *", "Allow"} {
		if !strings.Contains(table, want) {
			t.Errorf("kubectl get crontabs lacks %q:\n%s", want, table)
		}
	}

	// Schema, enum and CEL errors.
	stderr := d.failKubectl(t, invalidCronTab, "create", "-f", "-")
	for _, want := range []string{
		`The CronTab "bad" is invalid`,
		`spec.image: Required value`,
		`spec.concurrencyPolicy: Unsupported value: "Sometimes": supported values: "Allow", "Forbid", "Replace"`,
	} {
		if !strings.Contains(stderr, want) {
			t.Errorf("invalid CronTab error lacks %q:\n%s", want, stderr)
		}
	}
	// CEL rules run once the schema is satisfied.
	stderr = d.failKubectl(t, strings.Replace(strings.Replace(invalidCronTab, "Sometimes", "Forbid", 1),
		"spec:\n", "spec:\n  image: nginx\n", 1), "create", "-f", "-")
	if !strings.Contains(stderr, "spec: Invalid value: ") || !strings.Contains(stderr, "replicas must not exceed maxReplicas") {
		t.Errorf("CEL rule error: %s", stderr)
	}

	// Unknown fields: kubectl asks for Strict by default; Warn prunes with a
	// warning; Ignore prunes silently.
	stderr = d.failKubectl(t, sprintf(unknownFieldCronTab, "strict"), "create", "-f", "-")
	if !strings.Contains(stderr, `strict decoding error: unknown field "spec.foo"`) {
		t.Errorf("strict create: %s", stderr)
	}
	r := d.kubectl(t, sprintf(unknownFieldCronTab, "warned"), "create", "--validate=warn", "-f", "-")
	if r.Code != 0 || !strings.Contains(r.Stderr, `unknown field "spec.foo"`) {
		t.Errorf("warn create: exit %d, stderr %s", r.Code, r.Stderr)
	}
	d.mustKubectl(t, sprintf(unknownFieldCronTab, "ignored"), "create", "--validate=false", "-f", "-")
	for _, name := range []string{"warned", "ignored"} {
		out := d.mustKubectl(t, "", "get", "ct", name, "-o", "jsonpath={.spec}")
		if strings.Contains(out, "foo") || !strings.Contains(out, "nginx") {
			t.Errorf("%s: unknown field not pruned: %s", name, out)
		}
	}

	// Merge and JSON patches, label selection, scale.
	d.mustKubectl(t, "", "patch", "ct", "nightly", "--type=merge", "-p", `{"spec":{"replicas":3}}`)
	d.mustKubectl(t, "", "patch", "ct", "nightly", "--type=json", "-p", `[{"op":"replace","path":"/spec/image","value":"alpine"}]`)
	if got := d.mustKubectl(t, "", "get", "ct", "nightly", "-o", "jsonpath={.spec.replicas} {.spec.image}"); got != "3 alpine" {
		t.Errorf("after patches: %q", got)
	}
	stderr = d.failKubectl(t, "", "patch", "ct", "nightly", "--type=strategic", "-p", `{"spec":{"replicas":4}}`)
	if !strings.Contains(stderr, "415") && !strings.Contains(stderr, "unknown format") && !strings.Contains(stderr, "not supported") {
		t.Errorf("strategic merge patch on a custom resource: %s", stderr)
	}
	stderr = d.failKubectl(t, "", "patch", "ct", "nightly", "--type=merge", "-p", `{"spec":{"replicas":11}}`)
	if !strings.Contains(stderr, "replicas must not exceed maxReplicas") {
		t.Errorf("patch past CEL rule: %s", stderr)
	}
	if got := d.mustKubectl(t, "", "get", "ct", "-l", "team=a", "-o", "name"); strings.TrimSpace(got) != "crontab.stable.example.com/nightly" {
		t.Errorf("label selection: %q", got)
	}
	d.mustKubectl(t, "", "scale", "ct", "nightly", "--replicas=5")
	if got := d.mustKubectl(t, "", "get", "ct", "nightly", "-o", "jsonpath={.spec.replicas}"); got != "5" {
		t.Errorf("after kubectl scale: replicas %q", got)
	}

	// Discovery and OpenAPI: api-resources and explain.
	if got := d.mustKubectl(t, "", "api-resources", "--api-group=stable.example.com"); !strings.Contains(got, "crontabs") || !strings.Contains(got, "ct") {
		t.Errorf("api-resources: %s", got)
	}
	if got := d.mustKubectl(t, "", "explain", "crontabs.spec"); !strings.Contains(got, "cronSpec") || !strings.Contains(got, "CronSpec is a cron expression") {
		t.Errorf("explain: %s", got)
	}
	// The same from /openapi/v2 (protobuf, assembled from fragments).
	if got := d.mustKubectl(t, "", "explain", "crontabs.spec", "--output=plaintext-openapiv2"); !strings.Contains(got, "cronSpec") || !strings.Contains(got, "CronSpec is a cron expression") {
		t.Errorf("explain from /openapi/v2: %s", got)
	}

	// Deleting the CRD deletes its custom resources, then the CRD.
	d.mustKubectl(t, "", "delete", "ct", "warned")
	d.mustKubectl(t, "", "delete", "crd", "crontabs.stable.example.com", "--timeout=30s")
	stderr = d.failKubectl(t, "", "get", "crd", "crontabs.stable.example.com")
	if !strings.Contains(stderr, "NotFound") && !strings.Contains(stderr, "not found") {
		t.Errorf("CRD still there: %s", stderr)
	}
	// Re-creating it finds no leftover custom resources.
	d.mustKubectl(t, "", "apply", "-f", "testdata/crontab-crd.yaml")
	d.mustKubectl(t, "", "wait", "--for", "condition=established", "--timeout=10s", "crd/crontabs.stable.example.com")
	controlplanetest.Eventually(t, 10*time.Second, "empty crontabs after re-creating the CRD", func() (bool, string) {
		r := d.kubectl(t, "", "get", "crontabs", "-A", "-o", "name")
		return r.Code == 0 && strings.TrimSpace(r.Stdout) == "", r.Stdout + r.Stderr
	})
}

func sprintf(format string, args ...any) string {
	return strings.ReplaceAll(format, "%s", args[0].(string))
}

package extensions_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/devplane/devplane/apiserver/controlplane/controlplanetest"
)

const widgetCRD = `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: %s.toys.example.com
spec:
  group: toys.example.com
  scope: Namespaced
  names: {plural: %s, kind: Widget}
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}
`

func crdCondition(t *testing.T, d *devplane, name, condition string) string {
	t.Helper()
	return d.mustKubectl(t, "", "get", "crd", name, "-o",
		`jsonpath={.status.conditions[?(@.type=="`+condition+`")].status} {.status.conditions[?(@.type=="`+condition+`")].reason} {.status.conditions[?(@.type=="`+condition+`")].message}`)
}

// TestCRDNameConflictWithKubectl: a second CRD claiming a kind already in use
// in its group is stored but neither NamesAccepted nor Established.
func TestCRDNameConflictWithKubectl(t *testing.T) {
	d := start(t)
	d.mustKubectl(t, sprintf(widgetCRD, "widgets"), "apply", "-f", "-")
	d.mustKubectl(t, "", "wait", "--for", "condition=established", "--timeout=10s", "crd/widgets.toys.example.com")
	d.mustKubectl(t, strings.ReplaceAll(widgetCRD, "%s", "gizmos"), "apply", "-f", "-")
	var names string
	controlplanetest.Eventually(t, 10*time.Second, "NamesAccepted=False on the conflicting CRD", func() (bool, string) {
		names = crdCondition(t, d, "gizmos.toys.example.com", "NamesAccepted")
		return strings.HasPrefix(names, "False "), names
	})
	// Kind and listKind both collide; like kube's naming controller the last
	// check (listKind) names the reason.
	if names != `False ListKindConflict "WidgetList" is already in use` {
		t.Errorf("NamesAccepted of the conflicting CRD: %q", names)
	}
	if got := crdCondition(t, d, "gizmos.toys.example.com", "Established"); !strings.HasPrefix(got, "False ") {
		t.Errorf("Established of the conflicting CRD: %q", got)
	}
	if got := d.mustKubectl(t, "", "get", "crd", "gizmos.toys.example.com", "-o", "jsonpath={.status.acceptedNames.kind}"); got != "" {
		t.Errorf("accepted kind of the conflicting CRD: %q", got)
	}
	if got := d.mustKubectl(t, "", "api-resources", "--api-group=toys.example.com", "-o", "name"); strings.TrimSpace(got) != "widgets.toys.example.com" {
		t.Errorf("api-resources with a conflicting CRD: %q", got)
	}
	// Deleting the first frees the kind: the second is accepted.
	d.mustKubectl(t, "", "delete", "crd", "widgets.toys.example.com", "--timeout=30s")
	d.mustKubectl(t, "", "wait", "--for", "condition=established", "--timeout=10s", "crd/gizmos.toys.example.com")
}

const heldCronTab = `apiVersion: stable.example.com/v1
kind: CronTab
metadata:
  name: %s
  namespace: default
  finalizers: [example.com/hold]
spec:
  cronSpec: "* * * * *"
  image: nginx
`

// TestCRDTerminatingWithKubectl: while a CRD waits for its custom resources
// to go, creates are refused as kube refuses them, and the CRD, its
// api-resources entry and its OpenAPI v3 path go once they are gone.
func TestCRDTerminatingWithKubectl(t *testing.T) {
	d := start(t)
	d.mustKubectl(t, "", "apply", "-f", "testdata/crontab-crd.yaml")
	d.mustKubectl(t, "", "wait", "--for", "condition=established", "--timeout=10s", "crd/crontabs.stable.example.com")
	d.mustKubectl(t, sprintf(heldCronTab, "held"), "create", "-f", "-")
	openapiPath := "apis/stable.example.com/v1"
	if !strings.Contains(openAPIV3Index(t, d), openapiPath) {
		t.Fatalf("/openapi/v3 lacks %s", openapiPath)
	}

	d.mustKubectl(t, "", "delete", "crd", "crontabs.stable.example.com", "--wait=false")
	controlplanetest.Eventually(t, 10*time.Second, "Terminating=True", func() (bool, string) {
		got := crdCondition(t, d, "crontabs.stable.example.com", "Terminating")
		return strings.HasPrefix(got, "True InstanceDeletionInProgress"), got
	})
	stderr := d.failKubectl(t, sprintf(heldCronTab, "late"), "create", "-f", "-")
	if want := `Error from server (MethodNotAllowed): error when creating "STDIN": create not allowed while custom resource definition is terminating`; !strings.Contains(stderr, want) {
		t.Errorf("create while the CRD terminates:\n%s\nwant %s", stderr, want)
	}
	// Reads and updates still work: the finalizer can be removed.
	if got := d.mustKubectl(t, "", "get", "ct", "held", "-o", "jsonpath={.metadata.deletionTimestamp}"); got == "" {
		t.Errorf("the held custom resource is not being deleted")
	}
	d.mustKubectl(t, "", "patch", "ct", "held", "--type=merge", "-p", `{"metadata":{"finalizers":null}}`)

	controlplanetest.Eventually(t, 10*time.Second, "CRD gone", func() (bool, string) {
		r := d.kubectl(t, "", "get", "crd", "crontabs.stable.example.com")
		return r.Code != 0 && strings.Contains(r.Stderr, "NotFound"), r.Stdout + r.Stderr
	})
	controlplanetest.Eventually(t, 10*time.Second, "crontabs gone from api-resources", func() (bool, string) {
		out := d.mustKubectl(t, "", "api-resources")
		return !strings.Contains(out, "stable.example.com"), out
	})
	controlplanetest.Eventually(t, 10*time.Second, "crontabs gone from /openapi/v3", func() (bool, string) {
		idx := openAPIV3Index(t, d)
		return !strings.Contains(idx, openapiPath), idx
	})
}

func openAPIV3Index(t *testing.T, d *devplane) string {
	t.Helper()
	var idx struct {
		Paths map[string]any `json:"paths"`
	}
	if err := json.Unmarshal([]byte(d.mustKubectl(t, "", "get", "--raw", "/openapi/v3")), &idx); err != nil {
		t.Fatal(err)
	}
	var paths []string
	for p := range idx.Paths {
		paths = append(paths, p)
	}
	return strings.Join(paths, " ")
}

const nonStructuralCRD = `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: loose.toys.example.com
spec:
  group: toys.example.com
  scope: Namespaced
  names: {plural: loose, kind: Loose}
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            properties:
              size: {type: integer}
`

// TestNonStructuralCRDRejectedWithKubectl: v1 CRDs must be structural.
func TestNonStructuralCRDRejectedWithKubectl(t *testing.T) {
	d := start(t)
	stderr := d.failKubectl(t, nonStructuralCRD, "create", "-f", "-")
	for _, want := range []string{
		`The CustomResourceDefinition "loose.toys.example.com" is invalid: `,
		// One schema for all versions: kube reports it at spec.validation.
		`spec.validation.openAPIV3Schema.properties[spec].type: Required value: must not be empty for specified object fields`,
	} {
		if !strings.Contains(stderr, want) {
			t.Errorf("non-structural CRD error lacks %q:\n%s", want, stderr)
		}
	}
	if r := d.kubectl(t, "", "get", "crd", "loose.toys.example.com"); r.Code == 0 {
		t.Errorf("the non-structural CRD was stored")
	}
}

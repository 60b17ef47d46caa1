package extensions_test

import (
	"context"
	"io"
	"net/http"
	"os"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
)

func TestServerSideApplyAndMediaTypes(t *testing.T) {
	d, _ := startWithCronTabs(t)

	d.mustKubectl(t, "", "apply", "--server-side", "-f", "testdata/crontab.yaml")
	out := d.mustKubectl(t, "", "get", "ct", "nightly", "--show-managed-fields", "-o", "jsonpath={.metadata.managedFields[*].manager} {.metadata.managedFields[*].operation}")
	if !strings.Contains(out, "kubectl") || !strings.Contains(out, "Apply") {
		t.Errorf("managedFields after server-side apply: %q", out)
	}
	d.mustKubectl(t, strings.Replace(mustRead(t, "testdata/crontab.yaml"), "replicas: 2", "replicas: 6", 1),
		"apply", "--server-side", "-f", "-")
	if got := d.mustKubectl(t, "", "get", "ct", "nightly", "-o", "jsonpath={.spec.replicas}"); got != "6" {
		t.Errorf("replicas after re-apply: %q", got)
	}

	// kube's reset fields for custom resources with a status subresource:
	// an apply to the main resource neither sets nor owns the status, one
	// to /status neither sets nor owns the spec.
	d.mustKubectl(t, mustRead(t, "testdata/crontab.yaml")+"status:\n  replicas: 4\n",
		"apply", "--server-side", "--field-manager", "with-status", "--force-conflicts", "-f", "-")
	d.mustKubectl(t, strings.Replace(mustRead(t, "testdata/crontab.yaml"), "replicas: 2", "replicas: 8", 1)+"status:\n  replicas: 4\n",
		"apply", "--server-side", "--subresource", "status", "--field-manager", "status-applier", "-f", "-")
	out = d.mustKubectl(t, "", "get", "ct", "nightly", "--show-managed-fields", "-o",
		`go-template={{range .metadata.managedFields}}{{.manager}}={{.fieldsV1}};{{end}} spec={{.spec.replicas}} status={{.status.replicas}}`)
	for _, entry := range strings.Split(out, ";") {
		switch {
		case strings.HasPrefix(entry, "with-status=") && strings.Contains(entry, "f:status"):
			t.Errorf("an apply to the main resource owns status fields: %s", entry)
		case strings.HasPrefix(entry, "status-applier=") && (strings.Contains(entry, "f:spec") || !strings.Contains(entry, "f:status")):
			t.Errorf("an apply to /status: %s, want status fields only", entry)
		}
	}
	if !strings.HasSuffix(out, "spec=2 status=4") {
		t.Errorf("after the applies with and to status: %q, want spec.replicas 2 (not the 8 sent to /status) and status.replicas 4", out)
	}

	// No protobuf for custom resources: 415 for bodies, 406 when it is all
	// the client accepts; JSON is chosen when offered too.
	cfg := rest.CopyConfig(d.config)
	client, err := rest.HTTPClientFor(cfg)
	if err != nil {
		t.Fatal(err)
	}
	url := cfg.Host + "/apis/stable.example.com/v1/namespaces/default/crontabs"
	do := func(method, contentType, accept string) int {
		req, _ := http.NewRequest(method, url, strings.NewReader("\x6b\x38\x73\x00"))
		if contentType != "" {
			req.Header.Set("Content-Type", contentType)
		}
		req.Header.Set("Accept", accept)
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	pb := "application/vnd.kubernetes.protobuf"
	if code := do(http.MethodPost, pb, "application/json"); code != http.StatusUnsupportedMediaType {
		t.Errorf("protobuf body: %d", code)
	}
	if code := do(http.MethodGet, "", pb); code != http.StatusNotAcceptable {
		t.Errorf("protobuf-only Accept: %d", code)
	}
	if code := do(http.MethodGet, "", pb+", application/json"); code != http.StatusOK {
		t.Errorf("protobuf then JSON Accept: %d", code)
	}
}

var readFile = os.ReadFile

func mustRead(t *testing.T, path string) string {
	t.Helper()
	data, err := readFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// TestServerSideApplyUnknownFieldsE2E: apply types the patch with the CRD's
// schema, so an unknown field is structured-merge-diff's error whatever
// fieldValidation asks (as kube's field validation conformance specs
// expect), and Strict still refuses duplicate fields afterwards.
func TestServerSideApplyUnknownFieldsE2E(t *testing.T) {
	_, ext := startWithCronTabs(t)

	apply := func(body, validation string) (int, string) {
		var code int
		raw, _ := ext.Discovery().RESTClient().Patch(types.ApplyPatchType).
			AbsPath("/apis/stable.example.com/v1/namespaces/default/crontabs/applied").
			Param("fieldManager", "field_validation_mgr").Param("fieldValidation", validation).
			Body([]byte(body)).Do(context.Background()).StatusCode(&code).Raw()
		return code, string(raw)
	}
	const unknown = `
apiVersion: stable.example.com/v1
kind: CronTab
metadata:
  name: applied
unknownField: unknown
spec:
  cronSpec: "* * * * */5"
  image: busybox`
	for _, validation := range []string{"Strict", "Ignore"} {
		code, body := apply(unknown, validation)
		if code != http.StatusInternalServerError || !strings.Contains(body, `failed to create typed patch object (/applied; stable.example.com/v1, Kind=CronTab): .unknownField: field not declared in schema`) {
			t.Errorf("apply with an unknown field, %s: %d %s", validation, code, body)
		}
	}
	const duplicate = `
apiVersion: stable.example.com/v1
kind: CronTab
metadata:
  name: applied
spec:
  cronSpec: "* * * * */5"
  image: busybox
  image: alpine`
	if code, body := apply(duplicate, "Strict"); code != http.StatusBadRequest || !strings.Contains(body, `line 9: key \"image\" already set in map`) {
		t.Errorf("apply with a duplicate field: %d %s", code, body)
	}
	// kube checks for duplicates once the apply succeeded: the unknown
	// field is the error.
	if code, body := apply(unknown+"\n  image: alpine", "Strict"); code != http.StatusInternalServerError || !strings.Contains(body, `.unknownField: field not declared in schema`) {
		t.Errorf("apply with an unknown and a duplicate field: %d %s", code, body)
	}
	valid := strings.Replace(unknown, "unknownField: unknown\n", "", 1)
	if code, body := apply(valid, "Strict"); code != http.StatusCreated {
		t.Fatalf("apply of a valid CronTab: %d %s", code, body)
	}
	if code, body := apply(unknown+"\n  image: alpine", "Strict"); code != http.StatusInternalServerError || !strings.Contains(body, `.unknownField: field not declared in schema`) {
		t.Errorf("apply over an existing CronTab with an unknown and a duplicate field: %d %s", code, body)
	}
}

// TestCustomResourcePatchFieldValidationE2E: JSON and merge patches of a
// custom resource check the patched object's fields against the schema,
// as kube's strict decoding of it does: Strict is kube's 422 on "patch",
// Warn a warning (and the field pruned).
func TestCustomResourcePatchFieldValidationE2E(t *testing.T) {
	d, _ := startWithCronTabs(t)
	d.mustKubectl(t, "", "apply", "-f", "testdata/crontab.yaml")

	client, err := rest.HTTPClientFor(d.config)
	if err != nil {
		t.Fatal(err)
	}
	patch := func(patchType types.PatchType, body, validation string) (int, string, string) {
		url := d.config.Host + "/apis/stable.example.com/v1/namespaces/default/crontabs/nightly?fieldValidation=" + validation
		req, _ := http.NewRequest(http.MethodPatch, url, strings.NewReader(body))
		req.Header.Set("Content-Type", string(patchType))
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		raw, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(raw), resp.Header.Get("Warning")
	}
	for _, p := range []struct {
		patchType types.PatchType
		body      string
	}{
		{types.MergePatchType, `{"spec":{"foo":"x"}}`},
		{types.JSONPatchType, `[{"op":"add","path":"/spec/foo","value":"x"}]`},
	} {
		code, body, _ := patch(p.patchType, p.body, "Strict")
		if code != http.StatusUnprocessableEntity || !strings.Contains(body, `patch: Invalid value: `) ||
			!strings.Contains(body, `strict decoding error: unknown field \"spec.foo\"`) {
			t.Errorf("%s, Strict: %d %s", p.patchType, code, body)
		}
		code, body, warning := patch(p.patchType, p.body, "Warn")
		if code != http.StatusOK || !strings.Contains(warning, `unknown field \"spec.foo\"`) || strings.Contains(body, `"foo"`) {
			t.Errorf("%s, Warn: %d, warning %q, %s", p.patchType, code, warning, body)
		}
	}
}

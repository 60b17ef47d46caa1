package patch

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"

	"github.com/devplane/devplane/apiserver/openapi"
)

const configMapApply = `apiVersion: v1
kind: ConfigMap
metadata:
  name: cfg
  namespace: default
data:
  owner: %s
`

func cmBody(owner string) []byte { return []byte(strings.Replace(configMapApply, "%s", owner, 1)) }

func ssa(t *testing.T, f *FieldManager, live runtime.Object, body []byte, manager string, force bool) runtime.Object {
	t.Helper()
	out, err := f.ApplyPatch(live, body, manager, force, "")
	if err != nil {
		t.Fatalf("apply by %s: %v", manager, err)
	}
	return out
}

// entries returns managedFields as "manager/operation/subresource" with the
// fields each owns.
func entries(t *testing.T, obj runtime.Object) map[string]string {
	t.Helper()
	var mf []metav1.ManagedFieldsEntry
	accessor, err := meta.Accessor(obj)
	if err != nil {
		t.Fatal(err)
	}
	mf = accessor.GetManagedFields()
	out := map[string]string{}
	for _, e := range mf {
		out[e.Manager+"/"+string(e.Operation)+"/"+e.Subresource] = string(e.FieldsV1.Raw)
	}
	return out
}

func TestApplyCreatesWithApplyEntry(t *testing.T) {
	f := BuiltinFieldManager(configMapGVK)
	out := ssa(t, f, nil, cmBody("first"), "first", false)
	cm := out.(*corev1.ConfigMap)
	if cm.Name != "cfg" || cm.Data["owner"] != "first" {
		t.Fatalf("applied object = %+v", cm)
	}
	got := entries(t, cm)
	fields, ok := got["first/Apply/"]
	if len(got) != 1 || !ok || !strings.Contains(fields, `"f:owner"`) {
		t.Fatalf("managedFields = %v", got)
	}
	if cm.ManagedFields[0].APIVersion != "v1" || cm.ManagedFields[0].Time == nil {
		t.Fatalf("entry = %+v", cm.ManagedFields[0])
	}
}

func TestApplyConflictNamesFieldAndManager(t *testing.T) {
	f := BuiltinFieldManager(configMapGVK)
	live := ssa(t, f, nil, cmBody("first"), "first", false)
	_, err := f.ApplyPatch(live, cmBody("second"), "second", false, "")
	status := wantStatus(t, err, http.StatusConflict, metav1.StatusReasonConflict)
	if want := `Apply failed with 1 conflict: conflict with "first": .data.owner`; status.ErrStatus.Message != want {
		t.Fatalf("message = %q, want %q", status.ErrStatus.Message, want)
	}
	causes := status.ErrStatus.Details.Causes
	if len(causes) != 1 || causes[0].Type != metav1.CauseTypeFieldManagerConflict ||
		causes[0].Field != ".data.owner" || causes[0].Message != `conflict with "first"` {
		t.Fatalf("causes = %+v", causes)
	}

	forced, err := f.ApplyPatch(live, cmBody("second"), "second", true, "")
	if err != nil {
		t.Fatal(err)
	}
	if forced.(*corev1.ConfigMap).Data["owner"] != "second" {
		t.Fatalf("data = %v", forced.(*corev1.ConfigMap).Data)
	}
	got := entries(t, forced)
	if !strings.Contains(got["second/Apply/"], `"f:owner"`) || strings.Contains(got["first/Apply/"], `"f:owner"`) {
		t.Fatalf("force should move .data.owner to second: %v", got)
	}
}

func TestApplySameValueIsShared(t *testing.T) {
	f := BuiltinFieldManager(configMapGVK)
	live := ssa(t, f, nil, cmBody("same"), "first", false)
	out := ssa(t, f, live, cmBody("same"), "second", false)
	got := entries(t, out)
	if !strings.Contains(got["first/Apply/"], `"f:owner"`) || !strings.Contains(got["second/Apply/"], `"f:owner"`) {
		t.Fatalf("both appliers of an equal value co-own it: %v", got)
	}
}

func TestUpdateThenApplyKeepsBothManagers(t *testing.T) {
	f := BuiltinFieldManager(configMapGVK)
	created := &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: "cfg", Namespace: "default"},
		Data:       map[string]string{"edited": "yes"},
	}
	live, err := f.UpdateManagedFields(nil, created, ManagerFromUserAgent("kubectl-create/v1.32.0 (linux/amd64) kubernetes/abc"), "")
	if err != nil {
		t.Fatal(err)
	}
	got := entries(t, live)
	if !strings.Contains(got["kubectl-create/Update/"], `"f:edited"`) || len(got) != 1 {
		t.Fatalf("managedFields after create = %v", got)
	}

	out := ssa(t, f, live, cmBody("applier"), "applier", false)
	cm := out.(*corev1.ConfigMap)
	if cm.Data["edited"] != "yes" || cm.Data["owner"] != "applier" {
		t.Fatalf("data = %v", cm.Data)
	}
	got = entries(t, out)
	if !strings.Contains(got["kubectl-create/Update/"], `"f:edited"`) || !strings.Contains(got["applier/Apply/"], `"f:owner"`) {
		t.Fatalf("managedFields = %v", got)
	}

	// An Update of a field owned by an applier takes it over without conflict.
	edited := cm.DeepCopy()
	edited.Data["owner"] = "edited"
	out, err = f.UpdateManagedFields(cm, edited, "kubectl-edit", "")
	if err != nil {
		t.Fatal(err)
	}
	got = entries(t, out)
	if !strings.Contains(got["kubectl-edit/Update/"], `"f:owner"`) || strings.Contains(got["applier/Apply/"], `"f:owner"`) {
		t.Fatalf("managedFields after edit = %v", got)
	}
}

func TestUpdateOnStatusSubresourceRecordsSubresource(t *testing.T) {
	f := BuiltinFieldManager(deploymentGVK)
	live := testDeployment()
	updated := live.DeepCopy()
	updated.Status.Replicas = 3
	out, err := f.UpdateManagedFields(live, updated, "controller", "status")
	if err != nil {
		t.Fatal(err)
	}
	mf := out.(metav1.Object).GetManagedFields()
	if len(mf) != 1 || mf[0].Subresource != "status" || mf[0].Operation != metav1.ManagedFieldsOperationUpdate ||
		!strings.Contains(string(mf[0].FieldsV1.Raw), `"f:replicas"`) {
		t.Fatalf("managedFields = %+v", mf)
	}
}

func TestClientSideApplyUpgradesToServerSide(t *testing.T) {
	f := BuiltinFieldManager(configMapGVK)
	// kubectl apply (client-side): the object carries the last-applied
	// annotation and an Update entry for kubectl-client-side-apply.
	lastApplied := `{"apiVersion":"v1","data":{"owner":"csa"},"kind":"ConfigMap","metadata":{"annotations":{},"name":"cfg","namespace":"default"}}`
	created := &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: "cfg", Namespace: "default",
			Annotations: map[string]string{corev1.LastAppliedConfigAnnotation: lastApplied}},
		Data: map[string]string{"owner": "csa"},
	}
	live, err := f.UpdateManagedFields(nil, created, "kubectl-client-side-apply", "")
	if err != nil {
		t.Fatal(err)
	}

	// Another manager conflicts with kubectl-client-side-apply...
	_, err = f.ApplyPatch(live, cmBody("ssa"), "someone", false, "")
	status := wantStatus(t, err, http.StatusConflict, metav1.StatusReasonConflict)
	if !strings.Contains(status.ErrStatus.Message, `conflict with "kubectl-client-side-apply"`) {
		t.Fatalf("message = %q", status.ErrStatus.Message)
	}

	// ...but kubectl apply --server-side (manager "kubectl") takes over what
	// the annotation says it applied, and keeps the annotation current.
	out := ssa(t, f, live, cmBody("ssa"), "kubectl", false)
	cm := out.(*corev1.ConfigMap)
	if cm.Data["owner"] != "ssa" {
		t.Fatalf("data = %v", cm.Data)
	}
	got := entries(t, out)
	if !strings.Contains(got["kubectl/Apply/"], `"f:owner"`) || strings.Contains(got["kubectl-client-side-apply/Update/"], `"f:owner"`) {
		t.Fatalf("managedFields = %v", got)
	}
	var annotation map[string]any
	if err := json.Unmarshal([]byte(cm.Annotations[corev1.LastAppliedConfigAnnotation]), &annotation); err != nil {
		t.Fatalf("last-applied annotation: %v", err)
	}
	if annotation["data"].(map[string]any)["owner"] != "ssa" {
		t.Fatalf("last-applied annotation not updated: %v", annotation)
	}
}

func TestApplyRequiresFieldManager(t *testing.T) {
	_, err := BuiltinFieldManager(configMapGVK).ApplyPatch(nil, cmBody("x"), "", false, "")
	status := wantStatus(t, err, http.StatusUnprocessableEntity, metav1.StatusReasonInvalid)
	if want := `PatchOptions.meta.k8s.io "" is invalid: fieldManager: Required value: is required for apply patch`; status.ErrStatus.Message != want {
		t.Fatalf("message = %q", status.ErrStatus.Message)
	}
}

func TestApplyBadBodies(t *testing.T) {
	f := BuiltinFieldManager(configMapGVK)
	_, err := f.ApplyPatch(nil, []byte("{not yaml: ["), "m", false, "")
	status := wantStatus(t, err, http.StatusBadRequest, metav1.StatusReasonBadRequest)
	if !strings.HasPrefix(status.ErrStatus.Message, "error decoding patch: ") {
		t.Fatalf("message = %q", status.ErrStatus.Message)
	}
	_, err = f.ApplyPatch(nil, []byte(`{"apiVersion":"v2","kind":"ConfigMap","metadata":{"name":"x"}}`), "m", false, "")
	wantStatus(t, err, http.StatusBadRequest, metav1.StatusReasonBadRequest)
	_, err = f.ApplyPatch(nil, []byte(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"x"},"spec":{"x":1}}`), "m", false, "")
	if err == nil || !strings.Contains(err.Error(), "field not declared in schema") {
		t.Fatalf("unknown field: err = %v", err)
	}
}

func TestCustomResourceApplyWithDeducedTypes(t *testing.T) {
	f := NewCustomFieldManager(widgetGVK, nil)
	body := []byte(`{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"w","namespace":"default"},"spec":{"size":1}}`)
	live := ssa(t, f, nil, body, "first", false)
	if got := entries(t, live); !strings.Contains(got["first/Apply/"], `"f:spec"`) {
		t.Fatalf("managedFields = %v", got)
	}
	_, err := f.ApplyPatch(live, []byte(strings.Replace(string(body), `"size":1`, `"size":2`, 1)), "second", false, "")
	status := wantStatus(t, err, http.StatusConflict, metav1.StatusReasonConflict)
	if !strings.Contains(status.ErrStatus.Message, `conflict with "first"`) {
		t.Fatalf("message = %q", status.ErrStatus.Message)
	}

	patched, _, err := Apply(live, widgetGVK, types.MergePatchType, []byte(`{"spec":{"color":"red"}}`), "")
	if err != nil {
		t.Fatal(err)
	}
	out, err := f.UpdateManagedFields(live, patched, "kubectl-patch", "")
	if err != nil {
		t.Fatal(err)
	}
	got := entries(t, out)
	if _, ok := got["kubectl-patch/Update/"]; !ok || got["first/Apply/"] == "" {
		t.Fatalf("managedFields = %v", got)
	}
}

func TestManagerFromUserAgent(t *testing.T) {
	cases := map[string]string{
		"kubectl-client-side-apply/v1.32.0 (linux/amd64) kubernetes/70d3cc9": "kubectl-client-side-apply",
		"kubectl-edit/v1.32.0 (darwin/arm64) kubernetes/70d3cc9":             "kubectl-edit",
		"kubectl-patch/v1.32.0":  "kubectl-patch",
		"curl":                   "curl",
		"bad\x00agent/1":         "badagent",
		strings.Repeat("m", 200): strings.Repeat("m", 128),
		"":                       "",
	}
	for ua, want := range cases {
		if got := ManagerFromUserAgent(ua); got != want {
			t.Errorf("ManagerFromUserAgent(%q) = %q, want %q", ua, got, want)
		}
	}
}

// BenchmarkBuiltinTypeConverter measures building the converter of every
// kind (what the first write of any kind used to cost, on top of building
// every definition); see BenchmarkKindTypeConverter for what it costs now.
func BenchmarkBuiltinTypeConverter(b *testing.B) {
	openapi.Definitions() // kept once built; not what is measured
	for b.Loop() {
		if _, err := newBuiltinTypeConverter(); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Microseconds())/1000/float64(b.N), "ms/op")
}

func BenchmarkApplyConfigMap(b *testing.B) {
	f := BuiltinFieldManager(configMapGVK)
	live, err := f.ApplyPatch(nil, cmBody("first"), "first", false, "")
	if err != nil {
		b.Fatal(err)
	}
	body := cmBody("again")
	for b.Loop() {
		if _, err := f.ApplyPatch(live, body, "first", false, ""); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N), "µs/op")
}

// BenchmarkCreateConfigMapManagedFields measures the managedFields entry a
// ConfigMap create records (what every create of the load test pays):
// through UpdateManagedFields, and through apimachinery's field manager,
// all UpdateManagedFields did before its create shortcut.
func BenchmarkCreateConfigMapManagedFields(b *testing.B) {
	f := BuiltinFieldManager(configMapGVK)
	created := &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: "cfg-0001", Namespace: "default"},
		Data:       map[string]string{"payload": strings.Repeat("x", 64)},
	}
	b.Run("UpdateManagedFields", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := f.UpdateManagedFields(nil, created.DeepCopy(), "devplane-bench", ""); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("chain", func(b *testing.B) {
		m, err := f.forSubresource("")
		if err != nil {
			b.Fatal(err)
		}
		b.ReportAllocs()
		for b.Loop() {
			if _, err := m.Update(f.newEmpty(), created.DeepCopy(), "devplane-bench"); err != nil {
				b.Fatal(err)
			}
		}
	})
}

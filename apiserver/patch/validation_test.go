package patch

import (
	stdjson "encoding/json"
	"math/rand/v2"
	"net/http"
	"reflect"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/yaml"

	"github.com/devplane/devplane/apiserver/testenv/crdgen"
)

const deploymentWithUnknownJSON = `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"web"},
"spec":{"foo":1,"bar":2,"replicas":1,"replicas":2,"selector":{"matchLabels":{"app":"web"}}}}`

const deploymentWithUnknownYAML = `apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
spec:
  foo: 1
  replicas: 1
  replicas: 2
  selector:
    matchLabels:
      app: web
`

func TestDecodeBodyStrictJSON(t *testing.T) {
	_, _, err := DecodeBody([]byte(deploymentWithUnknownJSON), false, deploymentGVK, metav1.FieldValidationStrict)
	status := wantStatus(t, err, http.StatusBadRequest, metav1.StatusReasonBadRequest)
	want := `Deployment in version "v1" cannot be handled as a Deployment: strict decoding error: ` +
		`unknown field "spec.foo", unknown field "spec.bar", duplicate field "spec.replicas"`
	if status.ErrStatus.Message != want {
		t.Fatalf("message =\n%q\nwant\n%q", status.ErrStatus.Message, want)
	}
}

func TestDecodeBodyWarnJSON(t *testing.T) {
	obj, warnings, err := DecodeBody([]byte(deploymentWithUnknownJSON), false, deploymentGVK, "")
	if err != nil {
		t.Fatal(err)
	}
	want := []string{`unknown field "spec.foo"`, `unknown field "spec.bar"`, `duplicate field "spec.replicas"`}
	if !reflect.DeepEqual(warnings, want) {
		t.Fatalf("warnings = %q, want %q", warnings, want)
	}
	if d := obj.(*appsv1.Deployment); d.Name != "web" || *d.Spec.Replicas != 2 {
		t.Fatalf("decoded = %+v", d)
	}
}

func TestDecodeBodyYAML(t *testing.T) {
	_, _, err := DecodeBody([]byte(deploymentWithUnknownYAML), true, deploymentGVK, metav1.FieldValidationStrict)
	status := wantStatus(t, err, http.StatusBadRequest, metav1.StatusReasonBadRequest)
	if want := `Deployment in version "v1" cannot be handled as a Deployment: strict decoding error: yaml: unmarshal errors:
  line 8: key "replicas" already set in map, unknown field "spec.foo"`; status.ErrStatus.Message != want {
		t.Fatalf("message =\n%s\nwant\n%s", status.ErrStatus.Message, want)
	}

	_, warnings, err := DecodeBody([]byte(deploymentWithUnknownYAML), true, deploymentGVK, metav1.FieldValidationWarn)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{`line 8: key "replicas" already set in map`, `unknown field "spec.foo"`}
	if !reflect.DeepEqual(warnings, want) {
		t.Fatalf("warnings = %q, want %q", warnings, want)
	}
}

func TestDecodeBodyIgnore(t *testing.T) {
	obj, warnings, err := DecodeBody([]byte(deploymentWithUnknownJSON), false, deploymentGVK, metav1.FieldValidationIgnore)
	if err != nil || len(warnings) != 0 {
		t.Fatalf("Ignore: warnings %q, err %v", warnings, err)
	}
	if obj.(*appsv1.Deployment).Name != "web" {
		t.Fatalf("decoded = %+v", obj)
	}
	_, _, err = DecodeBody([]byte(`{}`), false, deploymentGVK, "Loose")
	wantStatus(t, err, http.StatusBadRequest, metav1.StatusReasonBadRequest)
}

func TestDecodeBodyCustomResource(t *testing.T) {
	obj, _, err := DecodeBody([]byte(`{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"w"},"spec":{"size":1}}`), false, widgetGVK, metav1.FieldValidationStrict)
	if err != nil {
		t.Fatal(err)
	}
	if u := obj.(*unstructured.Unstructured); u.GetName() != "w" || u.GetKind() != "Widget" {
		t.Fatalf("decoded = %v", u.Object)
	}
	_, _, err = DecodeBody([]byte(`{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"w"},"spec":{},"spec":{}}`), false, widgetGVK, metav1.FieldValidationStrict)
	status := wantStatus(t, err, http.StatusBadRequest, metav1.StatusReasonBadRequest)
	if !strings.Contains(status.ErrStatus.Message, `duplicate field "spec"`) {
		t.Fatalf("message = %q", status.ErrStatus.Message)
	}
}

func TestPatchStrictUnknownFields(t *testing.T) {
	cases := []struct {
		patchType types.PatchType
		body      string
		want      string // the strict decoding part of kube's 422 on "patch"
	}{
		{types.MergePatchType, `{"spec":{"foo":1,"replicas":3}}`, `strict decoding error: unknown field "spec.foo"`},
		{types.StrategicMergePatchType, `{"spec":{"foo":1,"bar":2}}`, `strict decoding error: unknown field "spec.bar", unknown field "spec.foo"`},
		{types.StrategicMergePatchType, `{"spec":{"paused":true,"paused":false}}`, `strict decoding error: duplicate field "spec.paused"`},
		{types.JSONPatchType, `[{"op":"add","path":"/spec/foo","value":1,"extra":true}]`, `strict decoding error: json patch unknown field "[0].extra", unknown field "spec.foo"`},
	}
	for _, c := range cases {
		_, _, err := Apply(testDeployment(), deploymentGVK, c.patchType, []byte(c.body), metav1.FieldValidationStrict)
		status := wantStatus(t, err, http.StatusUnprocessableEntity, metav1.StatusReasonInvalid)
		causes := status.ErrStatus.Details.Causes
		if len(causes) != 1 || causes[0].Field != "patch" || !strings.HasSuffix(causes[0].Message, ": "+c.want) {
			t.Errorf("%s %s: causes = %+v, want message ending %q", c.patchType, c.body, causes, c.want)
		}
		if !strings.HasPrefix(status.ErrStatus.Message, ` "" is invalid: patch: Invalid value: `) {
			t.Errorf("%s: message = %q", c.patchType, status.ErrStatus.Message)
		}

		obj, warnings, err := Apply(testDeployment(), deploymentGVK, c.patchType, []byte(c.body), metav1.FieldValidationWarn)
		if err != nil {
			t.Fatalf("%s Warn: %v", c.patchType, err)
		}
		if got := "strict decoding error: " + strings.Join(warnings, ", "); got != c.want {
			t.Errorf("%s Warn: warnings %q, want %q", c.patchType, warnings, c.want)
		}
		if obj.(*appsv1.Deployment).Name != "web" {
			t.Errorf("%s Warn: object = %+v", c.patchType, obj)
		}

		_, warnings, err = Apply(testDeployment(), deploymentGVK, c.patchType, []byte(c.body), metav1.FieldValidationIgnore)
		if err != nil || len(warnings) != 0 {
			t.Errorf("%s Ignore: warnings %q, err %v", c.patchType, warnings, err)
		}
	}
}

func TestPatchUndecodableBodyIs400(t *testing.T) {
	for _, pt := range []types.PatchType{types.MergePatchType, types.StrategicMergePatchType} {
		for _, directive := range []string{metav1.FieldValidationStrict, metav1.FieldValidationIgnore} {
			_, _, err := Apply(&corev1.ConfigMap{}, configMapGVK, pt, []byte(`{"data":`), directive)
			wantStatus(t, err, http.StatusBadRequest, metav1.StatusReasonBadRequest)
		}
	}
}

func TestPatchWrongTypeIs422(t *testing.T) {
	_, _, err := Apply(testDeployment(), deploymentGVK, types.MergePatchType, []byte(`{"spec":{"replicas":"three"}}`), metav1.FieldValidationStrict)
	wantStatus(t, err, http.StatusUnprocessableEntity, metav1.StatusReasonInvalid)
}

func TestCheckApplyBody(t *testing.T) {
	body := []byte("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cfg\ndata:\n  a: x\n  a: y\n")
	_, err := CheckApplyBody(body, metav1.FieldValidationStrict)
	status := wantStatus(t, err, http.StatusBadRequest, metav1.StatusReasonBadRequest)
	if want := "error strict decoding patch: error converting YAML to JSON: yaml: unmarshal errors:\n  line 7: key \"a\" already set in map"; status.ErrStatus.Message != want {
		t.Fatalf("message = %q", status.ErrStatus.Message)
	}
	warnings, err := CheckApplyBody(body, metav1.FieldValidationWarn)
	if err != nil || !reflect.DeepEqual(warnings, []string{`line 7: key "a" already set in map`}) {
		t.Fatalf("Warn: warnings %q, err %v", warnings, err)
	}
	warnings, err = CheckApplyBody(body, metav1.FieldValidationIgnore)
	if err != nil || warnings != nil {
		t.Fatalf("Ignore: warnings %q, err %v", warnings, err)
	}
	warnings, err = CheckApplyBody([]byte("a: 1\nb: 2\n"), metav1.FieldValidationStrict)
	if err != nil || warnings != nil {
		t.Fatalf("clean body: warnings %q, err %v", warnings, err)
	}
}

// TestJSONWithoutDuplicatesAgreesWithYAML: the fast path says "no
// duplicates" only where kube's strict YAML decoding finds no error, and
// never for a body with a repeated member name.
func TestJSONWithoutDuplicatesAgreesWithYAML(t *testing.T) {
	var docs []string
	for _, crd := range crdgen.Provider(20, 3) {
		data, err := stdjson.Marshal(crd)
		if err != nil {
			t.Fatal(err)
		}
		docs = append(docs, string(data))
	}
	docs = append(docs,
		`{}`, ` {"a":1} `, `{"a":{"a":{"a":[{"a":1},{"a":2}]}}}`, `{"a":[1,"b",{"b":[]},[{"c":{}}]],"b":"x,y{}[]\"a\":"}`,
		`{"a":"\u00e9\n\t\"\\\/"}`, `{"a":"\b\f\r\u0041 \\n"}`, "{\t\"a\":\n\t1}", `{"k":"emoji \ud83d\ude00"}`, `{"\u0061":1,"a":2}`, `{"a\"b":1}`, `[{"a":1}]`, `"a"`,
		`{"a":1,"b":{"c":1,"c":2}}`, `{"a":1,"a":1}`, `{"l":[{"x":1,"y":2,"x":3}]}`, `{"a":1,,}`, `a: 1`,
	)
	// Provider CRDs with one member repeated: at the top, or deep inside
	// at a random place.
	var repeated []string
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range 20 {
		doc := docs[i]
		repeated = append(repeated, strings.Replace(doc, `{"apiVersion":`, `{"kind":"X","apiVersion":`, 1))
		n := strings.Count(doc, `"type":"string"`)
		k := rng.IntN(n)
		at := 0
		for range k + 1 {
			at += strings.Index(doc[at:], `"type":"string"`) + 1
		}
		repeated = append(repeated, doc[:at-1]+`"type":"string",`+doc[at-1:])
	}
	for _, doc := range docs {
		fast := jsonWithoutDuplicates([]byte(doc))
		strictErr := yaml.UnmarshalStrict([]byte(doc), &map[string]any{})
		if fast && strictErr != nil {
			t.Errorf("fast path passed what strict YAML refuses (%v): %.200s", strictErr, doc)
		}
	}
	for _, doc := range repeated {
		if jsonWithoutDuplicates([]byte(doc)) {
			t.Errorf("fast path passed a repeated member: %.120s", doc)
		}
		if yaml.UnmarshalStrict([]byte(doc), &map[string]any{}) == nil {
			t.Errorf("strict YAML passed a repeated member: %.120s", doc)
		}
	}
	// The common case takes the fast path.
	for _, doc := range docs[:20] {
		if !jsonWithoutDuplicates([]byte(doc)) {
			t.Errorf("provider CRD not on the fast path: %.120s", doc)
		}
	}
}

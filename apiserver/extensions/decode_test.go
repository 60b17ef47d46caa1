package extensions

import (
	"fmt"
	"math"
	"reflect"
	"testing"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/apimachinery/pkg/types"

	"github.com/devplane/devplane/apiserver/crdschema"
	"github.com/devplane/devplane/apiserver/testenv/crdgen"
)

// TestDecodeStoredCRDMatchesCodec checks the CRD store's fast decode (with
// the server's scheme and its defaulting) against the store's codec, on
// provider CRDs as the server stores them.
func TestDecodeStoredCRDMatchesCodec(t *testing.T) {
	e := &Extensions{scheme: newScheme()}
	e.codecs = serializer.NewCodecFactory(e.scheme)
	codec := e.crdCodec()
	now := metav1.NewTime(time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC))
	for i, crd := range crdgen.ProviderCRDs(50, 11) {
		crdschema.DefaultCRD(crd)
		crd.UID = types.UID(fmt.Sprintf("uid-%d", i))
		crd.Generation = 1
		crd.CreationTimestamp = now
		crd.ManagedFields = []metav1.ManagedFieldsEntry{{Manager: "kubectl", Operation: metav1.ManagedFieldsOperationApply,
			APIVersion: "apiextensions.k8s.io/v1", Time: &now, FieldsType: "FieldsV1", FieldsV1: &metav1.FieldsV1{Raw: []byte(`{"f:spec":{"f:group":{}}}`)}}}
		crd.Status.AcceptedNames = crd.Spec.Names
		crd.Status.Conditions = []apiextensionsv1.CustomResourceDefinitionCondition{{Type: apiextensionsv1.Established,
			Status: apiextensionsv1.ConditionTrue, LastTransitionTime: now, Reason: "InitialNamesAccepted", Message: "the initial names have been accepted"}}
		data, err := runtime.Encode(codec, crd)
		if err != nil {
			t.Fatal(err)
		}
		want := &apiextensionsv1.CustomResourceDefinition{}
		if _, _, err := codec.Decode(data, nil, want); err != nil {
			t.Fatal(err)
		}
		got := &apiextensionsv1.CustomResourceDefinition{}
		handled, err := e.decodeStoredCRD(data, nil, got)
		if err != nil || !handled {
			t.Fatalf("%s: handled %v, err %v", crd.Name, handled, err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("%s: fast decode differs from the codec", crd.Name)
		}

		// Given the cached revision it revises, the same generation's spec
		// is that revision's (its schemas shared); another generation's or
		// another UID's is decoded.
		for _, tc := range []struct {
			name   string
			like   func(*apiextensionsv1.CustomResourceDefinition)
			shared bool
		}{
			{"same generation", func(*apiextensionsv1.CustomResourceDefinition) {}, true},
			{"older generation", func(l *apiextensionsv1.CustomResourceDefinition) { l.Generation = 2 }, false},
			{"another UID", func(l *apiextensionsv1.CustomResourceDefinition) { l.UID = "other" }, false},
		} {
			like := got.DeepCopy()
			tc.like(like)
			again := &apiextensionsv1.CustomResourceDefinition{}
			if handled, err := e.decodeStoredCRD(data, like, again); err != nil || !handled {
				t.Fatalf("%s, %s: handled %v, err %v", crd.Name, tc.name, handled, err)
			}
			if !reflect.DeepEqual(again, want) {
				t.Fatalf("%s, %s: decode given the cached revision differs from the codec", crd.Name, tc.name)
			}
			if shared := again.Spec.Versions[0].Schema.OpenAPIV3Schema == like.Spec.Versions[0].Schema.OpenAPIV3Schema; shared != tc.shared {
				t.Fatalf("%s, %s: schema shared %v, want %v", crd.Name, tc.name, shared, tc.shared)
			}
		}
	}
	// Another kind is the codec's to decode.
	if handled, _ := e.decodeStoredCRD([]byte(`{"apiVersion":"apiextensions.k8s.io/v1beta1","kind":"CustomResourceDefinition"}`), nil, &apiextensionsv1.CustomResourceDefinition{}); handled {
		t.Fatal("v1beta1 handled")
	}
}

// The CRD store's codec writes CRDs with crdschema.AppendCRDJSON: the
// bytes of the serializer it wraps, newline included; anything else, and
// a CRD it cannot write, the serializer writes.
func TestCRDCodecEncodesAsSerializer(t *testing.T) {
	e := &Extensions{scheme: newScheme()}
	e.codecs = serializer.NewCodecFactory(e.scheme)
	codec := e.crdCodec()
	wrapped := codec.(crdJSONCodec).Codec
	nan := math.NaN()
	broken := crdgen.ProviderCRDs(1, 2)[0]
	broken.Spec.Versions[0].Schema.OpenAPIV3Schema.Maximum = &nan
	for _, obj := range []runtime.Object{crdgen.ProviderCRDs(1, 1)[0], broken, &metav1.Status{Message: "<other kind>"}} {
		want, wantErr := runtime.Encode(wrapped, obj.DeepCopyObject())
		got, err := runtime.Encode(codec, obj)
		if (err != nil) != (wantErr != nil) || string(got) != string(want) {
			t.Fatalf("%T: got %q (%v), want %q (%v)", obj, truncate(got), err, truncate(want), wantErr)
		}
	}
}

func truncate(b []byte) []byte { return b[:min(len(b), 200)] }

// The API handler's JSON writer for CRDs gives the JSON serializer's bytes
// for a served CRD (kind and apiVersion set) and declines anything else.
func TestAppendCRDJSONMatchesServedSerializer(t *testing.T) {
	codecs := serializer.NewCodecFactory(newScheme())
	info, ok := runtime.SerializerInfoForMediaType(codecs.SupportedMediaTypes(), runtime.ContentTypeJSON)
	if !ok {
		t.Fatal("no JSON serializer")
	}
	crd := crdgen.ProviderCRDs(1, 4)[0]
	crd.TypeMeta = metav1.TypeMeta{}
	if _, ok := appendCRDJSON(nil, crd); ok {
		t.Fatal("wrote a CRD without kind and apiVersion")
	}
	crd.Kind, crd.APIVersion = "CustomResourceDefinition", "apiextensions.k8s.io/v1"
	want, err := runtime.Encode(info.Serializer, crd)
	if err != nil {
		t.Fatal(err)
	}
	got, ok := appendCRDJSON(nil, crd)
	if !ok || string(got)+"\n" != string(want) {
		t.Fatalf("got %q (%v), want %q", truncate(got), ok, truncate(want))
	}
	if _, ok := appendCRDJSON(nil, &metav1.Status{}); ok {
		t.Fatal("wrote another kind")
	}
}

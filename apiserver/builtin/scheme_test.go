package builtin

import (
	"reflect"
	"testing"

	autoscalingv1 "k8s.io/api/autoscaling/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
)

func TestKindsRoundTripThroughCodecs(t *testing.T) {
	for _, mediaType := range []string{runtime.ContentTypeJSON, runtime.ContentTypeProtobuf} {
		info, ok := runtime.SerializerInfoForMediaType(Codecs.SupportedMediaTypes(), mediaType)
		if !ok {
			t.Fatalf("no serializer for %s", mediaType)
		}
		for _, k := range Kinds() {
			for _, obj := range []runtime.Object{k.New(), k.NewList()} {
				if m, err := metaOf(obj); err == nil {
					m.SetName("round-trip")
					m.SetUID(types.UID("uid-1"))
					m.SetLabels(map[string]string{"app": "x"})
				}
				codec := Codecs.CodecForVersions(info.Serializer, Codecs.UniversalDeserializer(), k.GroupVersion, nil)
				data, err := runtime.Encode(codec, obj)
				if err != nil {
					t.Errorf("%s %s: encode %T: %v", mediaType, k.Resource, obj, err)
					continue
				}
				decoded, err := runtime.Decode(Codecs.UniversalDeserializer(), data)
				if err != nil {
					t.Errorf("%s %s: decode %T: %v", mediaType, k.Resource, obj, err)
					continue
				}
				if reflect.TypeOf(decoded) != reflect.TypeOf(obj) {
					t.Errorf("%s %s: decoded %T, want %T", mediaType, k.Resource, decoded, obj)
				}
				if m, err := metaOf(decoded); err == nil && m.GetName() != "round-trip" {
					t.Errorf("%s %s: name lost: %q", mediaType, k.Resource, m.GetName())
				}
			}
		}
	}
}

func TestSchemeHasMetaAndSubresourceTypes(t *testing.T) {
	for _, gvk := range []schema.GroupVersionKind{
		metav1.SchemeGroupVersion.WithKind("Table"),
		metav1.SchemeGroupVersion.WithKind("PartialObjectMetadata"),
		metav1.SchemeGroupVersion.WithKind("PartialObjectMetadataList"),
		metav1.SchemeGroupVersion.WithKind("WatchEvent"),
		metav1.SchemeGroupVersion.WithKind("DeleteOptions"),
		{Version: "v1", Kind: "Status"},
		{Version: "v1", Kind: "WatchEvent"},
		autoscalingv1.SchemeGroupVersion.WithKind("Scale"),
		{Group: "policy", Version: "v1", Kind: "Eviction"},
		{Group: "authentication.k8s.io", Version: "v1", Kind: "TokenReview"},
		{Group: "authorization.k8s.io", Version: "v1", Kind: "SubjectAccessReview"},
		{Group: "authorization.k8s.io", Version: "v1", Kind: "SelfSubjectAccessReview"},
	} {
		if !Scheme.Recognizes(gvk) {
			t.Errorf("Scheme does not recognize %v", gvk)
		}
	}
}

// TestSchemeHasNoKubeDefaulting: Scheme must be built before kube's API
// packages (k8s.io/kubernetes/pkg/apis/...) initialize, since they add
// kube's defaulting to k8s.io/api's scheme builders; decoding through
// Scheme would otherwise fill fields devplane's defaults leave alone (a
// StatefulSet's rollingUpdate.maxUnavailable), and a patched object would
// differ from the stored one it equals.
func TestSchemeHasNoKubeDefaulting(t *testing.T) {
	for _, k := range Kinds() {
		obj := k.New()
		Scheme.Default(obj)
		if !reflect.DeepEqual(obj, k.New()) {
			t.Errorf("%s: Scheme.Default filled %+v", k.Resource, obj)
		}
	}
}

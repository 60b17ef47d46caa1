package registry

import (
	"bytes"
	"reflect"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/devplane/devplane/apiserver/builtin"
	"github.com/devplane/devplane/apiserver/internal/populate"
	"github.com/devplane/devplane/apiserver/storage"
)

// decodeBoth decodes data with a kind's codec and with its stored-protobuf
// decoder; handled says whether the decoder took it.
func decodeBoth(t *testing.T, k builtin.Kind, data []byte) (byCodec, byDecoder runtime.Object, handled bool) {
	t.Helper()
	cfg := StorageConfig(k)
	byCodec = k.New()
	if _, _, err := cfg.Codec.Decode(data, nil, byCodec); err != nil {
		byCodec = nil
	}
	byDecoder = k.New()
	handled, err := cfg.Decode(data, nil, byDecoder)
	if err != nil {
		t.Fatalf("%s: decoder: %v", k.Kind, err)
	}
	return byCodec, byDecoder, handled
}

// For every built-in kind, an empty object and one with every field set
// decode exactly as the codec decodes them.
func TestStoredProtobufDecoderDecodesAsTheCodec(t *testing.T) {
	for _, k := range builtin.Kinds() {
		full := k.New()
		populate.Fill(full)
		for _, obj := range []runtime.Object{k.New(), full} {
			data, err := runtime.Encode(StorageConfig(k).Codec, obj)
			if err != nil {
				t.Fatalf("%s: encode: %v", k.Kind, err)
			}
			byCodec, byDecoder, handled := decodeBoth(t, k, data)
			if byCodec == nil {
				t.Fatalf("%s: the codec does not decode what it encoded", k.Kind)
			}
			if !handled {
				t.Errorf("%s: the decoder left its own kind's bytes to the codec", k.Kind)
				continue
			}
			if !reflect.DeepEqual(byCodec, byDecoder) {
				t.Errorf("%s: decoded differently:\ncodec   %#v\ndecoder %#v", k.Kind, byCodec, byDecoder)
			}
		}
	}
}

// For every built-in kind, the encoder writes the codec's bytes, and leaves
// the object's type meta as it was.
func TestStoredProtobufEncoderEncodesAsTheCodec(t *testing.T) {
	for _, k := range builtin.Kinds() {
		cfg := StorageConfig(k)
		full := k.New()
		populate.Fill(full)
		full.GetObjectKind().SetGroupVersionKind(schema.GroupVersionKind{Version: "v9", Kind: "Other"})
		for _, obj := range []runtime.Object{k.New(), full} {
			want, err := runtime.Encode(cfg.Codec, obj.DeepCopyObject())
			if err != nil {
				t.Fatalf("%s: codec: %v", k.Kind, err)
			}
			before := obj.GetObjectKind().GroupVersionKind()
			got, handled, err := cfg.Encode(obj)
			if err != nil || !handled {
				t.Fatalf("%s: encoder: handled %v, %v", k.Kind, handled, err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("%s: encoded differently:\ncodec   %q\nencoder %q", k.Kind, want, got)
			}
			if after := obj.GetObjectKind().GroupVersionKind(); after != before {
				t.Errorf("%s: the object's kind went from %v to %v", k.Kind, before, after)
			}
		}
	}
	configMaps := StorageConfig(builtin.Kinds()[0])
	for _, k := range builtin.Kinds() {
		if k.Kind == "ConfigMap" {
			configMaps = StorageConfig(k)
		}
	}
	if _, handled, _ := configMaps.Encode(&corev1.Secret{}); handled {
		t.Error("the ConfigMap encoder took a Secret")
	}
}

// What the decoder is not sure of goes to the codec, the object untouched.
func TestStoredProtobufDecoderLeavesTheRestToTheCodec(t *testing.T) {
	kinds := map[string]builtin.Kind{}
	for _, k := range builtin.Kinds() {
		if k.GroupVersion.Group == "" {
			kinds[k.Kind] = k
		}
	}
	configMaps, secrets := kinds["ConfigMap"], kinds["Secret"]
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "a"}, Data: map[string]string{"k": "v"}}
	data, err := runtime.Encode(StorageConfig(configMaps).Codec, cm)
	if err != nil {
		t.Fatal(err)
	}
	raw, err := cm.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	envelope := func(u runtime.Unknown) []byte {
		b, err := u.Marshal()
		if err != nil {
			t.Fatal(err)
		}
		return append([]byte("k8s\x00"), b...)
	}
	cmType := runtime.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"}
	for _, tc := range []struct {
		name      string
		kind      builtin.Kind
		data      []byte
		codecDoes bool // the codec decodes it (as it is: the decoder need not know)
	}{
		{"another kind's bytes", secrets, data, false},
		{"a content encoding", configMaps, envelope(runtime.Unknown{TypeMeta: cmType, Raw: raw, ContentEncoding: "gzip"}), true},
		{"a content type", configMaps, envelope(runtime.Unknown{TypeMeta: cmType, Raw: raw, ContentType: "application/vnd.kubernetes.protobuf"}), true},
		{"no magic", configMaps, bytes.TrimPrefix(data, []byte("k8s\x00")), false},
		{"JSON", configMaps, []byte(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a"}}`), false},
		{"a truncated object", configMaps, envelope(runtime.Unknown{TypeMeta: cmType, Raw: raw[:len(raw)-3]}), false},
		{"a truncated envelope", configMaps, data[:len(data)-3], false},
	} {
		byCodec, byDecoder, handled := decodeBoth(t, tc.kind, tc.data)
		if handled {
			t.Errorf("%s: the decoder took it", tc.name)
		}
		if !reflect.DeepEqual(byDecoder, tc.kind.New()) {
			t.Errorf("%s: the decoder left the object changed: %#v", tc.name, byDecoder)
		}
		if (byCodec != nil) != tc.codecDoes {
			t.Errorf("%s: the codec decodes it: %v, want %v", tc.name, byCodec != nil, tc.codecDoes)
		}
	}
}

// BenchmarkStoredProtobufEncode compares encoding a ConfigMap of ~1.6 KB
// for storage with the codec and with the encoder.
func BenchmarkStoredProtobufEncode(b *testing.B) {
	cfg, cm := benchConfigMap(b)
	b.Run("codec", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := runtime.Encode(cfg.Codec, cm); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("encoder", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, ok, err := cfg.Encode(cm); !ok || err != nil {
				b.Fatal(ok, err)
			}
		}
	})
}

// BenchmarkStoredProtobufDecode compares decoding a stored ConfigMap of
// ~1.6 KB with the codec and with the decoder.
func BenchmarkStoredProtobufDecode(b *testing.B) {
	cfg, cm := benchConfigMap(b)
	data, err := runtime.Encode(cfg.Codec, cm)
	if err != nil {
		b.Fatal(err)
	}
	b.Run("codec", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, _, err := cfg.Codec.Decode(data, nil, &corev1.ConfigMap{}); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("decoder", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if ok, err := cfg.Decode(data, nil, &corev1.ConfigMap{}); !ok || err != nil {
				b.Fatal(ok, err)
			}
		}
	})
}

// benchConfigMap is a ConfigMap as the served benchmarks write them, and
// its kind's storage config.
func benchConfigMap(b *testing.B) (storage.Config, *corev1.ConfigMap) {
	var k builtin.Kind
	for _, kind := range builtin.Kinds() {
		if kind.Kind == "ConfigMap" {
			k = kind
		}
	}
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "cm-1", Namespace: "bench", UID: "8d2c6a2e-1111-2222-3333-444455556666",
		ManagedFields: []metav1.ManagedFieldsEntry{{Manager: "bench", Operation: metav1.ManagedFieldsOperationUpdate, APIVersion: "v1",
			FieldsType: "FieldsV1", FieldsV1: &metav1.FieldsV1{Raw: []byte(`{"f:data":{".":{},"f:payload":{}}}`)}}}},
		Data: map[string]string{"payload": string(bytes.Repeat([]byte("x"), 1400))}}
	return StorageConfig(k), cm
}

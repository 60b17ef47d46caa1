package storage

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/apimachinery/pkg/runtime/serializer/protobuf"

	"github.com/devplane/devplane/apiserver/internal/testetcd"
	"github.com/devplane/devplane/embedded"
)

// testClient talks to the one etcd shared by all tests of the package; each
// test uses its own key prefix.
var testClient *clientv3.Client

func TestMain(m *testing.M) {
	testetcd.Main(m, func(etcd embedded.Etcd) func() {
		testClient = etcd.Client()
		return nil
	})
}

var prefixCounter atomic.Int64

// testConfig is a ConfigMap storage config under a prefix unique to t.
func testConfig(t testing.TB) Config {
	scheme := runtime.NewScheme()
	if err := corev1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	pb := protobuf.NewSerializer(scheme, scheme)
	codec := serializer.NewCodecFactory(scheme).CodecForVersions(pb, pb, corev1.SchemeGroupVersion, corev1.SchemeGroupVersion)
	return Config{
		Resource:       schema.GroupResource{Resource: "configmaps"},
		Codec:          codec,
		NewFunc:        func() runtime.Object { return &corev1.ConfigMap{} },
		NewListFunc:    func() runtime.Object { return &corev1.ConfigMapList{} },
		ResourcePrefix: fmt.Sprintf("/registry-%d/configmaps", prefixCounter.Add(1)),
		GetAttrs:       configMapAttrs,
	}
}

func configMapAttrs(obj runtime.Object) (labels.Set, fields.Set, error) {
	cm := obj.(*corev1.ConfigMap)
	return labels.Set(cm.Labels), fields.Set{
		"metadata.name":      cm.Name,
		"metadata.namespace": cm.Namespace,
	}, nil
}

func newConfigMap(ns, name string, data map[string]string) *corev1.ConfigMap {
	return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Data: data}
}

func objectKey(cfg Config, ns, name string) string {
	return cfg.ResourcePrefix + "/" + ns + "/" + name
}

func testContext(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}

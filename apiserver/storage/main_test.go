package storage

import (
	"context"
	"fmt"
	"net"
	"net/url"
	"os"
	"sync/atomic"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.etcd.io/etcd/server/v3/embed"
	"go.etcd.io/etcd/server/v3/etcdserver/api/v3client"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/apimachinery/pkg/runtime/serializer/protobuf"
)

// testClient talks to the one etcd shared by all tests of the package; each
// test uses its own key prefix.
var testClient *clientv3.Client

func TestMain(m *testing.M) {
	os.Exit(runWithEtcd(m))
}

func runWithEtcd(m *testing.M) int {
	dir, err := os.MkdirTemp("", "storage-etcd-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	etcd, err := startEtcd(dir)
	if err != nil {
		fmt.Fprintln(os.Stderr, "starting etcd:", err)
		return 1
	}
	defer etcd.Close()
	testClient = v3client.New(etcd.Server)
	defer testClient.Close()
	return m.Run()
}

func startEtcd(dir string) (*embed.Etcd, error) {
	cfg := embed.NewConfig()
	cfg.Dir = dir
	cfg.UnsafeNoFsync = true
	cfg.LogLevel = "panic" // shutdown logs "server closed" errors
	clientURL, peerURL := freeLocalURL(), freeLocalURL()
	cfg.ListenClientUrls, cfg.AdvertiseClientUrls = []url.URL{clientURL}, []url.URL{clientURL}
	cfg.ListenPeerUrls, cfg.AdvertisePeerUrls = []url.URL{peerURL}, []url.URL{peerURL}
	cfg.InitialCluster = cfg.InitialClusterFromName(cfg.Name)
	etcd, err := embed.StartEtcd(cfg)
	if err != nil {
		return nil, err
	}
	select {
	case <-etcd.Server.ReadyNotify():
		return etcd, nil
	case <-time.After(30 * time.Second):
		etcd.Close()
		return nil, fmt.Errorf("etcd not ready after 30s")
	}
}

func freeLocalURL() url.URL {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		panic(err)
	}
	defer l.Close()
	return url.URL{Scheme: "http", Host: l.Addr().String()}
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

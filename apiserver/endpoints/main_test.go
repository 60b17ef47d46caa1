package endpoints

import (
	"context"
	"fmt"
	"net"
	"net/http/httptest"
	"net/url"
	"os"
	"sync/atomic"
	"testing"
	"time"

	"go.etcd.io/etcd/server/v3/embed"
	"go.etcd.io/etcd/server/v3/etcdserver/api/v3client"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/devplane/devplane/apiserver/builtin"
	"github.com/devplane/devplane/apiserver/printers"
	"github.com/devplane/devplane/apiserver/registry"
	"github.com/devplane/devplane/apiserver/storage"
)

// testServer serves every built-in kind from the shared etcd.
var testServer *httptest.Server

func TestMain(m *testing.M) { os.Exit(run(m)) }

func run(m *testing.M) int {
	dir, err := os.MkdirTemp("", "endpoints-etcd-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	cfg := embed.NewConfig()
	cfg.Dir = dir
	cfg.UnsafeNoFsync = true
	cfg.LogLevel = "error"
	clientURL, peerURL := freeURL(), freeURL()
	cfg.ListenClientUrls, cfg.AdvertiseClientUrls = []url.URL{clientURL}, []url.URL{clientURL}
	cfg.ListenPeerUrls, cfg.AdvertisePeerUrls = []url.URL{peerURL}, []url.URL{peerURL}
	cfg.InitialCluster = cfg.InitialClusterFromName(cfg.Name)
	etcd, err := embed.StartEtcd(cfg)
	if err != nil {
		fmt.Fprintln(os.Stderr, "etcd:", err)
		return 1
	}
	defer etcd.Close()
	select {
	case <-etcd.Server.ReadyNotify():
	case <-time.After(30 * time.Second):
		fmt.Fprintln(os.Stderr, "etcd not ready")
		return 1
	}
	client := v3client.New(etcd.Server)
	defer client.Close()

	reg := registry.New()
	for _, k := range builtin.Kinds() {
		res := registry.NewResourceFromBuiltin(k, storage.NewStore(client, registry.StorageConfig(k)))
		reg.Add(res)
	}
	testServer = httptest.NewServer(NewAPIHandler(reg, Options{
		Scheme: builtin.Scheme, Codecs: builtin.Codecs,
		Tables: func(gr schema.GroupResource) registry.TableConvertor { return printers.For(gr) },
	}))
	defer testServer.Close()
	return m.Run()
}

func freeURL() url.URL {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		panic(err)
	}
	defer l.Close()
	return url.URL{Scheme: "http", Host: l.Addr().String()}
}

func clientFor(t testing.TB, contentType string) *kubernetes.Clientset {
	cs, err := kubernetes.NewForConfig(&rest.Config{Host: testServer.URL, QPS: -1, ContentConfig: rest.ContentConfig{ContentType: contentType}})
	if err != nil {
		t.Fatal(err)
	}
	return cs
}

var nsCounter atomic.Int64

// newNamespace creates a namespace unique to the test.
func newNamespace(t testing.TB, cs kubernetes.Interface) string {
	name := fmt.Sprintf("test-%d-%d", time.Now().UnixNano()%100000, nsCounter.Add(1))
	if _, err := cs.CoreV1().Namespaces().Create(ctx(t), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{}); err != nil {
		t.Fatalf("creating namespace: %v", err)
	}
	return name
}

func ctx(t testing.TB) context.Context {
	c, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return c
}

package endpoints

import (
	"context"
	"fmt"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/devplane/devplane/apiserver/builtin"
	"github.com/devplane/devplane/apiserver/internal/testetcd"
	"github.com/devplane/devplane/apiserver/printers"
	"github.com/devplane/devplane/apiserver/registry"
	"github.com/devplane/devplane/apiserver/registry/core/namespace"
	"github.com/devplane/devplane/apiserver/registry/strategies"
	"github.com/devplane/devplane/apiserver/storage"
	"github.com/devplane/devplane/embedded"
)

// testServer serves every built-in kind from the shared etcd.
var testServer *httptest.Server

// testEtcd is the shared etcd.
var testEtcd embedded.Etcd

func TestMain(m *testing.M) {
	testetcd.Main(m, func(etcd embedded.Etcd) func() {
		testEtcd = etcd
		reg := registry.New()
		for _, k := range builtin.Kinds() {
			res := registry.NewResourceFromBuiltin(k, storage.NewStore(etcd.Client(), registry.StorageConfig(k)),
				strategies.For(k.GroupVersion.WithResource(k.Resource).GroupResource()))
			reg.Add(res)
		}
		namespace.InstallFinalize(reg)
		testServer = httptest.NewServer(NewAPIHandler(reg, Options{
			Scheme: builtin.Scheme, Codecs: builtin.Codecs,
			Tables: func(gr schema.GroupResource) registry.TableConvertor { return printers.For(gr) },
		}))
		return testServer.Close
	})
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

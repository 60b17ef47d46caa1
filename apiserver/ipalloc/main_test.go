package ipalloc

import (
	"context"
	"fmt"
	"net"
	"sync/atomic"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/devplane/devplane/apiserver/internal/testetcd"
	"github.com/devplane/devplane/embedded"
)

// testClient is an in-process client of the etcd shared by all tests;
// testEndpoint lets a test dial a second, independent client (another
// "replica"). Each test uses its own key prefix.
var (
	testClient   *clientv3.Client
	testEndpoint string
)

func TestMain(m *testing.M) {
	testetcd.Main(m, func(etcd embedded.Etcd) func() {
		testClient = etcd.Client()
		testEndpoint = etcd.Endpoints()[0]
		return nil
	})
}

var prefixCounter atomic.Int64

// uniquePrefix keeps tests sharing the etcd from seeing each other's keys.
func uniquePrefix(kind string) string {
	return fmt.Sprintf("/test-%d/ranges/%s/", prefixCounter.Add(1), kind)
}

func testContext(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func mustCIDR(t testing.TB, cidr string) *net.IPNet {
	t.Helper()
	_, network, err := net.ParseCIDR(cidr)
	if err != nil {
		t.Fatal(err)
	}
	return network
}

// newTestServices: service IPs 10.0.0.0/24, node ports 30000-32767, on
// prefixes private to the test.
func newTestServices(t testing.TB) *Services {
	return &Services{
		IPs:       newServiceIPRange(testClient.KV, uniquePrefix("serviceips"), mustCIDR(t, "10.0.0.0/24")),
		NodePorts: newNodePortRange(testClient.KV, uniquePrefix("servicenodeports"), 30000, 2768),
	}
}

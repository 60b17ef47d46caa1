package ipalloc

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
)

// testClient is an in-process client of the etcd shared by all tests;
// testEndpoint lets a test dial a second, independent client (another
// "replica"). Each test uses its own key prefix.
var (
	testClient   *clientv3.Client
	testEndpoint string
)

func TestMain(m *testing.M) {
	os.Exit(runWithEtcd(m))
}

func runWithEtcd(m *testing.M) int {
	dir, err := os.MkdirTemp("", "ipalloc-etcd-")
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
	testEndpoint = etcd.Config().ListenClientUrls[0].String()
	return m.Run()
}

func startEtcd(dir string) (*embed.Etcd, error) {
	cfg := embed.NewConfig()
	cfg.Dir = dir
	cfg.UnsafeNoFsync = true
	cfg.LogLevel = "panic" // shutdown logs "server closed" errors
	clientURL := freeLocalURL()
	peerURL := url.URL{Scheme: "http", Host: "127.0.0.1:0"}
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

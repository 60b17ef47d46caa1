package cli_test

import (
	"context"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/devplane/devplane/embedded"
)

// startTestEtcd runs an etcd in this test process, reachable by devplane
// processes as --etcd-servers.
func startTestEtcd(t *testing.T) string {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	etcd, err := embedded.Start(ctx, embedded.Options{
		DataDir: filepath.Join(t.TempDir(), "etcd"), ListenClientURL: true, UnsafeNoFsync: true,
	})
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = etcd.Stop()
		cancel()
	})
	return strings.Join(etcd.Endpoints(), ",")
}

// freePort is a port free on 127.0.0.1 (and, in practice, on the rest of
// 127.0.0.0/8): replicas on different loopback addresses share it, as kube
// replicas on different hosts share 6443.
func freePort(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return strconv.Itoa(ln.Addr().(*net.TCPAddr).Port)
}

// eventually polls check (which returns "" when satisfied, else what it
// saw) until it passes or limit elapses.
func eventually(t *testing.T, limit time.Duration, what string, check func() string) {
	t.Helper()
	deadline := time.Now().Add(limit)
	for {
		got := check()
		if got == "" {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: still not so after %s; last saw %s", what, limit, got)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// kubectlOut runs kubectl and fails the test unless it exits 0.
func kubectlOut(t *testing.T, kubectl string, args ...string) string {
	t.Helper()
	r := run(t, kubectl, args...)
	if r.code != 0 {
		t.Fatalf("kubectl %s: exit %d\n%s%s", strings.Join(args, " "), r.code, r.stdout, r.stderr)
	}
	return strings.TrimSpace(r.stdout)
}

func TestReplicasShareOneEtcd(t *testing.T) {
	kubectl := requireKubectl(t)
	etcdURL := startTestEtcd(t)
	certDir := filepath.Join(t.TempDir(), "pki")
	port := freePort(t)
	common := []string{"--etcd-servers", etcdURL, "--cert-dir", certDir, "--port", port}

	d1, d2 := t.TempDir(), t.TempDir()
	r1 := replica{p: startUp(t, d1, append([]string{"--name", "r1"}, common...)...), kubeconfig: filepath.Join(d1, "kubeconfig"), ip: "127.0.0.1", prefix: "devplane-r1-"}
	r2 := replica{p: startUp(t, d2, append([]string{"--name", "r2", "--bind-address", "127.0.0.2"}, common...)...), kubeconfig: filepath.Join(d2, "kubeconfig"), ip: "127.0.0.2", prefix: "devplane-r2-"}
	k1, k2 := r1.kubeconfig, r2.kubeconfig
	url2 := "https://127.0.0.2:" + port

	// Each replica keeps its own kubeconfig in its own data dir, and
	// nothing of the shared PKI lands there.
	if got := kubectlOut(t, kubectl, "--kubeconfig", k2, "config", "view", "-o", "jsonpath={.clusters[0].cluster.server}"); got != url2 {
		t.Fatalf("replica 2's kubeconfig points at %q, want %q", got, url2)
	}
	if _, err := os.Stat(filepath.Join(d1, "pki")); !os.IsNotExist(err) {
		t.Fatalf("with --cert-dir, %s/pki should not exist (stat: %v)", d1, err)
	}

	// Written through one replica, read through the other.
	kubectlOut(t, kubectl, "--kubeconfig", k1, "create", "configmap", "shared", "--from-literal=written=by-r1")
	if got := kubectlOut(t, kubectl, "--kubeconfig", k2, "get", "configmap", "shared", "-o", "jsonpath={.data.written}"); got != "by-r1" {
		t.Fatalf("configmap read through replica 2: %q, want by-r1", got)
	}
	// One kubeconfig works against the other replica: same CA, a serving
	// certificate covering both addresses, the same admin certificate.
	if got := kubectlOut(t, kubectl, "--kubeconfig", k1, "--server", url2, "get", "configmap", "shared", "-o", "name"); got != "configmap/shared" {
		t.Fatalf("replica 1's kubeconfig against replica 2: %q", got)
	}

	// Watched through replica 2 while written through replica 1.
	cfg2, err := clientcmd.BuildConfigFromFlags("", k2)
	if err != nil {
		t.Fatal(err)
	}
	client2 := kubernetes.NewForConfigOrDie(cfg2)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	w, err := client2.CoreV1().ConfigMaps("default").Watch(ctx, metav1.ListOptions{FieldSelector: "metadata.name=watched"})
	if err != nil {
		t.Fatal(err)
	}
	kubectlOut(t, kubectl, "--kubeconfig", k1, "create", "configmap", "watched", "--from-literal=k=v")
	select {
	case ev, ok := <-w.ResultChan():
		if !ok {
			t.Fatal("watch through replica 2 closed before the ADDED event")
		}
		cm, isCM := ev.Object.(*corev1.ConfigMap)
		if ev.Type != watch.Added || !isCM || cm.Name != "watched" || cm.Data["k"] != "v" {
			t.Fatalf("watch through replica 2 got %s %#v", ev.Type, ev.Object)
		}
	case <-ctx.Done():
		t.Fatal("no watch event through replica 2 for a configmap created through replica 1 within 30s")
	}
	w.Stop()

	// A service account token issued by one replica verifies on the other.
	kubectlOut(t, kubectl, "--kubeconfig", k1, "create", "serviceaccount", "bot")
	token := kubectlOut(t, kubectl, "--kubeconfig", k1, "create", "token", "bot")
	empty := filepath.Join(t.TempDir(), "empty-kubeconfig")
	if err := os.WriteFile(empty, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	who := kubectlOut(t, kubectl, "--kubeconfig", empty, "--token", token, "--certificate-authority", filepath.Join(certDir, "ca.crt"),
		"--server", url2, "auth", "whoami", "-o", "jsonpath={.status.userInfo.username}")
	if who != "system:serviceaccount:default:bot" {
		t.Fatalf("token from replica 1 on replica 2: whoami %q", who)
	}
	// A client certificate issued for replica 2's instance is trusted by replica 1.
	kc := run(t, devplaneBin, "kubeconfig", "--data-dir", d2, "--user", "alice")
	if kc.code != 0 {
		t.Fatalf("devplane kubeconfig --user alice: %d %s", kc.code, kc.stderr)
	}
	alice := filepath.Join(t.TempDir(), "alice")
	if err := os.WriteFile(alice, []byte(kc.stdout), 0o600); err != nil {
		t.Fatal(err)
	}
	if who := kubectlOut(t, kubectl, "--kubeconfig", alice, "--server", "https://127.0.0.1:"+port,
		"auth", "whoami", "-o", "jsonpath={.status.userInfo.username}"); who != "alice" {
		t.Fatalf("alice's certificate from replica 2's instance on replica 1: whoami %q", who)
	}

	leader, follower := waitForReplicas(t, kubectl, port, r1, r2)
	t.Logf("leader %s; stopping it with SIGTERM", leader.prefix)
	// Stopping the leader hands the controllers to the other replica at
	// once and takes the stopped one out of the endpoints.
	leader.p.stop(t)
	waitForTakeover(t, kubectl, port, follower)
	follower.p.stop(t)
}

// A killed leader cannot hand over: the other replica takes the
// controllers and drops it from the endpoints when its leases expire.
func TestReplicaKilledIsReplacedAfterItsLease(t *testing.T) {
	if testing.Short() {
		t.Skip("waits out a 15s lease")
	}
	kubectl := requireKubectl(t)
	etcdURL := startTestEtcd(t)
	certDir := filepath.Join(t.TempDir(), "pki")
	port := freePort(t)
	common := []string{"--etcd-servers", etcdURL, "--cert-dir", certDir, "--port", port}
	d1, d2 := t.TempDir(), t.TempDir()
	r1 := replica{p: startUp(t, d1, append([]string{"--name", "r1"}, common...)...), kubeconfig: filepath.Join(d1, "kubeconfig"), ip: "127.0.0.1", prefix: "devplane-r1-"}
	r2 := replica{p: startUp(t, d2, append([]string{"--name", "r2", "--bind-address", "127.0.0.2"}, common...)...), kubeconfig: filepath.Join(d2, "kubeconfig"), ip: "127.0.0.2", prefix: "devplane-r2-"}

	leader, follower := waitForReplicas(t, kubectl, port, r1, r2)
	t.Logf("leader %s; killing it", leader.prefix)
	if err := leader.p.cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	<-leader.p.exited
	waitForTakeover(t, kubectl, port, follower)
	follower.p.stop(t)
}

type replica struct {
	p          *upProcess
	kubeconfig string
	ip         string
	prefix     string // of its identity: devplane-<name>-
}

// kubernetesEndpoints is what the kubernetes Service's Endpoints and
// EndpointSlice list: "<ips> <port> | <ips> <port>".
func kubernetesEndpoints(t *testing.T, kubectl, kubeconfig string) string {
	ep := run(t, kubectl, "--kubeconfig", kubeconfig, "get", "endpoints", "kubernetes", "-n", "default",
		"-o", "jsonpath={.subsets[*].addresses[*].ip} {.subsets[*].ports[*].port}")
	slice := run(t, kubectl, "--kubeconfig", kubeconfig, "get", "endpointslice", "kubernetes", "-n", "default",
		"-o", "jsonpath={.endpoints[*].addresses[*]} {.ports[*].port}")
	return strings.TrimSpace(ep.stdout) + " | " + strings.TrimSpace(slice.stdout)
}

// controllersLeader is the holder of the controllers' election Lease.
func controllersLeader(t *testing.T, kubectl, kubeconfig string) string {
	return run(t, kubectl, "--kubeconfig", kubeconfig, "get", "lease", "devplane-controller-manager", "-n", "kube-system",
		"-o", "jsonpath={.spec.holderIdentity}").stdout
}

// waitForReplicas waits until the endpoints list both replicas on the
// shared port and one holds the controllers' lease; it returns the leader
// first.
func waitForReplicas(t *testing.T, kubectl, port string, r1, r2 replica) (leader, follower replica) {
	t.Helper()
	both := r1.ip + " " + r2.ip + " " + port
	eventually(t, 30*time.Second, "endpoints list both replicas", func() string {
		if got := kubernetesEndpoints(t, kubectl, r1.kubeconfig); got != both+" | "+both {
			return got
		}
		return ""
	})
	eventually(t, 30*time.Second, "a replica holds the controllers' lease", func() string {
		switch h := controllersLeader(t, kubectl, r1.kubeconfig); {
		case strings.HasPrefix(h, r1.prefix):
			leader, follower = r1, r2
		case strings.HasPrefix(h, r2.prefix):
			leader, follower = r2, r1
		default:
			return strconv.Quote(h)
		}
		return ""
	})
	return leader, follower
}

// waitForTakeover waits until survivor holds the controllers' lease and is
// alone in the endpoints, then checks the controllers work there: a
// namespace deletion completes, a Deployment rolls out.
func waitForTakeover(t *testing.T, kubectl, port string, survivor replica) {
	t.Helper()
	eventually(t, 45*time.Second, "the other replica holds the controllers' lease", func() string {
		if h := controllersLeader(t, kubectl, survivor.kubeconfig); !strings.HasPrefix(h, survivor.prefix) {
			return strconv.Quote(h)
		}
		return ""
	})
	only := survivor.ip + " " + port
	eventually(t, 45*time.Second, "endpoints list only the running replica", func() string {
		if got := kubernetesEndpoints(t, kubectl, survivor.kubeconfig); got != only+" | "+only {
			return got
		}
		return ""
	})
	k := survivor.kubeconfig
	kubectlOut(t, kubectl, "--kubeconfig", k, "create", "namespace", "after-failover")
	kubectlOut(t, kubectl, "--kubeconfig", k, "create", "configmap", "inside", "-n", "after-failover")
	kubectlOut(t, kubectl, "--kubeconfig", k, "delete", "namespace", "after-failover", "--timeout=60s")
	if r := run(t, kubectl, "--kubeconfig", k, "get", "namespace", "after-failover"); r.code == 0 || !strings.Contains(r.stderr, "NotFound") {
		t.Fatalf("namespace still there after delete: %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	// The workload machinery (nodes, kubelets, scheduler, controllers)
	// moved with the controllers: a new Deployment rolls out.
	name := "after-failover-" + strings.TrimSuffix(strings.TrimPrefix(survivor.prefix, "devplane-"), "-")
	kubectlOut(t, kubectl, "--kubeconfig", k, "create", "deployment", name, "--image=nginx", "--replicas=2")
	kubectlOut(t, kubectl, "--kubeconfig", k, "rollout", "status", "deployment/"+name, "--timeout=60s")
}

func TestEventTTL(t *testing.T) {
	kubectl := requireKubectl(t)
	dir := t.TempDir()
	startUp(t, dir, "--event-ttl", "2s")
	kubeconfig := filepath.Join(dir, "kubeconfig")
	manifest := filepath.Join(t.TempDir(), "events.yaml")
	if err := os.WriteFile(manifest, []byte(`apiVersion: v1
kind: Event
metadata:
  name: short-lived
  namespace: default
involvedObject:
  kind: ConfigMap
  name: keeper
  namespace: default
reason: Testing
message: expires with --event-ttl
type: Normal
---
apiVersion: events.k8s.io/v1
kind: Event
metadata:
  name: short-lived-too
  namespace: default
eventTime: "2024-01-01T00:00:00.000000Z"
reportingController: devplane.io/test
reportingInstance: test
action: Testing
reason: Testing
regarding:
  kind: ConfigMap
  name: keeper
  namespace: default
type: Normal
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: keeper
  namespace: default
`), 0o600); err != nil {
		t.Fatal(err)
	}
	kubectlOut(t, kubectl, "--kubeconfig", kubeconfig, "create", "-f", manifest)
	eventually(t, 30*time.Second, "events gone after --event-ttl 2s", func() string {
		var left []string
		for _, obj := range []string{"events.v1./short-lived", "events.v1.events.k8s.io/short-lived-too"} {
			if r := run(t, kubectl, "--kubeconfig", kubeconfig, "get", obj, "-o", "name"); r.code == 0 {
				left = append(left, obj)
			} else if !strings.Contains(r.stderr, "NotFound") {
				t.Fatalf("kubectl get %s: %d %s", obj, r.code, r.stderr)
			}
		}
		return strings.Join(left, ", ")
	})
	// Other kinds have no TTL.
	kubectlOut(t, kubectl, "--kubeconfig", kubeconfig, "get", "configmap", "keeper")
}

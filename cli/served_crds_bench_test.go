package cli_test

// BenchmarkServedCRDs: hundreds of CRDs shaped like a cloud provider's
// (providercrds_test.go) installed into the served binary with one
// `kubectl apply --server-side -f`, as a new user installs a provider
// package; beside the reference kube-apiserver + etcd when it runs.
//
//	go test -run '^$' -bench ServedCRDs -benchtime 1x -timeout 60m ./cli/
//
// DEVPLANE_BENCH_CRDS sets how many (300 by default). Printed: RSS growth
// (process RSS; kube's is kube-apiserver + etcd), Go heap in use and
// goroutines before and after, time to all Established from the start of
// the apply, creating one more CRD with all of them installed (server round
// trip, the server's minor page faults meanwhile, and to Established;
// right after the apply and again after 15 s quiet), /openapi/v2 and /openapi/v3 timings, custom
// resources served (create, list of 1,000, watch), and devplane's restart
// with everything installed: to ready, and the first list of a custom
// resource.

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextensionsclient "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"

	"github.com/devplane/devplane/apiserver/testenv/crdgen"
)

func benchCRDCount() int {
	if n, err := strconv.Atoi(os.Getenv("DEVPLANE_BENCH_CRDS")); err == nil && n > 0 && n <= 2000 {
		return n
	}
	return 300
}

func BenchmarkServedCRDs(b *testing.B) {
	kubectl, err := exec.LookPath("kubectl")
	if err != nil {
		b.Skip("kubectl is not on PATH")
	}
	n := benchCRDCount()
	crds := crdgen.Provider(n+5, 1) // the last five are the "one more" CRDs
	file := filepath.Join(b.TempDir(), "crds.yaml")
	if err := os.WriteFile(file, crdgen.Manifest(crds[:n]), 0o600); err != nil {
		b.Fatal(err)
	}
	for range b.N {
		var results []*loadFigures
		dir := filepath.Join(b.TempDir(), "data")
		f := &loadFigures{server: "devplane"}
		startReady(b, dir, func(pid int) {
			crdLoad(b, kubectl, devplaneConfig(b, dir), filepath.Join(dir, "kubeconfig"), file, crds, n, []int{pid}, f)
		})
		restart := startReady(b, dir, func(int) {
			firstCustomList(b, devplaneConfig(b, dir), f)
		})
		f.set("restart to ready ms", ms(restart))
		results = append(results, f)

		if cfg, pids := peerConfig(b); cfg != nil {
			k := &loadFigures{server: "kube"}
			kubeconfig := os.Getenv("DEVPLANE_PEER_KUBECONFIG")
			if kubeconfig == "" {
				cache, _ := os.UserCacheDir()
				kubeconfig = filepath.Join(cache, "devplane-peer", "run", "kubeconfig")
			}
			crdLoad(b, kubectl, cfg, kubeconfig, file, crds, n, pids, k)
			// Leave the reference pair as it was.
			_ = exec.Command(kubectl, "--kubeconfig", kubeconfig, "delete", "--wait=false", "-f", file).Run()
			results = append(results, k)
		} else {
			fmt.Println("reference kube-apiserver not running: start it with ../shared/peer/start.sh (after build.sh) to measure it beside devplane")
		}
		printFigures(results)
	}
}

// metricLines is the server's /metrics, a line each.
func metricLines(b *testing.B, c rest.Interface) []string {
	b.Helper()
	data, err := c.Get().AbsPath("/metrics").DoRaw(context.Background())
	if err != nil {
		b.Fatal(err)
	}
	return strings.Split(string(data), "\n")
}

// serverStats is the Go heap in use (MB) and goroutines from the server's
// /metrics (kube-apiserver has the same two metrics).
func serverStats(b *testing.B, cfg *rest.Config) (heapMB, goroutines float64) {
	b.Helper()
	for _, line := range metricLines(b, apiextensionsclient.NewForConfigOrDie(cfg).RESTClient()) {
		name, value, ok := strings.Cut(line, " ")
		if !ok {
			continue
		}
		v, _ := strconv.ParseFloat(value, 64)
		switch name {
		case "go_memstats_heap_inuse_bytes":
			heapMB = v / (1 << 20)
		case "go_goroutines":
			goroutines = v
		}
	}
	return heapMB, goroutines
}

// requestSeconds is the server's own apiserver_request_duration_seconds
// sum and count for verb on resource (kube-apiserver has the same metric).
func requestSeconds(b *testing.B, c rest.Interface, verb, resource string) (sum, count float64) {
	b.Helper()
	for _, line := range metricLines(b, c) {
		if !strings.HasPrefix(line, "apiserver_request_duration_seconds_") ||
			!strings.Contains(line, `verb="`+verb+`"`) || !strings.Contains(line, `resource="`+resource+`"`) ||
			!strings.Contains(line, `subresource=""`) {
			continue
		}
		name, value, _ := strings.Cut(line, " ")
		v, _ := strconv.ParseFloat(strings.TrimSpace(value), 64)
		switch {
		case strings.HasPrefix(name, "apiserver_request_duration_seconds_sum"):
			sum += v
		case strings.HasPrefix(name, "apiserver_request_duration_seconds_count"):
			count += v
		}
	}
	return sum, count
}

// sumRSS adds part of each process's resident memory, in MB.
func sumRSS(pids []int, part func(residentMB) float64) float64 {
	var rss float64
	for _, pid := range pids {
		rss += part(rssMB(pid))
	}
	return rss
}

func totalRSS(pids []int) float64 { return sumRSS(pids, func(r residentMB) float64 { return r.total }) }

func anonRSS(pids []int) float64 { return sumRSS(pids, func(r residentMB) float64 { return r.anon }) }

// crdLoad installs crds[:n] from file with kubectl, waits for all to be
// Established, and measures what the file comment says on the server cfg
// names (kubeconfig for kubectl; pids: its processes for RSS).
func crdLoad(b *testing.B, kubectl string, cfg *rest.Config, kubeconfig, file string, crds []map[string]any, n int, pids []int, f *loadFigures) {
	b.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Minute)
	defer cancel()
	c := rest.CopyConfig(cfg)
	c.QPS, c.Burst = -1, 0
	ext := apiextensionsclient.NewForConfigOrDie(c)

	time.Sleep(2 * time.Second)
	rss0, anon0 := totalRSS(pids), anonRSS(pids)
	heap0, goroutines0 := serverStats(b, c)
	f.set("RSS MB before", rss0)
	f.set("heap MB before", heap0)
	f.set("goroutines before", goroutines0)

	want := map[string]bool{}
	for _, crd := range crds[:n] {
		want[crd["metadata"].(map[string]any)["name"].(string)] = true
	}
	list, err := ext.ApiextensionsV1().CustomResourceDefinitions().List(ctx, metav1.ListOptions{})
	if err != nil {
		b.Fatal(err)
	}
	w, err := ext.ApiextensionsV1().CustomResourceDefinitions().Watch(ctx, metav1.ListOptions{ResourceVersion: list.ResourceVersion})
	if err != nil {
		b.Fatal(err)
	}
	established := make(chan time.Time, 1)
	go func() {
		defer w.Stop()
		seen := map[string]bool{}
		for ev := range w.ResultChan() {
			crd, ok := ev.Object.(*apiextensionsv1.CustomResourceDefinition)
			if !ok || ev.Type == watch.Deleted || !want[crd.Name] || seen[crd.Name] {
				continue
			}
			for _, cond := range crd.Status.Conditions {
				if cond.Type == apiextensionsv1.Established && cond.Status == apiextensionsv1.ConditionTrue {
					seen[crd.Name] = true
				}
			}
			if len(seen) == len(want) {
				established <- time.Now()
				return
			}
		}
	}()
	start := time.Now()
	cmd := exec.CommandContext(ctx, kubectl, "--kubeconfig", kubeconfig, "apply", "--server-side", "-f", file)
	if out, err := cmd.CombinedOutput(); err != nil {
		b.Fatalf("kubectl apply: %v\n%s", err, tail(out))
	}
	f.set("kubectl apply --server-side s", time.Since(start).Seconds())
	select {
	case at := <-established:
		f.set(fmt.Sprintf("all %d Established s", n), at.Sub(start).Seconds())
	case <-time.After(10 * time.Minute):
		b.Fatalf("not all %d CRDs Established after 10 minutes", n)
	}

	time.Sleep(3 * time.Second)
	rss1, anon1 := totalRSS(pids), anonRSS(pids)
	heap1, goroutines1 := serverStats(b, c)
	f.set("RSS MB after", rss1)
	f.set("RSS MB growth", rss1-rss0)
	// Anonymous memory is what the process itself holds; the rest is
	// clean file pages (the binary's code, etcd's mapped database) that
	// the kernel can take back at any time.
	f.set("anon RSS MB growth", anon1-anon0)
	f.set("RSS MB per CRD", (rss1-rss0)/float64(n))
	f.set("heap MB after", heap1)
	f.set("goroutines after", goroutines1)

	oneMoreCRD(b, ctx, ext, crds[n:], pids, f, "one more CRD")
	openAPITimings(b, ctx, c, f)
	customResources(b, ctx, c, f)

	// Served with everything in use: every version's OpenAPI built and
	// one kind's objects in its cache.
	time.Sleep(time.Second)
	heap2, goroutines2 := serverStats(b, c)
	f.set("RSS MB after use", totalRSS(pids))
	f.set("heap MB after use", heap2)
	f.set("goroutines after use", goroutines2)

	// And once the server has been quiet a while (devplane has given a
	// burst's memory back by then): a CRD added later on.
	time.Sleep(15 * time.Second)
	oneMoreCRD(b, ctx, ext, crds[n:], pids, f, "one more CRD, 15 s quiet")
}

func tail(out []byte) string {
	if len(out) > 2000 {
		out = out[len(out)-2000:]
	}
	return string(out)
}

// oneMoreCRD creates each of more with all the others installed: the
// create's round trip (server time and a local transfer) and the time to
// Established; then deletes it. Medians.
func oneMoreCRD(b *testing.B, ctx context.Context, ext *apiextensionsclient.Clientset, more []map[string]any, pids []int, f *loadFigures, label string) {
	b.Helper()
	crds := ext.ApiextensionsV1().CustomResourceDefinitions()
	var creates, ready []time.Duration
	var faults float64
	sum0, count0 := requestSeconds(b, ext.RESTClient(), "POST", "customresourcedefinitions")
	for _, m := range more {
		u := &unstructured.Unstructured{Object: m}
		crd := &apiextensionsv1.CustomResourceDefinition{}
		if err := runtimeFromUnstructured(u, crd); err != nil {
			b.Fatal(err)
		}
		faults0 := minorFaults(pids)
		start := time.Now()
		created, err := crds.Create(ctx, crd, metav1.CreateOptions{})
		if err != nil {
			b.Fatal(err)
		}
		creates = append(creates, time.Since(start))
		faults += minorFaults(pids) - faults0
		for {
			got, err := crds.Get(ctx, created.Name, metav1.GetOptions{})
			if err != nil {
				b.Fatal(err)
			}
			if isEstablished(got) {
				break
			}
			if time.Since(start) > time.Minute {
				b.Fatalf("%s not Established after a minute", created.Name)
			}
			time.Sleep(2 * time.Millisecond)
		}
		ready = append(ready, time.Since(start))
		if err := crds.Delete(ctx, created.Name, metav1.DeleteOptions{}); err != nil {
			b.Fatal(err)
		}
		// Gone before the next: what follows is timed with none pending.
		for deadline := time.Now().Add(time.Minute); ; {
			if _, err := crds.Get(ctx, created.Name, metav1.GetOptions{}); apierrors.IsNotFound(err) {
				break
			}
			if time.Now().After(deadline) {
				b.Fatalf("%s still there a minute after its deletion", created.Name)
			}
			time.Sleep(5 * time.Millisecond)
		}
	}
	if sum1, count1 := requestSeconds(b, ext.RESTClient(), "POST", "customresourcedefinitions"); count1 > count0 {
		f.set(label+": create server mean ms", (sum1-sum0)/(count1-count0)*1000)
	}
	f.set(label+": create p50 ms", ms(percentile(creates, 50)))
	f.set(label+": page faults per create", faults/float64(len(more)))
	f.set(label+": to Established p50 ms", ms(percentile(ready, 50)))
}

func isEstablished(crd *apiextensionsv1.CustomResourceDefinition) bool {
	for _, c := range crd.Status.Conditions {
		if c.Type == apiextensionsv1.Established && c.Status == apiextensionsv1.ConditionTrue {
			return true
		}
	}
	return false
}

func runtimeFromUnstructured(u *unstructured.Unstructured, into *apiextensionsv1.CustomResourceDefinition) error {
	return runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, into)
}

// timedGet fetches path with accept and returns how long the whole body took.
func timedGet(b *testing.B, ctx context.Context, hc *http.Client, host, path, accept string) time.Duration {
	b.Helper()
	took, _ := timedFetch(b, ctx, hc, strings.TrimSuffix(host, "/")+path, accept)
	return took
}

// timedFetch GETs url with accept, reads the whole body, and returns how
// long that took and how many bytes came; anything but a 200 with a body
// fails b.
func timedFetch(b *testing.B, ctx context.Context, hc *http.Client, url, accept string) (time.Duration, int64) {
	b.Helper()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	req.Header.Set("Accept", accept)
	start := time.Now()
	resp, err := hc.Do(req)
	if err != nil {
		b.Fatal(err)
	}
	n, _ := io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || n == 0 {
		b.Fatalf("GET %s: %d, %d bytes", url, resp.StatusCode, n)
	}
	return time.Since(start), n
}

// openAPITimings: /openapi/v2 (JSON, then protobuf as kubectl asks for it)
// first and again, and one provider group-version under /openapi/v3.
func openAPITimings(b *testing.B, ctx context.Context, cfg *rest.Config, f *loadFigures) {
	b.Helper()
	hc, err := rest.HTTPClientFor(cfg)
	if err != nil {
		b.Fatal(err)
	}
	f.set("/openapi/v2 JSON first ms", ms(timedGet(b, ctx, hc, cfg.Host, "/openapi/v2", "application/json")))
	f.set("/openapi/v2 JSON again ms", ms(timedGet(b, ctx, hc, cfg.Host, "/openapi/v2", "application/json")))
	f.set("/openapi/v2 protobuf ms", ms(timedGet(b, ctx, hc, cfg.Host, "/openapi/v2", "application/com.github.proto-openapi.spec.v2@v1.0+protobuf")))
	f.set("/openapi/v3 discovery ms", ms(timedGet(b, ctx, hc, cfg.Host, "/openapi/v3", "application/json")))
	path := "/openapi/v3/apis/" + crdgen.Group(0) + "/v1beta2"
	f.set("/openapi/v3 group-version first ms", ms(timedGet(b, ctx, hc, cfg.Host, path, "application/json")))
	f.set("/openapi/v3 group-version again ms", ms(timedGet(b, ctx, hc, cfg.Host, path, "application/json")))
	other := "/openapi/v3/apis/" + crdgen.Group(150) + "/v1beta1"
	f.set("/openapi/v3 other group-version ms", ms(timedGet(b, ctx, hc, cfg.Host, other, "application/json")))
}

// customGVR is the first namespaced generated kind, smallGVR another with
// a few objects (for the first list after a restart).
var (
	customGVR = schema.GroupVersionResource{Group: crdgen.Group(1), Version: "v1beta2", Resource: strings.ToLower(crdgen.Kind(1)) + "s"}
	smallGVR  = schema.GroupVersionResource{Group: crdgen.Group(3), Version: "v1beta2", Resource: strings.ToLower(crdgen.Kind(3)) + "s"}
)

const smallCount = 10

func customObject(name string) *unstructured.Unstructured {
	return objectOf(customGVR, crdgen.Kind(1), name)
}

func objectOf(gvr schema.GroupVersionResource, kind, name string) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": gvr.GroupVersion().String(), "kind": kind,
		"metadata": map[string]any{"name": name, "namespace": "default",
			"annotations": map[string]any{"crossplane.io/external-name": name}},
		"spec": map[string]any{"forProvider": map[string]any{"region": "eu-west-1"}},
	}}
}

// customResources creates 1,000 objects of one generated kind (16
// workers), with a watch timing each, then lists them.
func customResources(b *testing.B, ctx context.Context, cfg *rest.Config, f *loadFigures) {
	b.Helper()
	dyn := dynamic.NewForConfigOrDie(cfg).Resource(customGVR).Namespace("default")
	const n = 1000
	w, err := dyn.Watch(ctx, metav1.ListOptions{})
	if err != nil {
		b.Fatal(err)
	}
	sent := make([]atomic.Int64, n)
	lat := make([]time.Duration, 0, n)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for ev := range w.ResultChan() {
			u, ok := ev.Object.(*unstructured.Unstructured)
			if !ok || ev.Type != watch.Added {
				continue
			}
			if i, err := strconv.Atoi(strings.TrimPrefix(u.GetName(), "cr-")); err == nil && i < n {
				lat = append(lat, time.Duration(time.Now().UnixNano()-sent[i].Load()))
			}
			if len(lat) == n {
				return
			}
		}
	}()
	parallel(b, ctx, n, func(i int) error {
		sent[i].Store(time.Now().UnixNano())
		_, err := dyn.Create(ctx, customObject("cr-"+strconv.Itoa(i)), metav1.CreateOptions{})
		return err
	}, f, "custom resource create/s")
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		b.Errorf("the watch saw %d of %d creates", len(lat), n)
	}
	w.Stop()
	f.set("custom resource watch p99 ms", ms(percentile(lat, 99)))
	var lists []time.Duration
	for range 5 {
		start := time.Now()
		l, err := dyn.List(ctx, metav1.ListOptions{})
		if err != nil || len(l.Items) != n {
			b.Fatalf("list: %v", err)
		}
		lists = append(lists, time.Since(start))
	}
	f.set("custom resource list of 1000 ms", ms(percentile(lists, 50)))
	small := dynamic.NewForConfigOrDie(cfg).Resource(smallGVR).Namespace("default")
	for i := range smallCount {
		if _, err := small.Create(ctx, objectOf(smallGVR, crdgen.Kind(3), "small-"+strconv.Itoa(i)), metav1.CreateOptions{}); err != nil {
			b.Fatal(err)
		}
	}
}

// firstCustomList is the first list of a custom resource after a restart:
// one with a few objects (what building a kind's derived forms on first use
// costs), then the one with 1,000 (compare with its list when warm).
func firstCustomList(b *testing.B, cfg *rest.Config, f *loadFigures) {
	b.Helper()
	for _, gvr := range []schema.GroupVersionResource{smallGVR, customGVR} {
		dyn := dynamic.NewForConfigOrDie(cfg).Resource(gvr).Namespace("default")
		start := time.Now()
		l, err := dyn.List(context.Background(), metav1.ListOptions{})
		if err != nil {
			b.Fatal(err)
		}
		f.set(fmt.Sprintf("after restart: first list (%d objects) ms", len(l.Items)), ms(time.Since(start)))
	}
}

package cli_test

// Cost as the work grows, on the served binary (fsync on, clients in this
// process), beside the reference kube-apiserver + etcd when it runs:
//
//	go test -run '^$' -bench 'ServedScale' -benchtime 1x -timeout 60m ./cli/
//
// BenchmarkServedScale100kConfigMaps: RSS with 100,000 ConfigMaps, restart to
// ready, and a paginated list of 500. BenchmarkServedScaleWatchers: 1,000
// watchers of one resource at 500 writes/s, event delivery latency and
// dropped watchers. BenchmarkServedScaleNamespaceDeletion: 50 namespaces of
// 200 objects deleted at once, until all are gone (kube's with its
// kube-controller-manager's namespace and garbage collector controllers).

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
)

// scaleCount is DEVPLANE_BENCH_SCALE_OBJECTS or def, so a quick run can use
// fewer.
func scaleCount(def int) int {
	if n, err := strconv.Atoi(os.Getenv("DEVPLANE_BENCH_SCALE_OBJECTS")); err == nil && n > 0 && n <= def {
		return n
	}
	return def
}

func clientsetFor(b *testing.B, cfg *rest.Config) *kubernetes.Clientset {
	b.Helper()
	c := rest.CopyConfig(cfg)
	c.QPS, c.Burst = -1, 0
	c.ContentType = "application/vnd.kubernetes.protobuf"
	c.AcceptContentTypes = "application/vnd.kubernetes.protobuf,application/json"
	cs, err := kubernetes.NewForConfig(c)
	if err != nil {
		b.Fatal(err)
	}
	return cs
}

func devplaneConfig(b *testing.B, dir string) *rest.Config {
	b.Helper()
	cfg, err := clientcmd.BuildConfigFromFlags("", filepath.Join(dir, "kubeconfig"))
	if err != nil {
		b.Fatal(err)
	}
	return cfg
}

// fillConfigMaps creates n ConfigMaps of about 1 KB in a new namespace and
// returns the namespace and the rate.
func fillConfigMaps(b *testing.B, cs *kubernetes.Clientset, n int, f *loadFigures) string {
	b.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Minute)
	defer cancel()
	ns := fmt.Sprintf("scale-%d", time.Now().UnixNano())
	if _, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		b.Fatal(err)
	}
	payload := strings.Repeat("x", 1000)
	parallel(b, ctx, n, func(i int) error {
		_, err := cs.CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{
			ObjectMeta: metav1.ObjectMeta{Name: "cm-" + strconv.Itoa(i)}, Data: map[string]string{"payload": payload}}, metav1.CreateOptions{})
		return err
	}, f, "fill create/s")
	return ns
}

// paginatedList lists ns 500 at a time and reports the median page time.
func paginatedList(b *testing.B, cs *kubernetes.Clientset, ns string, f *loadFigures) {
	b.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	var pages []time.Duration
	opts := metav1.ListOptions{Limit: 500}
	for len(pages) < 50 {
		start := time.Now()
		list, err := cs.CoreV1().ConfigMaps(ns).List(ctx, opts)
		if err != nil {
			b.Fatal(err)
		}
		pages = append(pages, time.Since(start))
		if list.Continue == "" {
			break
		}
		opts.Continue = list.Continue
	}
	f.set("paginated list, page of 500 p50 ms", ms(percentile(pages, 50)))
	f.set("paginated list, page of 500 p99 ms", ms(percentile(pages, 99)))
}

// settledRSS records the server's RSS a second after the fill, while what
// the burst used may still be held, and ten seconds after, settled.
func settledRSS(b *testing.B, f *loadFigures, n int, rss func() float64) {
	b.Helper()
	time.Sleep(time.Second)
	f.set(fmt.Sprintf("RSS MB with %d ConfigMaps, 1 s after the fill", n), rss())
	time.Sleep(9 * time.Second)
	f.set(fmt.Sprintf("RSS MB with %d ConfigMaps, 10 s after", n), rss())
}

func BenchmarkServedScale100kConfigMaps(b *testing.B) {
	n := scaleCount(100000)
	for range b.N {
		var results []*loadFigures
		dir := filepath.Join(b.TempDir(), "data")
		f := &loadFigures{server: "devplane"}
		var ns string
		startReady(b, dir, func(pid int) {
			cs := clientsetFor(b, devplaneConfig(b, dir))
			ns = fillConfigMaps(b, cs, n, f)
			settledRSS(b, f, n, func() float64 { return rssMB(pid).total })
		})
		// Restart on the full data dir; the list is served once ready.
		restart := startReady(b, dir, func(int) {
			paginatedList(b, clientsetFor(b, devplaneConfig(b, dir)), ns, f)
		})
		f.set("restart to ready ms", ms(restart))
		results = append(results, f)

		if cfg, pids := peerConfig(b); cfg != nil {
			k := &loadFigures{server: "kube"}
			cs := clientsetFor(b, cfg)
			kns := fillConfigMaps(b, cs, n, k)
			settledRSS(b, k, n, func() float64 {
				var rss float64
				for _, pid := range pids {
					rss += rssMB(pid).total
				}
				return rss
			})
			paginatedList(b, cs, kns, k)
			_ = cs.CoreV1().Namespaces().Delete(context.Background(), kns, metav1.DeleteOptions{})
			results = append(results, k)
		}
		printFigures(results)
	}
}

func BenchmarkServedScaleWatchers(b *testing.B) {
	watchers := scaleCount(1000)
	const rate, duration = 500, 10 * time.Second
	for range b.N {
		var results []*loadFigures
		if path := os.Getenv("DEVPLANE_BENCH_KUBECONFIG"); path != "" {
			// A devplane started by hand, e.g. to profile it under this load.
			cfg, err := clientcmd.BuildConfigFromFlags("", path)
			if err != nil {
				b.Fatal(err)
			}
			printFigures([]*loadFigures{watchFanout(b, "devplane", cfg, watchers, rate, duration)})
			continue
		}
		dir := filepath.Join(b.TempDir(), "data")
		startReady(b, dir, func(int) {
			results = append(results, watchFanout(b, "devplane", devplaneConfig(b, dir), watchers, rate, duration))
		})
		if cfg, _ := peerConfig(b); cfg != nil {
			results = append(results, watchFanout(b, "kube", cfg, watchers, rate, duration))
		}
		printFigures(results)
	}
}

// watchFanout opens watchers watches on one namespace's ConfigMaps, creates
// rate objects a second for duration, and measures each event's delivery
// from the start of its create, across all watchers.
func watchFanout(b *testing.B, server string, cfg *rest.Config, watchers, rate int, duration time.Duration) *loadFigures {
	b.Helper()
	f := &loadFigures{server: server}
	ctx, cancel := context.WithTimeout(context.Background(), duration+2*time.Minute)
	defer cancel()
	cs := clientsetFor(b, cfg)
	ns := fmt.Sprintf("fanout-%d", time.Now().UnixNano())
	if _, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		b.Fatal(err)
	}
	total := rate * int(duration/time.Second)
	sent := make([]atomic.Int64, total)
	var mu sync.Mutex
	var lat []time.Duration
	var dropped, complete atomic.Int64
	var wg sync.WaitGroup
	// The watchers read the raw JSON stream and pick out the name: decoding
	// a thousand copies of every event in this process would make the
	// client, not the server, what is measured.
	hc, err := rest.HTTPClientFor(cfg)
	if err != nil {
		b.Fatal(err)
	}
	watchURL := strings.TrimSuffix(cfg.Host, "/") + "/api/v1/namespaces/" + ns + "/configmaps?watch=1&allowWatchBookmarks=false"
	marker := []byte(`"name":"e-`)
	for w := 0; w < watchers; w++ {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, watchURL, nil)
		req.Header.Set("Accept", "application/json")
		resp, err := hc.Do(req)
		if err != nil || resp.StatusCode != http.StatusOK {
			b.Fatalf("watcher %d: %v", w, err)
		}
		wg.Go(func() {
			defer resp.Body.Close()
			seen := 0
			local := make([]time.Duration, 0, total)
			sc := bufio.NewScanner(resp.Body)
			sc.Buffer(make([]byte, 64<<10), 1<<20)
			for seen < total && sc.Scan() {
				line := sc.Bytes()
				at := bytes.Index(line, marker)
				if at < 0 || !bytes.HasPrefix(line, []byte(`{"type":"ADDED"`)) {
					continue
				}
				digits := line[at+len(marker):]
				end := bytes.IndexByte(digits, '"')
				i, err := strconv.Atoi(string(digits[:max(end, 0)]))
				if err == nil && i >= 0 && i < total {
					local = append(local, time.Duration(time.Now().UnixNano()-sent[i].Load()))
					seen++
				}
			}
			if seen == total {
				complete.Add(1)
			} else {
				dropped.Add(1)
			}
			mu.Lock()
			lat = append(lat, local...)
			mu.Unlock()
		})
	}
	// Writes at a fixed rate from enough workers that a create's latency
	// under this load does not cap the rate, on connections of their own:
	// behind a thousand watch streams they would wait their turn in
	// HTTP/2's write scheduling and the rate would be the client's.
	wc := rest.CopyConfig(cfg)
	wc.WrapTransport = func(rt http.RoundTripper) http.RoundTripper { return rt } // not shared from client-go's cache
	writer := clientsetFor(b, wc)
	var writers sync.WaitGroup
	jobs := make(chan int, rate)
	// A create's own latency, to tell how much of delivery is the write's.
	createLat := make([]time.Duration, total)
	for range 16 {
		writers.Go(func() {
			for i := range jobs {
				t0 := time.Now()
				sent[i].Store(t0.UnixNano())
				if _, err := writer.CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "e-" + strconv.Itoa(i)}}, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
					b.Errorf("create: %v", err)
					return
				}
				createLat[i] = time.Since(t0)
			}
		})
	}
	// Each write is due at its own time from the start (a ticker drops
	// the ticks a busy client misses, and the rate would be the client's).
	start := time.Now()
	for i := 0; i < total; i++ {
		time.Sleep(time.Until(start.Add(time.Duration(i) * time.Second / time.Duration(rate))))
		jobs <- i
	}
	close(jobs)
	writers.Wait()
	f.set("writes/s achieved", float64(total)/time.Since(start).Seconds())
	f.markHigher("writes/s achieved")
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(time.Minute):
		cancel() // ends the watches still waiting
		<-done
	}
	f.set("create p50 ms", ms(percentile(createLat, 50)))
	f.set("create p99 ms", ms(percentile(createLat, 99)))
	f.set("delivery p50 ms", ms(percentile(lat, 50)))
	f.set("delivery p99 ms", ms(percentile(lat, 99)))
	f.set("watchers dropped", float64(dropped.Load()))
	f.set("watchers that saw every event", float64(complete.Load()))
	f.markHigher("watchers that saw every event")
	_ = cs.CoreV1().Namespaces().Delete(context.Background(), ns, metav1.DeleteOptions{})
	return f
}

func BenchmarkServedScaleNamespaceDeletion(b *testing.B) {
	perNamespace := scaleCount(200)
	for range b.N {
		var results []*loadFigures
		dir := filepath.Join(b.TempDir(), "data")
		startReady(b, dir, func(int) {
			results = append(results, namespaceDeletion(b, "devplane", clientsetFor(b, devplaneConfig(b, dir)), perNamespace))
		})
		if cfg, _ := peerConfig(b); cfg != nil {
			if stop := startPeerControllers(b); stop != nil {
				results = append(results, namespaceDeletion(b, "kube", clientsetFor(b, cfg), perNamespace))
				stop()
			}
		}
		printFigures(results)
	}
}

// startPeerControllers runs the reference pair's namespace and garbage
// collector controllers (kube-controller-manager, from ../shared/peer's
// build), which kube-apiserver alone does not have; nil when it is not
// built.
func startPeerControllers(b *testing.B) (stop func()) {
	b.Helper()
	kcm := filepath.Join(peerDir(), "bin", "kube-controller-manager")
	if _, err := os.Stat(kcm); err != nil {
		b.Logf("no %s: kube's namespace deletion not measured", kcm)
		return nil
	}
	kubeconfig := filepath.Join(peerDir(), "run", "kubeconfig")
	var out bytes.Buffer
	cmd := exec.Command(kcm, "--kubeconfig", kubeconfig, "--authentication-kubeconfig", kubeconfig,
		"--authorization-kubeconfig", kubeconfig, "--controllers=namespace-controller,garbage-collector-controller",
		"--leader-elect=false", "--secure-port=0")
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	// Its informers and the collector's graph sync before it acts.
	select {
	case err := <-exited:
		b.Fatalf("kube-controller-manager exited (%v):\n%s", err, out.String())
	case <-time.After(10 * time.Second):
	}
	return func() {
		_ = cmd.Process.Kill()
		<-exited
	}
}

// namespaceDeletion fills 50 namespaces with perNamespace objects each and
// times their deletion until every one is gone.
func namespaceDeletion(b *testing.B, server string, cs *kubernetes.Clientset, perNamespace int) *loadFigures {
	b.Helper()
	const namespaces = 50
	f := &loadFigures{server: server}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	prefix := fmt.Sprintf("del-%d-", time.Now().UnixNano()%100000)
	names := make([]string, namespaces)
	owners := make([]metav1.OwnerReference, namespaces)
	for i := range names {
		names[i] = prefix + strconv.Itoa(i)
		if _, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: names[i]}}, metav1.CreateOptions{}); err != nil {
			b.Fatal(err)
		}
		owner, err := cs.CoreV1().ConfigMaps(names[i]).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "cm-0"}}, metav1.CreateOptions{})
		if err != nil {
			b.Fatal(err)
		}
		owners[i] = metav1.OwnerReference{APIVersion: "v1", Kind: "ConfigMap", Name: owner.Name, UID: owner.UID}
	}
	// Half ConfigMaps, half Secrets owned by their namespace's first
	// ConfigMap, so the garbage collector has dependents to follow.
	parallel(b, ctx, namespaces*(perNamespace-1), func(i int) error {
		n, j := i%namespaces, i/namespaces+1
		if j%2 == 0 {
			_, err := cs.CoreV1().ConfigMaps(names[n]).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "cm-" + strconv.Itoa(j)}}, metav1.CreateOptions{})
			return err
		}
		_, err := cs.CoreV1().Secrets(names[n]).Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "s-" + strconv.Itoa(j),
			OwnerReferences: []metav1.OwnerReference{owners[n]}}}, metav1.CreateOptions{})
		return err
	}, f, "fill create/s")
	start := time.Now()
	for _, ns := range names {
		if err := cs.CoreV1().Namespaces().Delete(ctx, ns, metav1.DeleteOptions{}); err != nil {
			b.Fatal(err)
		}
	}
	for {
		left := 0
		for _, ns := range names {
			if _, err := cs.CoreV1().Namespaces().Get(ctx, ns, metav1.GetOptions{}); err == nil {
				left++
			}
		}
		if left == 0 {
			break
		}
		if ctx.Err() != nil {
			b.Fatalf("%s: %d namespaces still there", server, left)
		}
		time.Sleep(50 * time.Millisecond)
	}
	f.set(fmt.Sprintf("delete %d namespaces x %d objects, s", namespaces, perNamespace), time.Since(start).Seconds())
	return f
}

package cli_test

// BenchmarkServedLoad measures devplane as users run it: the built binary
// (`devplane up`, etcd with fsync) in its own process, driven by client-go
// from this one. When the reference kube-apiserver + etcd pair is running
// (../shared/peer/start.sh, or DEVPLANE_PEER_KUBECONFIG), the same load runs
// against it in the same invocation and the ratios are printed; raw etcd
// through the etcd client is the ceiling when the peer's etcd answers.
//
//	go test -run '^$' -bench ServedLoad -benchtime 1x ./cli/

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
)

const (
	loadWorkers = 16
	loadTimeout = 5 * time.Minute // the whole run, per server
)

// loadObjects is how many ConfigMaps each phase handles (2,000 unless
// DEVPLANE_BENCH_OBJECTS says otherwise).
func loadObjects() int {
	if n, err := strconv.Atoi(os.Getenv("DEVPLANE_BENCH_OBJECTS")); err == nil && n > 0 && n <= 100000 {
		return n
	}
	return 2000
}

// loadFigures are one server's results; the map keys name the figures.
type loadFigures struct {
	server string
	values map[string]float64
	order  []string
	higher map[string]bool // figures where more is better (rates, counts)
	// lists are the raw list responses, by encoding (for floors).
	lists listBodies
}

func (f *loadFigures) set(name string, v float64) {
	if f.values == nil {
		f.values = map[string]float64{}
	}
	if _, ok := f.values[name]; !ok {
		f.order = append(f.order, name)
	}
	f.values[name] = v
	if strings.HasSuffix(name, "/s") {
		f.markHigher(name)
	}
}

// markHigher says that more is better for figure name.
func (f *loadFigures) markHigher(name string) {
	if f.higher == nil {
		f.higher = map[string]bool{}
	}
	f.higher[name] = true
}

func BenchmarkServedLoad(b *testing.B) {
	for range b.N {
		var results []*loadFigures
		dir := filepath.Join(b.TempDir(), "data")
		startReady(b, dir, func(pid int) {
			cfg, err := clientcmd.BuildConfigFromFlags("", filepath.Join(dir, "kubeconfig"))
			if err != nil {
				b.Fatal(err)
			}
			f := runLoad(b, "devplane", cfg)
			f.set("RSS MB after load", rssMB(pid).total)
			results = append(results, f)
		})
		if cfg, pids := peerConfig(b); cfg != nil {
			f := runLoad(b, "kube", cfg)
			var rss float64
			for _, pid := range pids {
				rss += rssMB(pid).total
			}
			f.set("RSS MB after load", rss)
			results = append(results, f)
			if etcd := rawEtcdCeiling(b); etcd != nil {
				results = append(results, etcd)
			}
		} else {
			fmt.Println("reference kube-apiserver not running: start it with ../shared/peer/start.sh (after build.sh) " +
				"or point DEVPLANE_PEER_KUBECONFIG at one, to measure it beside devplane")
		}
		results = append(results, floors(b, results[0].lists))
		printFigures(results)
		for name, v := range results[0].values {
			b.ReportMetric(v, strings.ReplaceAll(name, " ", "-"))
		}
	}
}

// runLoad creates, gets, updates, lists, watches and deletes ConfigMaps of
// about 1.4 KB on the server cfg names, with JSON and then protobuf.
func runLoad(b *testing.B, server string, cfg *rest.Config) *loadFigures {
	b.Helper()
	f := &loadFigures{server: server}
	ctx, cancel := context.WithTimeout(context.Background(), loadTimeout)
	defer cancel()
	n := loadObjects()
	for _, proto := range []bool{false, true} {
		c, enc := loadConfig(cfg, proto)
		cs, err := kubernetes.NewForConfig(c)
		if err != nil {
			b.Fatal(err)
		}
		ns := fmt.Sprintf("bench-%s-%d", enc, time.Now().UnixNano())
		if _, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
			b.Fatal(err)
		}
		cms := cs.CoreV1().ConfigMaps(ns)
		name := func(i int) string { return "cm-" + strconv.Itoa(i) }
		payload := strings.Repeat("x", 1400)

		// Creates, timed per request, with a watch timing each event from
		// the start of its create.
		w, err := cms.Watch(ctx, metav1.ListOptions{})
		if err != nil {
			b.Fatal(err)
		}
		sent := make([]atomic.Int64, n)
		watchLat := make([]time.Duration, 0, n)
		watched := make(chan struct{})
		go func() {
			defer close(watched)
			for ev := range w.ResultChan() {
				if ev.Type != watch.Added {
					continue
				}
				cm, ok := ev.Object.(*corev1.ConfigMap)
				if !ok {
					continue
				}
				i, _ := strconv.Atoi(strings.TrimPrefix(cm.Name, "cm-"))
				if i >= 0 && i < n {
					watchLat = append(watchLat, time.Duration(time.Now().UnixNano()-sent[i].Load()))
				}
				if len(watchLat) == n {
					return
				}
			}
		}()
		createLat := parallel(b, ctx, n, func(i int) error {
			sent[i].Store(time.Now().UnixNano())
			_, err := cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name(i)}, Data: map[string]string{"payload": payload}}, metav1.CreateOptions{})
			return err
		}, f, enc+" create/s")
		select {
		case <-watched:
		case <-time.After(30 * time.Second):
			b.Errorf("%s: watch saw %d of %d creates", server, len(watchLat), n)
		}
		w.Stop()
		f.set(enc+" create p50 ms", ms(percentile(createLat, 50)))
		f.set(enc+" watch p50 ms", ms(percentile(watchLat, 50)))
		f.set(enc+" watch p99 ms", ms(percentile(watchLat, 99)))

		parallel(b, ctx, n, func(i int) error {
			_, err := cms.Get(ctx, name(i), metav1.GetOptions{})
			return err
		}, f, enc+" get/s")
		parallel(b, ctx, n, func(i int) error {
			cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name(i)}, Data: map[string]string{"payload": payload, "v": "2"}}
			_, err := cms.Update(ctx, cm, metav1.UpdateOptions{})
			return err
		}, f, enc+" update/s")

		// Lists: client-go decoding included, then the raw bytes only
		// (server and transfer), the median of a few.
		var typed, raw []time.Duration
		hc, err := rest.HTTPClientFor(c)
		if err != nil {
			b.Fatal(err)
		}
		accept := "application/json"
		if proto {
			accept = "application/vnd.kubernetes.protobuf"
		}
		for range 7 {
			start := time.Now()
			list, err := cms.List(ctx, metav1.ListOptions{})
			if err != nil || len(list.Items) < n { // kube-root-ca.crt is there too
				b.Fatalf("%s: list: %v (%d items)", server, err, len(list.Items))
			}
			typed = append(typed, time.Since(start))
			req, _ := http.NewRequestWithContext(ctx, http.MethodGet, strings.TrimSuffix(c.Host, "/")+"/api/v1/namespaces/"+ns+"/configmaps", nil)
			req.Header.Set("Accept", accept)
			start = time.Now()
			resp, err := hc.Do(req)
			if err != nil {
				b.Fatal(err)
			}
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			raw = append(raw, time.Since(start))
		}
		// The bytes, once more, for floors.
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, strings.TrimSuffix(c.Host, "/")+"/api/v1/namespaces/"+ns+"/configmaps", nil)
		req.Header.Set("Accept", accept)
		resp, err := hc.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		body, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil || resp.Header.Get("Content-Encoding") != "" {
			b.Fatalf("%s: list body: %v (encoding %q)", server, err, resp.Header.Get("Content-Encoding"))
		}
		if f.lists == nil {
			f.lists = listBodies{}
		}
		f.lists[enc] = body
		f.set(fmt.Sprintf("%s list of %d, client-go ms", enc, n), ms(percentile(typed, 50)))
		f.set(fmt.Sprintf("%s list of %d, server+transfer ms", enc, n), ms(percentile(raw, 50)))

		parallel(b, ctx, n, func(i int) error {
			return cms.Delete(ctx, name(i), metav1.DeleteOptions{})
		}, f, enc+" delete/s")
		_ = cs.CoreV1().Namespaces().Delete(ctx, ns, metav1.DeleteOptions{})
	}
	return f
}

// loadConfig is cfg for the load's client-go clients, unthrottled, speaking
// JSON or protobuf (JSON still accepted), and the encoding's name.
func loadConfig(cfg *rest.Config, proto bool) (*rest.Config, string) {
	c := rest.CopyConfig(cfg)
	c.QPS, c.Burst = -1, 0
	if !proto {
		c.ContentType = "application/json"
		return c, "json"
	}
	c.ContentType = "application/vnd.kubernetes.protobuf"
	c.AcceptContentTypes = "application/vnd.kubernetes.protobuf,application/json"
	return c, "protobuf"
}

// parallel runs op for 0..n-1 on loadWorkers goroutines, records the rate
// as figure and returns each call's latency.
func parallel(b *testing.B, ctx context.Context, n int, op func(i int) error, f *loadFigures, figure string) []time.Duration {
	b.Helper()
	lat := make([]time.Duration, n)
	var next atomic.Int64
	var firstErr atomic.Value
	var wg sync.WaitGroup
	start := time.Now()
	for range loadWorkers {
		wg.Go(func() {
			for {
				i := int(next.Add(1) - 1)
				if i >= n || firstErr.Load() != nil || ctx.Err() != nil {
					return
				}
				t := time.Now()
				if err := op(i); err != nil {
					firstErr.CompareAndSwap(nil, err)
					return
				}
				lat[i] = time.Since(t)
			}
		})
	}
	wg.Wait()
	if err, _ := firstErr.Load().(error); err != nil {
		b.Fatalf("%s: %v", figure, err)
	}
	f.set(figure, float64(n)/time.Since(start).Seconds())
	return lat
}

func percentile(d []time.Duration, p int) time.Duration {
	if len(d) == 0 {
		return 0
	}
	s := append([]time.Duration(nil), d...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	return s[(len(s)-1)*p/100]
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// peerConfig is the reference kube-apiserver's client config and the pids
// of its processes (kube-apiserver and etcd), or nil when none answers.
// peerDir is where ../shared/peer builds and runs the reference pair.
func peerDir() string {
	if dir := os.Getenv("PEER_DIR"); dir != "" {
		return dir
	}
	cache, _ := os.UserCacheDir()
	return filepath.Join(cache, "devplane-peer")
}

func peerConfig(b *testing.B) (*rest.Config, []int) {
	b.Helper()
	peerDir := peerDir()
	path := os.Getenv("DEVPLANE_PEER_KUBECONFIG")
	if path == "" {
		path = filepath.Join(peerDir, "run", "kubeconfig")
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", path)
	if err != nil {
		return nil, nil
	}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	if body, err := cs.Discovery().RESTClient().Get().AbsPath("/readyz").DoRaw(ctx); err != nil || string(body) != "ok" {
		return nil, nil
	}
	var pids []int
	for _, f := range []string{"apiserver.pid", "etcd.pid"} {
		if data, err := os.ReadFile(filepath.Join(peerDir, "run", f)); err == nil {
			if pid, err := strconv.Atoi(strings.TrimSpace(string(data))); err == nil {
				pids = append(pids, pid)
			}
		}
	}
	return cfg, pids
}

// rawEtcdCeiling puts, gets and ranges the same payloads straight into the
// peer's etcd (DEVPLANE_PEER_ETCD, default http://127.0.0.1:2379) through
// the etcd client: what no API server on top of it can beat.
func rawEtcdCeiling(b *testing.B) *loadFigures {
	b.Helper()
	endpoint := os.Getenv("DEVPLANE_PEER_ETCD")
	if endpoint == "" {
		endpoint = "http://127.0.0.1:2379"
	}
	cli, err := clientv3.New(clientv3.Config{Endpoints: []string{endpoint}, DialTimeout: 2 * time.Second})
	if err != nil {
		return nil
	}
	defer cli.Close()
	probe, cancelProbe := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancelProbe()
	if _, err := cli.Status(probe, endpoint); err != nil {
		return nil // no etcd there: gRPC would retry until the load timeout
	}
	ctx, cancel := context.WithTimeout(context.Background(), loadTimeout)
	defer cancel()
	f := &loadFigures{server: "raw etcd"}
	n := loadObjects()
	prefix := fmt.Sprintf("/devplane-bench/%d/", time.Now().UnixNano())
	payload := strings.Repeat("x", 1400)
	parallel(b, ctx, n, func(i int) error {
		_, err := cli.Put(ctx, prefix+strconv.Itoa(i), payload)
		return err
	}, f, "json create/s")
	parallel(b, ctx, n, func(i int) error {
		_, err := cli.Get(ctx, prefix+strconv.Itoa(i))
		return err
	}, f, "json get/s")
	parallel(b, ctx, n, func(i int) error {
		_, err := cli.Put(ctx, prefix+strconv.Itoa(i), payload+"2")
		return err
	}, f, "json update/s")
	var ranges []time.Duration
	for range 7 {
		start := time.Now()
		if _, err := cli.Get(ctx, prefix, clientv3.WithPrefix()); err != nil {
			b.Fatal(err)
		}
		ranges = append(ranges, time.Since(start))
	}
	f.set(fmt.Sprintf("protobuf list of %d, server+transfer ms", n), ms(percentile(ranges, 50)))
	_, _ = cli.Delete(ctx, prefix, clientv3.WithPrefix())
	return f
}

// printFigures prints one row per figure, a column per server, and
// devplane's (the first) ratio to kube where both are there (higher is
// better for rates, lower for times: the ratio says how many times better).
func printFigures(results []*loadFigures) {
	var kube *loadFigures
	for _, r := range results[1:] {
		if strings.HasPrefix(r.server, "kube") { // kube, or kube+kwok
			kube = r
		}
	}
	var sb strings.Builder
	fmt.Fprintf(&sb, "\n%-42s", "figure")
	for _, r := range results {
		fmt.Fprintf(&sb, " %12s", r.server)
	}
	if kube != nil {
		fmt.Fprintf(&sb, " %12s", "devplane/kube")
	}
	sb.WriteString("\n")
	for _, name := range results[0].order {
		fmt.Fprintf(&sb, "%-42s", name)
		for _, r := range results {
			if v, ok := r.values[name]; ok {
				fmt.Fprintf(&sb, " %12.1f", v)
			} else {
				fmt.Fprintf(&sb, " %12s", "-")
			}
		}
		if kube != nil {
			d, k := results[0].values[name], kube.values[name]
			better := k / d // times and memory: lower is better
			if results[0].higher[name] {
				better = d / k
			}
			if d > 0 && k > 0 {
				fmt.Fprintf(&sb, " %11.1fx", better)
			}
		}
		sb.WriteString("\n")
	}
	fmt.Print(sb.String())
}

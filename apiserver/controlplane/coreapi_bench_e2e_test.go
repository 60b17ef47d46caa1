package controlplane_test

// Benchmarks of the core API through client-go, each beside what the raw
// etcd client (the same in-process client the server uses) does with the
// same concurrency. Figures are reported, never asserted. Run with e.g.
//
//	go test ./apiserver/controlplane/ -run '^$' -bench BenchmarkCoreAPI -benchtime 2000x
//
// Reference (kube-apiserver 1.36 + etcd 3.6 on the same machine): create
// 1,200/s, get 2,800/s, update 740/s, list of 2,000 in 35 ms, watch p50
// 12 ms, RSS 420 MB. The server's RSS after 4,000 ConfigMaps is measured on
// the devplane process alone, without clients: BenchmarkRSSAfter4000ConfigMaps
// in ./cli.

import (
	"context"
	"fmt"
	"net"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/devplane/devplane/apiserver/controlplane"
	clientv3 "go.etcd.io/etcd/client/v3"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
)

const benchClients = 16

// benchClientsets returns n clientsets, each with its own rest.Config and
// transport (a Dial func keeps client-go from sharing a cached transport).
func benchClientsets(b *testing.B, s *started, n int) []kubernetes.Interface {
	out := make([]kubernetes.Interface, n)
	for i := range out {
		cfg := s.cp.RESTConfig() // client-go's default encoding (protobuf)
		cfg.Dial = (&net.Dialer{Timeout: 10 * time.Second}).DialContext
		cs, err := kubernetes.NewForConfig(cfg)
		if err != nil {
			b.Fatal(err)
		}
		out[i] = cs
	}
	return out
}

// parallel runs op(client, i) for i in [0,total) over the clients and
// returns the elapsed time; any error fails the benchmark.
func parallel(b *testing.B, total int, workers int, op func(worker, i int) error) time.Duration {
	var next atomic.Int64
	var wg sync.WaitGroup
	var firstErr atomic.Value
	start := time.Now()
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1)) - 1
				if i >= total || firstErr.Load() != nil {
					return
				}
				if err := op(w, i); err != nil {
					firstErr.CompareAndSwap(nil, err)
					return
				}
			}
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	if err := firstErr.Load(); err != nil {
		b.Fatal(err)
	}
	return elapsed
}

func perSecond(n int, d time.Duration) float64 { return float64(n) / d.Seconds() }

func p50(ds []time.Duration) float64 {
	if len(ds) == 0 {
		return 0
	}
	sort.Slice(ds, func(i, j int) bool { return ds[i] < ds[j] })
	return float64(ds[len(ds)/2].Microseconds()) / 1000
}

// benchConfigMap is the object every write benchmark stores.
func benchConfigMap(name string) *corev1.ConfigMap {
	return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"bench": "core-api"}},
		Data: map[string]string{"key": strings.Repeat("v", 256)}}
}

func BenchmarkCoreAPI(b *testing.B) {
	// As `devplane up` and testenv serve: loopback clients get no gzip.
	s := startControlPlaneWith(b, controlplane.Options{DisableCompressionForClientIPs: controlplane.LoopbackNetworks()})
	ctx := context.Background()
	clients := benchClientsets(b, s, benchClients)
	etcd := s.cp.Etcd.Client()
	value := strings.Repeat("v", 400) // about a stored ConfigMap
	mkNS := func(name string) string {
		createNamespace(b, clients[0], name)
		return name
	}
	runs := 0
	nextNS := func(prefix string) string { runs++; return mkNS(fmt.Sprintf("%s-%d", prefix, runs)) }

	b.Run("create", func(b *testing.B) {
		ns := nextNS("create")
		elapsed := parallel(b, b.N, benchClients, func(w, i int) error {
			_, err := clients[w].CoreV1().ConfigMaps(ns).Create(ctx, benchConfigMap("cm-"+strconv.Itoa(i)), metav1.CreateOptions{})
			return err
		})
		b.ReportMetric(perSecond(b.N, elapsed), "creates/s")
		b.StopTimer() // ns/op is devplane's; etcd's figure is a metric
		prefix := "/bench/create-" + ns + "/"
		raw := parallel(b, b.N, benchClients, func(_, i int) error {
			key := prefix + strconv.Itoa(i)
			_, err := etcd.Txn(ctx).If(clientv3.Compare(clientv3.ModRevision(key), "=", 0)).Then(clientv3.OpPut(key, value)).Commit()
			return err
		})
		b.ReportMetric(perSecond(b.N, raw), "etcd-txn/s")
	})

	b.Run("get", func(b *testing.B) {
		ns := nextNS("get")
		for w := range benchClients {
			if _, err := clients[0].CoreV1().ConfigMaps(ns).Create(ctx, benchConfigMap("cm-"+strconv.Itoa(w)), metav1.CreateOptions{}); err != nil {
				b.Fatal(err)
			}
			if _, err := etcd.Put(ctx, "/bench/get-"+ns+"/"+strconv.Itoa(w), value); err != nil {
				b.Fatal(err)
			}
		}
		b.ResetTimer()
		elapsed := parallel(b, b.N, benchClients, func(w, i int) error {
			_, err := clients[w].CoreV1().ConfigMaps(ns).Get(ctx, "cm-"+strconv.Itoa(i%benchClients), metav1.GetOptions{})
			return err
		})
		b.ReportMetric(perSecond(b.N, elapsed), "gets/s")
		b.StopTimer()
		raw := parallel(b, b.N, benchClients, func(_, i int) error {
			_, err := etcd.Get(ctx, "/bench/get-"+ns+"/"+strconv.Itoa(i%benchClients))
			return err
		})
		b.ReportMetric(perSecond(b.N, raw), "etcd-get/s")
	})

	b.Run("update", func(b *testing.B) {
		ns := nextNS("update")
		current := make([]*corev1.ConfigMap, benchClients)
		revs := make([]int64, benchClients)
		for w := range benchClients {
			cm, err := clients[0].CoreV1().ConfigMaps(ns).Create(ctx, benchConfigMap("cm-"+strconv.Itoa(w)), metav1.CreateOptions{})
			if err != nil {
				b.Fatal(err)
			}
			current[w] = cm
			resp, err := etcd.Put(ctx, "/bench/update-"+ns+"/"+strconv.Itoa(w), value)
			if err != nil {
				b.Fatal(err)
			}
			revs[w] = resp.Header.Revision
		}
		b.ResetTimer()
		// Each client read-modify-writes its own object: no conflicts.
		elapsed := parallel(b, b.N, benchClients, func(w, i int) error {
			cm := current[w]
			cm.Data["n"] = strconv.Itoa(i)
			out, err := clients[w].CoreV1().ConfigMaps(ns).Update(ctx, cm, metav1.UpdateOptions{})
			if err == nil {
				current[w] = out
			}
			return err
		})
		b.ReportMetric(perSecond(b.N, elapsed), "updates/s")
		b.StopTimer()
		raw := parallel(b, b.N, benchClients, func(w, i int) error {
			key := "/bench/update-" + ns + "/" + strconv.Itoa(w)
			resp, err := etcd.Txn(ctx).If(clientv3.Compare(clientv3.ModRevision(key), "=", revs[w])).
				Then(clientv3.OpPut(key, value+strconv.Itoa(i))).Commit()
			if err != nil {
				return err
			}
			if !resp.Succeeded {
				return fmt.Errorf("raw etcd txn lost its compare")
			}
			revs[w] = resp.Header.Revision
			return nil
		})
		b.ReportMetric(perSecond(b.N, raw), "etcd-txn/s")
	})

	b.Run("list-2000", func(b *testing.B) {
		ns := nextNS("list")
		createConfigMaps(b, clients[0], ns, 2000, nil)
		prefix := "/bench/list-" + ns + "/"
		parallel(b, 2000, benchClients, func(_, i int) error {
			_, err := etcd.Put(ctx, prefix+fmt.Sprintf("%04d", i), value)
			return err
		})
		b.ResetTimer()
		var total time.Duration
		for range b.N {
			start := time.Now()
			list, err := clients[0].CoreV1().ConfigMaps(ns).List(ctx, metav1.ListOptions{})
			total += time.Since(start)
			if err != nil || len(list.Items) < 2000 {
				b.Fatalf("list: %d items, %v", len(list.Items), err)
			}
		}
		b.ReportMetric(float64(total.Microseconds())/1000/float64(b.N), "ms/list")
		b.StopTimer()
		var rawTotal time.Duration
		for range b.N {
			start := time.Now()
			resp, err := etcd.Get(ctx, prefix, clientv3.WithPrefix())
			rawTotal += time.Since(start)
			if err != nil || len(resp.Kvs) != 2000 {
				b.Fatalf("raw list: %v", err)
			}
		}
		b.ReportMetric(float64(rawTotal.Microseconds())/1000/float64(b.N), "etcd-ms/range")
	})

	b.Run("watch-latency", func(b *testing.B) {
		ns := nextNS("watch")
		w, err := clients[0].CoreV1().ConfigMaps(ns).Watch(ctx, metav1.ListOptions{})
		if err != nil {
			b.Fatal(err)
		}
		defer w.Stop()
		var mu sync.Mutex
		started := map[string]time.Time{}
		var watchLat []time.Duration
		received := make(chan struct{})
		go func() {
			defer close(received)
			seen := 0
			for ev := range w.ResultChan() {
				at := time.Now()
				if ev.Type != watch.Added {
					continue
				}
				name := ev.Object.(*corev1.ConfigMap).Name
				mu.Lock()
				if t0, ok := started[name]; ok {
					watchLat = append(watchLat, at.Sub(t0))
					seen++
				}
				mu.Unlock()
				if seen == b.N {
					return
				}
			}
		}()
		createLat := make([]time.Duration, b.N)
		b.ResetTimer()
		parallel(b, b.N, benchClients-1, func(c, i int) error {
			name := "cm-" + strconv.Itoa(i)
			t0 := time.Now()
			mu.Lock()
			started[name] = t0
			mu.Unlock()
			_, err := clients[c+1].CoreV1().ConfigMaps(ns).Create(ctx, benchConfigMap(name), metav1.CreateOptions{})
			createLat[i] = time.Since(t0)
			return err
		})
		select {
		case <-received:
		case <-time.After(time.Minute):
			b.Fatalf("watch delivered %d of %d events within a minute", len(watchLat), b.N)
		}
		b.ReportMetric(p50(watchLat), "watch-p50-ms")
		b.ReportMetric(p50(createLat), "create-p50-ms")
		b.StopTimer()

		// Raw etcd: put to event on a prefix watch, same concurrency.
		prefix := "/bench/watch-" + ns + "/"
		wctx, cancel := context.WithCancel(ctx)
		defer cancel()
		wch := etcd.Watch(wctx, prefix, clientv3.WithPrefix())
		rawStarted := make([]atomic.Int64, b.N)
		var rawLat []time.Duration
		rawDone := make(chan struct{})
		go func() {
			defer close(rawDone)
			for resp := range wch {
				at := time.Now()
				for _, ev := range resp.Events {
					i, _ := strconv.Atoi(strings.TrimPrefix(string(ev.Kv.Key), prefix))
					rawLat = append(rawLat, at.Sub(time.Unix(0, rawStarted[i].Load())))
				}
				if len(rawLat) >= b.N {
					return
				}
			}
		}()
		parallel(b, b.N, benchClients-1, func(_, i int) error {
			rawStarted[i].Store(time.Now().UnixNano())
			_, err := etcd.Put(ctx, prefix+strconv.Itoa(i), value)
			return err
		})
		select {
		case <-rawDone:
		case <-time.After(time.Minute):
			b.Fatalf("raw etcd watch delivered too few events")
		}
		b.ReportMetric(p50(rawLat), "etcd-watch-p50-ms")
	})
}

package storage

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
)

// Benchmarks report ops/s beside raw etcd through the same client, so the
// storage layer's overhead is visible:
//   go test -run '^$' -bench . -benchtime 2000x ./apiserver/storage/

func reportOpsPerSecond(b *testing.B) {
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "ops/s")
}

func benchTargets(b *testing.B) (Config, map[string]Interface) {
	cfg := testConfig(b)
	store := NewStore(testClient, cfg)
	return cfg, map[string]Interface{"Store": store, "Cacher": newTestCacher(b, cfg, CacherOptions{})}
}

func BenchmarkCreate(b *testing.B) {
	ctx := context.Background()
	b.Run("RawEtcdPut", func(b *testing.B) {
		cfg := testConfig(b)
		data, err := runtime.Encode(cfg.Codec, newConfigMap("ns", "raw", map[string]string{"k": "v"}))
		if err != nil {
			b.Fatal(err)
		}
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			if _, err := testClient.Put(ctx, objectKey(cfg, "ns", strconv.Itoa(i)), string(data)); err != nil {
				b.Fatal(err)
			}
		}
		reportOpsPerSecond(b)
	})
	for _, name := range []string{"Store", "Cacher"} {
		b.Run(name, func(b *testing.B) {
			cfg, targets := benchTargets(b)
			target := targets[name]
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				cm := newConfigMap("ns", strconv.Itoa(i), map[string]string{"k": "v"})
				if err := target.Create(ctx, objectKey(cfg, "ns", cm.Name), cm, &corev1.ConfigMap{}, 0); err != nil {
					b.Fatal(err)
				}
			}
			reportOpsPerSecond(b)
		})
	}
}

func BenchmarkGet(b *testing.B) {
	ctx := context.Background()
	b.Run("RawEtcdGet", func(b *testing.B) {
		cfg := testConfig(b)
		key := objectKey(cfg, "ns", "raw")
		if _, err := testClient.Put(ctx, key, "value"); err != nil {
			b.Fatal(err)
		}
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			if _, err := testClient.Get(ctx, key); err != nil {
				b.Fatal(err)
			}
		}
		reportOpsPerSecond(b)
	})
	for _, name := range []string{"Store", "Cacher"} {
		for _, rv := range []string{"", "0"} {
			b.Run(fmt.Sprintf("%s/rv=%q", name, rv), func(b *testing.B) {
				cfg, targets := benchTargets(b)
				target := targets[name]
				key := objectKey(cfg, "ns", "get")
				created := &corev1.ConfigMap{}
				if err := target.Create(ctx, key, newConfigMap("ns", "get", map[string]string{"k": "v"}), created, 0); err != nil {
					b.Fatal(err)
				}
				// Let the cache catch up so rv="0" finds the object.
				if err := target.Get(ctx, key, GetOptions{ResourceVersion: created.ResourceVersion}, &corev1.ConfigMap{}); err != nil {
					b.Fatal(err)
				}
				b.ResetTimer()
				for i := 0; i < b.N; i++ {
					if err := target.Get(ctx, key, GetOptions{ResourceVersion: rv}, &corev1.ConfigMap{}); err != nil {
						b.Fatal(err)
					}
				}
				reportOpsPerSecond(b)
			})
		}
	}
}

func BenchmarkUpdate(b *testing.B) {
	ctx := context.Background()
	for _, name := range []string{"Store", "Cacher"} {
		b.Run(name, func(b *testing.B) {
			cfg, targets := benchTargets(b)
			target := targets[name]
			key := objectKey(cfg, "ns", "update")
			if err := target.Create(ctx, key, newConfigMap("ns", "update", nil), nil, 0); err != nil {
				b.Fatal(err)
			}
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				value := strconv.Itoa(i)
				err := target.GuaranteedUpdate(ctx, key, &corev1.ConfigMap{}, false, nil, func(in runtime.Object) (runtime.Object, error) {
					cm := in.(*corev1.ConfigMap).DeepCopy()
					cm.Data = map[string]string{"i": value}
					return cm, nil
				})
				if err != nil {
					b.Fatal(err)
				}
			}
			reportOpsPerSecond(b)
		})
	}
}

func BenchmarkList2000(b *testing.B) {
	ctx := context.Background()
	cfg := testConfig(b)
	createConfigMaps(b, NewStore(testClient, cfg), cfg, "ns", 2000, func(i int) map[string]string {
		return map[string]string{"app": "bench", "shard": strconv.Itoa(i % 4)}
	})
	b.Run("RawEtcdRange", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			resp, err := testClient.Get(ctx, cfg.ResourcePrefix+"/", clientv3WithPrefix()...)
			if err != nil || len(resp.Kvs) != 2000 {
				b.Fatalf("%d kvs, %v", len(resp.Kvs), err)
			}
		}
		reportOpsPerSecond(b)
	})
	targets := map[string]Interface{"Store": NewStore(testClient, cfg), "Cacher": newTestCacher(b, cfg, CacherOptions{})}
	for _, name := range []string{"Store", "Cacher"} {
		for _, rv := range []string{"", "0"} {
			b.Run(fmt.Sprintf("%s/rv=%q", name, rv), func(b *testing.B) {
				for i := 0; i < b.N; i++ {
					list := &corev1.ConfigMapList{}
					if err := targets[name].GetList(ctx, cfg.ResourcePrefix, ListOptions{Recursive: true, ResourceVersion: rv}, list); err != nil || len(list.Items) != 2000 {
						b.Fatalf("%d items, %v", len(list.Items), err)
					}
				}
				b.ReportMetric(float64(b.Elapsed().Microseconds())/1000/float64(b.N), "ms/list")
				reportOpsPerSecond(b)
			})
		}
	}
}

func clientv3WithPrefix() []clientv3.OpOption { return []clientv3.OpOption{clientv3.WithPrefix()} }

// BenchmarkWatchDelivery measures how long after Create returns the event
// reaches a Cacher watcher, beside the Create latency itself.
func BenchmarkWatchDelivery(b *testing.B) {
	ctx := context.Background()
	cfg := testConfig(b)
	cacher := newTestCacher(b, cfg, CacherOptions{})
	w, err := cacher.Watch(ctx, cfg.ResourcePrefix, ListOptions{Recursive: true})
	if err != nil {
		b.Fatal(err)
	}
	defer w.Stop()
	createLatency := make([]time.Duration, 0, b.N)
	deliveryLatency := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		cm := newConfigMap("ns", strconv.Itoa(i), nil)
		start := time.Now()
		if err := cacher.Create(ctx, objectKey(cfg, "ns", cm.Name), cm, nil, 0); err != nil {
			b.Fatal(err)
		}
		created := time.Now()
		select {
		case ev := <-w.ResultChan():
			if ev.Type != watch.Added {
				b.Fatalf("got %s", ev.Type)
			}
		case <-time.After(10 * time.Second):
			b.Fatal("no event within 10s")
		}
		createLatency = append(createLatency, created.Sub(start))
		deliveryLatency = append(deliveryLatency, time.Since(start))
	}
	b.StopTimer()
	median := func(d []time.Duration) float64 {
		slices.Sort(d)
		return float64(d[len(d)/2].Microseconds())
	}
	b.ReportMetric(median(createLatency), "create-p50-µs")
	b.ReportMetric(median(deliveryLatency), "event-p50-µs")
}

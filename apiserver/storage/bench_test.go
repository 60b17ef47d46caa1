package storage

import (
	"context"
	"fmt"
	"strconv"
	"testing"

	clientv3 "go.etcd.io/etcd/client/v3"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
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

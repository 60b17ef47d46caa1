package testenv_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"

	"github.com/devplane/devplane/apiserver/testenv"
	"github.com/devplane/devplane/apiserver/testenv/crdgen"
)

// Fixtures of BenchmarkSnapshot: 20 provider-shaped CRDs (~100 KB each),
// 10 custom resources of each, and ConfigMaps in four namespaces to make
// 2,000 objects.
const (
	benchCRDs        = 20
	benchCRsPerCRD   = 10
	benchObjects     = 2000
	benchNamespaces  = 4
	benchSpecChanges = 100 // of each kind: deletes, updates, creates
)

// loadBenchFixtures creates the benchmark's objects with ten writers.
func loadBenchFixtures(b *testing.B, env *testenv.Instance, crds []*apiextensionsv1.CustomResourceDefinition) {
	ctx := b.Context()
	c := clientFor(b, env.Config())
	dyn := dynamic.NewForConfigOrDie(env.Config())
	for n := range benchNamespaces {
		ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("bench-%d", n)}}
		if _, err := c.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{}); err != nil {
			b.Fatal(err)
		}
	}
	var jobs []func() error
	for _, crd := range crds {
		v := crd.Spec.Versions[0].Name
		for _, sv := range crd.Spec.Versions {
			if sv.Storage {
				v = sv.Name
			}
		}
		ri := dyn.Resource(schema.GroupVersionResource{Group: crd.Spec.Group, Version: v, Resource: crd.Spec.Names.Plural})
		for i := range benchCRsPerCRD {
			obj := &unstructured.Unstructured{Object: map[string]any{
				"apiVersion": crd.Spec.Group + "/" + v, "kind": crd.Spec.Names.Kind,
				"metadata": map[string]any{"name": fmt.Sprintf("r-%d", i)},
				"spec":     map[string]any{"forProvider": map[string]any{"region": "eu-west-1"}},
			}}
			jobs = append(jobs, func() error {
				if crd.Spec.Scope == apiextensionsv1.NamespaceScoped {
					_, err := ri.Namespace("bench-0").Create(ctx, obj, metav1.CreateOptions{})
					return err
				}
				_, err := ri.Create(ctx, obj, metav1.CreateOptions{})
				return err
			})
		}
	}
	for i := len(jobs); i < benchObjects; i++ {
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("cm-%d", i)},
			Data: map[string]string{"i": fmt.Sprint(i), "payload": fmt.Sprintf("%0200d", i)}}
		ns := fmt.Sprintf("bench-%d", i%benchNamespaces)
		jobs = append(jobs, func() error {
			_, err := c.CoreV1().ConfigMaps(ns).Create(ctx, cm, metav1.CreateOptions{})
			return err
		})
	}
	runJobs(b, jobs)
}

func runJobs(b *testing.B, jobs []func() error) {
	var wg sync.WaitGroup
	errs := make(chan error, len(jobs))
	for w := range 10 {
		wg.Go(func() {
			for i := w; i < len(jobs); i += 10 {
				if err := jobs[i](); err != nil {
					errs <- err
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		b.Fatal(err)
	}
}

// specChanges is what one spec does to the fixtures: 100 deletes, 100
// updates and 100 creates.
func specChanges(b *testing.B, env *testenv.Instance, round int) {
	ctx := b.Context()
	c := clientFor(b, env.Config())
	var jobs []func() error
	for i := range benchSpecChanges {
		// ConfigMap cm-<n> is in namespace bench-<n mod 4>.
		del, upd := benchObjects-1-i, benchObjects/2+i
		delNS, updNS := fmt.Sprintf("bench-%d", del%benchNamespaces), fmt.Sprintf("bench-%d", upd%benchNamespaces)
		jobs = append(jobs,
			func() error {
				return c.CoreV1().ConfigMaps(delNS).Delete(ctx, fmt.Sprintf("cm-%d", del), metav1.DeleteOptions{})
			},
			func() error {
				cm, err := c.CoreV1().ConfigMaps(updNS).Get(ctx, fmt.Sprintf("cm-%d", upd), metav1.GetOptions{})
				if err != nil {
					return err
				}
				cm.Data["round"] = fmt.Sprint(round)
				_, err = c.CoreV1().ConfigMaps(updNS).Update(ctx, cm, metav1.UpdateOptions{})
				return err
			},
			func() error {
				cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("new-%d", i)}}
				_, err := c.CoreV1().ConfigMaps(delNS).Create(ctx, cm, metav1.CreateOptions{})
				return err
			})
	}
	runJobs(b, jobs)
}

// BenchmarkSnapshot measures, on a testenv instance (etcd without fsync)
// holding 2,000 objects (1,800 ConfigMaps, 200 custom resources) and 20
// provider-shaped CRDs:
//
//   - snapshot-ms: Instance.Snapshot;
//   - restore-ms: Restore after a spec's changes (100 deletes, 100
//     updates, 100 creates), until the caches serve the restored state;
//   - restore-all-ms: Restore after Reset(ctx, false) removed every
//     object and CRD, until the CRDs are served again;
//   - fork-ms: Start(Options{From: snapshot}) until ready, CRDs served.
//
// Each with the process's CPU time over the same span (-cpu-ms: every
// goroutine's, the caches' and etcd's included), which a loaded machine
// stretches less than wall time. No timing is asserted; issue 33 asks
// ≤ 50, 50 and 100 ms.
func BenchmarkSnapshot(b *testing.B) {
	ctx := context.Background()
	crds := crdgen.ProviderCRDs(benchCRDs, 33)
	env := testenv.StartT(b, testenv.Options{CRDs: crds})
	loadBenchFixtures(b, env, crds)
	// Each phase's wall time and the process's CPU time during it.
	var wall, cpu [4]time.Duration
	var start time.Time
	var startCPU time.Duration
	begin := func() { start, startCPU = time.Now(), processCPU() }
	end := func(phase int) {
		wall[phase] += time.Since(start)
		cpu[phase] += processCPU() - startCPU
	}
	var snap *testenv.Snapshot
	round := 0
	for b.Loop() {
		begin()
		s, err := env.Snapshot(ctx)
		if err != nil {
			b.Fatal(err)
		}
		end(0)
		snap = s

		b.StopTimer()
		round++
		specChanges(b, env, round)
		b.StartTimer()
		begin()
		if err := env.Restore(ctx, snap); err != nil {
			b.Fatal(err)
		}
		end(1)

		b.StopTimer()
		if err := env.Reset(ctx, false); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		begin()
		if err := env.Restore(ctx, snap); err != nil {
			b.Fatal(err)
		}
		end(2)

		begin()
		fork, err := testenv.Start(ctx, testenv.Options{From: snap})
		if err != nil {
			b.Fatal(err)
		}
		end(3)
		b.StopTimer()
		if err := fork.Stop(); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
	}
	n := float64(b.N)
	ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 / n }
	b.ReportMetric(float64(snap.Objects()), "keys")
	for phase, name := range []string{"snapshot", "restore", "restore-all", "fork"} {
		b.ReportMetric(ms(wall[phase]), name+"-ms")
		b.ReportMetric(ms(cpu[phase]), name+"-cpu-ms")
	}
	b.ReportMetric(0, "ns/op") // the op is all four; the metrics above split it
}

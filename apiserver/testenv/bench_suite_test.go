package testenv_test

import (
	"context"
	"fmt"
	"runtime"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/devplane/devplane/apiserver/testenv"
)

// suiteSpecs is the size of the benchmarked suite (issue 9).
const suiteSpecs = 20

// newSuiteClient is what a suite's BeforeSuite builds: a controller-runtime
// client for the instance.
func newSuiteClient(tb testing.TB, cfg *rest.Config) client.Client {
	tb.Helper()
	c, err := client.New(cfg, client.Options{})
	if err != nil {
		tb.Fatal(err)
	}
	return c
}

// runSpec is one spec of the suite: a namespace, a ConfigMap and a Secret
// in it, both read back through the client, then the namespace deleted.
func runSpec(tb testing.TB, ctx context.Context, c client.Client, i int) {
	tb.Helper()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("spec-%d", i)}}
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "settings", Namespace: ns.Name},
		Data: map[string]string{"spec": fmt.Sprint(i)}}
	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "token", Namespace: ns.Name},
		StringData: map[string]string{"token": fmt.Sprintf("t-%d", i)}}
	for _, obj := range []client.Object{ns, cm, secret} {
		if err := c.Create(ctx, obj); err != nil {
			tb.Fatalf("spec %d: creating %T: %v", i, obj, err)
		}
	}
	gotCM := &corev1.ConfigMap{}
	if err := c.Get(ctx, client.ObjectKeyFromObject(cm), gotCM); err != nil {
		tb.Fatalf("spec %d: %v", i, err)
	}
	if gotCM.Data["spec"] != fmt.Sprint(i) {
		tb.Fatalf("spec %d: ConfigMap data %v", i, gotCM.Data)
	}
	gotSecret := &corev1.Secret{}
	if err := c.Get(ctx, client.ObjectKeyFromObject(secret), gotSecret); err != nil {
		tb.Fatalf("spec %d: %v", i, err)
	}
	if string(gotSecret.Data["token"]) != fmt.Sprintf("t-%d", i) {
		tb.Fatalf("spec %d: Secret data %q", i, gotSecret.Data["token"])
	}
	if err := c.Delete(ctx, ns); err != nil {
		tb.Fatalf("spec %d: deleting the namespace: %v", i, err)
	}
}

// BenchmarkSuite20Specs runs the same 20-spec controller-runtime suite two
// ways and reports each suite's wall time:
//
//   - fresh-ms: a new devplane per spec (Start, client, spec, Stop), what a
//     suite pays when every spec (or every small suite) starts a server;
//   - shared-ms: one devplane for the suite (Start and client once) with
//     Reset(ctx, true) between specs, Stop at the end.
//
// No timing is asserted; the figures are for comparison.
func BenchmarkSuite20Specs(b *testing.B) {
	ctx := context.Background()
	var fresh, shared time.Duration
	for b.Loop() {
		start := time.Now()
		for i := range suiteSpecs {
			env, err := testenv.Start(ctx, testenv.Options{})
			if err != nil {
				b.Fatal(err)
			}
			runSpec(b, ctx, newSuiteClient(b, env.Config()), i)
			if err := env.Stop(); err != nil {
				b.Fatal(err)
			}
		}
		fresh += time.Since(start)

		start = time.Now()
		env, err := testenv.Start(ctx, testenv.Options{})
		if err != nil {
			b.Fatal(err)
		}
		c := newSuiteClient(b, env.Config())
		for i := range suiteSpecs {
			runSpec(b, ctx, c, i)
			if err := env.Reset(ctx, true); err != nil {
				b.Fatal(err)
			}
		}
		if err := env.Stop(); err != nil {
			b.Fatal(err)
		}
		shared += time.Since(start)
	}
	n := float64(b.N)
	b.ReportMetric(float64(fresh.Milliseconds())/n, "fresh-ms")
	b.ReportMetric(float64(shared.Milliseconds())/n, "shared-ms")
	b.ReportMetric(fresh.Seconds()/shared.Seconds(), "fresh/shared")
	b.ReportMetric(0, "ns/op") // the op is both suites; the metrics above split it
}

// parallelSpecs is how many specs of the suite run at once (issue 33:
// 8 in parallel on 2 cores).
const parallelSpecs = 8

// BenchmarkSuite20SpecsParallel runs the 20-spec suite with a devplane of
// its own per spec (Start, client, spec, Stop), 8 specs at a time, as
// `go test -parallel 8` or Ginkgo's -p would, two ways:
//
//   - fresh: each spec's instance starts empty (Start);
//   - fork: each spec's instance is a fork (Options.From) of a snapshot
//     the suite took once of a started instance, as a TestMain would.
//
// It reports each suite's wall time (-wall-ms), the process's CPU time
// per spec (-cpu-ms-per-spec: a loaded machine stretches wall time, not
// this), and the live heap each of 8 idle fresh instances adds after a GC
// (heap-MB-per-instance). testenv: etcd without fsync. No timing is
// asserted; issue 33 asks ≤ 1.5 s and ≤ 40 MB.
func BenchmarkSuite20SpecsParallel(b *testing.B) {
	ctx := context.Background()
	// Measured first, before any instance has come and gone.
	heap := heapPerInstance(b, parallelSpecs)
	template := testenv.StartT(b, testenv.Options{})
	pristine, err := template.Snapshot(ctx)
	if err != nil {
		b.Fatal(err)
	}
	modes := []struct {
		name string
		opts testenv.Options
	}{{"fresh", testenv.Options{}}, {"fork", testenv.Options{From: pristine}}}
	var wall, cpu [2]time.Duration
	for b.Loop() {
		for m, mode := range modes {
			start, startCPU := time.Now(), processCPU()
			runParallelSuite(b, mode.opts)
			wall[m] += time.Since(start)
			cpu[m] += processCPU() - startCPU
		}
	}
	for m, mode := range modes {
		b.ReportMetric(float64(wall[m].Milliseconds())/float64(b.N), mode.name+"-wall-ms")
		b.ReportMetric(float64(cpu[m].Milliseconds())/float64(b.N*suiteSpecs), mode.name+"-cpu-ms-per-spec")
	}
	b.ReportMetric(heap/(1<<20), "heap-MB-per-instance")
	b.ReportMetric(0, "ns/op") // the op is both suites; the metrics above split it
}

// runParallelSuite runs the suite's specs, parallelSpecs at a time, each
// on an instance of its own started with opts.
func runParallelSuite(b *testing.B, opts testenv.Options) {
	ctx := context.Background()
	sem := make(chan struct{}, parallelSpecs)
	var wg sync.WaitGroup
	errs := make(chan error, suiteSpecs)
	for i := range suiteSpecs {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			env, err := testenv.Start(ctx, opts)
			if err != nil {
				errs <- err
				return
			}
			runSpec(b, ctx, newSuiteClient(b, env.Config()), i)
			if err := env.Stop(); err != nil {
				errs <- err
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		b.Fatal(err)
	}
}

// heapPerInstance is the live heap n idle instances add, each.
func heapPerInstance(b *testing.B, n int) float64 {
	live := func() uint64 {
		runtime.GC()
		runtime.GC() // what finalizers released
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		return ms.HeapAlloc
	}
	before := live()
	envs := make([]*testenv.Instance, n)
	for i := range envs {
		env, err := testenv.Start(context.Background(), testenv.Options{})
		if err != nil {
			b.Fatal(err)
		}
		envs[i] = env
	}
	after := live()
	for _, env := range envs {
		if err := env.Stop(); err != nil {
			b.Fatal(err)
		}
	}
	return float64(after-before) / float64(n)
}

package testenv_test

import (
	"context"
	"fmt"
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

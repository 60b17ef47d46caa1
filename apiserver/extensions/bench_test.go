package extensions_test

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/yaml"
)

func loadLargeCRD(b testing.TB) *apiextensionsv1.CustomResourceDefinition {
	data, err := os.ReadFile(largeCRDPath)
	if err != nil {
		b.Fatal(err)
	}
	crd := &apiextensionsv1.CustomResourceDefinition{}
	if err := yaml.Unmarshal(data, crd); err != nil {
		b.Fatal(err)
	}
	return crd
}

// BenchmarkCRDEstablished: create → Established, then delete (untimed).
func BenchmarkCRDEstablished(b *testing.B) {
	for _, tc := range []struct {
		name string
		crd  func(testing.TB) *apiextensionsv1.CustomResourceDefinition
	}{
		{"small", func(t testing.TB) *apiextensionsv1.CustomResourceDefinition { return readCRD(t, "crontab-crd.yaml") }},
		{"large", loadLargeCRD},
	} {
		b.Run(tc.name, func(b *testing.B) {
			d := start(b)
			ext := d.apiext(b).ApiextensionsV1().CustomResourceDefinitions()
			ctx := context.Background()
			crd := tc.crd(b)
			var total time.Duration
			for i := 0; b.Loop(); i++ {
				b.StopTimer()
				// Each round a new group and name: no wait for the old one to go.
				c := crd.DeepCopy()
				c.Spec.Group = fmt.Sprintf("g%d.%s", i, c.Spec.Group)
				c.Name = c.Spec.Names.Plural + "." + c.Spec.Group
				b.StartTimer()
				began := time.Now()
				if _, err := ext.Create(ctx, c, metav1.CreateOptions{}); err != nil {
					b.Fatal(err)
				}
				waitEstablished(b, d.apiext(b), c.Name)
				total += time.Since(began)
			}
			b.ReportMetric(float64(total.Milliseconds())/float64(b.N), "ms-to-established")
		})
	}
}

// BenchmarkList1000: list of 1,000 custom resources beside 1,000 ConfigMaps
// of similar size, from the watch cache (RV="") in the same devplane.
func BenchmarkList1000(b *testing.B) {
	d := start(b)
	ctx := context.Background()
	ext := d.apiext(b)
	if _, err := ext.ApiextensionsV1().CustomResourceDefinitions().Create(ctx, readCRD(b, "crontab-crd.yaml"), metav1.CreateOptions{}); err != nil {
		b.Fatal(err)
	}
	waitEstablished(b, ext, "crontabs.stable.example.com")
	cs := kubernetes.NewForConfigOrDie(d.config)
	dyn := d.dynamic(b).Resource(crontabs).Namespace("default")
	for i := range 1000 {
		name := fmt.Sprintf("obj-%04d", i)
		if _, err := dyn.Create(ctx, cronTab(name, map[string]any{"app": "bench"}, 1), metav1.CreateOptions{}); err != nil {
			b.Fatal(err)
		}
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"app": "bench"}},
			Data: map[string]string{"cronSpec": "* * * * *", "image": "nginx", "replicas": "1"}}
		if _, err := cs.CoreV1().ConfigMaps("default").Create(ctx, cm, metav1.CreateOptions{}); err != nil {
			b.Fatal(err)
		}
	}
	b.Run("crontabs", func(b *testing.B) {
		for b.Loop() {
			l, err := dyn.List(ctx, metav1.ListOptions{})
			if err != nil || len(l.Items) != 1000 {
				b.Fatalf("%v %d", err, len(l.Items))
			}
		}
		b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N), "µs/list")
	})
	b.Run("configmaps", func(b *testing.B) {
		for b.Loop() {
			l, err := cs.CoreV1().ConfigMaps("default").List(ctx, metav1.ListOptions{})
			if err != nil || len(l.Items) < 1000 {
				b.Fatalf("%v %d", err, len(l.Items))
			}
		}
		b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N), "µs/list")
	})
}

// BenchmarkAggregatedDiscovery: GET /apis as aggregated discovery without
// and with the large CRD served.
func BenchmarkAggregatedDiscovery(b *testing.B) {
	d := start(b)
	hc, err := rest.HTTPClientFor(d.config)
	if err != nil {
		b.Fatal(err)
	}
	get := func(b *testing.B) {
		req, _ := http.NewRequest(http.MethodGet, d.config.Host+"/apis", nil)
		req.Header.Set("Accept", "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json")
		resp, err := hc.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		n := 0
		buf := make([]byte, 32<<10)
		for {
			m, err := resp.Body.Read(buf)
			n += m
			if err != nil {
				break
			}
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK || n == 0 {
			b.Fatalf("discovery: %d", resp.StatusCode)
		}
	}
	run := func(name string) {
		b.Run(name, func(b *testing.B) {
			for b.Loop() {
				get(b)
			}
			b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N), "µs/discovery")
		})
	}
	run("without-large-crd")
	ext := d.apiext(b)
	if _, err := ext.ApiextensionsV1().CustomResourceDefinitions().Create(context.Background(), loadLargeCRD(b), metav1.CreateOptions{}); err != nil {
		b.Fatal(err)
	}
	waitEstablished(b, ext, largeCRDName)
	run("with-large-crd")
}

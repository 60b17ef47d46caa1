package openapi

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/devplane/devplane/apiserver/testenv/crdgen"
)

// BenchmarkFirstV3GroupVersionWithCRDs measures the first
// /openapi/v3/apis/<group>/<version> request for a group of ten provider
// CRDs (~50 KB schema each) with 300 CRDs served, custom resource schemas
// built the old way (spec.Schema) and as JSON. With cold definitions the
// generated definitions the document names (ObjectMeta's closure...) are
// built in the request too, as on a server's first v3 document; warm, they
// were built by an earlier one. ms/op is the request's wall time, cpu-ms/op
// its process CPU (building is spread over all processors).
func BenchmarkFirstV3GroupVersionWithCRDs(b *testing.B) {
	crds := providerCRDs(300)
	path := "/openapi/v3/apis/" + crdgen.Group(0) + "/v1beta2"
	for _, asJSON := range []bool{false, true} {
		name := "spec.Schema"
		if asJSON {
			name = "JSON"
		}
		resources, extra := crdState(b, crds, asJSON)
		resources = append(builtinResources(), resources...)
		warm := NewService("v1.37.0") // what only the first document of a process builds
		warm.Update(resources, extra)
		fetchV3(b, warm, path)
		for _, cold := range []bool{false, true} {
			definitions := "warm"
			if cold {
				definitions = "cold"
			}
			b.Run(fmt.Sprintf("%s/definitions=%s", name, definitions), func(b *testing.B) {
				var wall, cpu time.Duration
				var size int
				for b.Loop() {
					if cold {
						generatedV3 = resetDefinitions(v3RefPrefix)
					}
					s := NewService("v1.37.0")
					s.Update(resources, extra)
					start, before := time.Now(), processCPU()
					size = fetchV3(b, s, path)
					wall += time.Since(start)
					cpu += processCPU() - before
				}
				b.ReportMetric(float64(wall.Microseconds())/1000/float64(b.N), "ms/op")
				b.ReportMetric(float64(cpu.Microseconds())/1000/float64(b.N), "cpu-ms/op")
				b.ReportMetric(float64(size), "json-bytes")
			})
		}
	}
}

// fetchV3 GETs a v3 document as JSON without keeping it; it returns its size.
func fetchV3(b *testing.B, s *Service, path string) int {
	b.Helper()
	w := &countingWriter{header: http.Header{}}
	request := httptest.NewRequest(http.MethodGet, path, nil)
	request.Header.Set("Accept", "application/json")
	s.ServeHTTP(w, request)
	if w.status != http.StatusOK {
		b.Fatalf("GET %s: %d", path, w.status)
	}
	return w.size
}

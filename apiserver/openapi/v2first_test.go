package openapi

import (
	"net/http"
	"net/http/httptest"
	"runtime/debug"
	"testing"
	"time"
)

// BenchmarkFirstV2ServedShape measures the first /openapi/v2 JSON request
// as a served devplane sees it after a burst of CRDs: every built-in kind,
// 300 provider CRDs (two versions each, schemas written as JSON), no
// generated definition built yet, and the client (kubectl, client-go)
// asking for gzip. ms/op is wall time on all processors.
func BenchmarkFirstV2ServedShape(b *testing.B) {
	crds := providerCRDs(300)
	custom, extra := crdState(b, crds, true)
	resources := append(everyGeneratedKind(), custom...)
	for _, gzip := range []bool{false, true} {
		name := "identity"
		if gzip {
			name = "gzip"
		}
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			var cpu time.Duration
			var size int
			for b.Loop() {
				b.StopTimer()
				generatedV2 = resetDefinitions(v2RefPrefix)
				s := NewService("v1.37.0")
				s.Update(resources, extra)
				r := httptest.NewRequest(http.MethodGet, "/openapi/v2", nil)
				r.Header.Set("Accept", "application/json")
				if gzip {
					r.Header.Set("Accept-Encoding", "gzip")
				}
				w := &countingWriter{header: http.Header{}}
				debug.FreeOSMemory() // as devplane up does after a burst of work
				b.StartTimer()
				before := processCPU()
				s.ServeHTTP(w, r)
				cpu += processCPU() - before
				if w.status != http.StatusOK {
					b.Fatal(w.status)
				}
				size = w.size
			}
			b.ReportMetric(float64(cpu.Milliseconds())/float64(b.N), "cpu-ms/op")
			b.ReportMetric(float64(size), "bytes")
		})
	}
	// The first protobuf request after that first JSON one: what it costs
	// depends on the garbage the JSON one left to reuse.
	b.Run("protobuf-after-json", func(b *testing.B) {
		var cpu time.Duration
		for b.Loop() {
			b.StopTimer()
			generatedV2 = resetDefinitions(v2RefPrefix)
			s := NewService("v1.37.0")
			s.Update(resources, extra)
			debug.FreeOSMemory()
			s.ServeHTTP(&countingWriter{header: http.Header{}}, httptest.NewRequest(http.MethodGet, "/openapi/v2", nil))
			r := httptest.NewRequest(http.MethodGet, "/openapi/v2", nil)
			r.Header.Set("Accept", protobufV2)
			w := &countingWriter{header: http.Header{}}
			b.StartTimer()
			before := processCPU()
			s.ServeHTTP(w, r)
			cpu += processCPU() - before
			if w.status != http.StatusOK {
				b.Fatal(w.status)
			}
		}
		b.ReportMetric(float64(cpu.Milliseconds())/float64(b.N), "cpu-ms/op")
	})
}

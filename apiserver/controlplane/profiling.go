package controlplane

import (
	"net/http"
	"net/http/pprof"
	"strings"
)

// installProfiling serves Go's profiles at /debug/pprof/ as kube-apiserver
// does with --profiling. It is a non-resource path, so RBAC lets only
// cluster admins (system:masters) read it.
func (cp *ControlPlane) installProfiling() {
	named := map[string]http.HandlerFunc{
		"/cmdline": pprof.Cmdline,
		"/profile": pprof.Profile,
		"/symbol":  pprof.Symbol,
		"/trace":   pprof.Trace,
	}
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if fn, ok := named[strings.TrimPrefix(r.URL.Path, "/debug/pprof")]; ok {
			fn(w, r)
			return
		}
		pprof.Index(w, r) // the index, and every named profile (heap, goroutine, ...)
	})
	cp.Aggregator.Handle("/debug/pprof/*name", h)
	cp.Aggregator.Handle("/debug/pprof", http.RedirectHandler("/debug/pprof/", http.StatusMovedPermanently))
}

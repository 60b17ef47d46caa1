// Package metrics keeps one devplane's Prometheus metrics, served at
// /metrics as kube-apiserver serves them: requests counted and timed under
// kube's names and labels, on a registry of our own, plus what the process
// registers globally (the embedded etcd server's metrics, Go runtime and
// process). Several devplanes in one process (tests) each count their own
// requests and share the process-wide part.
package metrics

import (
	"bufio"
	"errors"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/devplane/devplane/apiserver/request"
)

// Metrics are one API server's request metrics.
type Metrics struct {
	registry *prometheus.Registry
	requests *prometheus.CounterVec
	latency  *prometheus.HistogramVec
	inflight *prometheus.GaugeVec
}

var requestLabels = []string{"verb", "dry_run", "group", "version", "resource", "subresource", "scope", "component"}

// New makes the metrics on a fresh registry.
func New() *Metrics {
	m := &Metrics{
		registry: prometheus.NewRegistry(),
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "apiserver_request_total",
			Help: "Counter of apiserver requests broken out for each verb, dry run value, group, version, resource, scope, component, and HTTP response code.",
		}, append(requestLabels, "code")),
		latency: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "apiserver_request_duration_seconds",
			Help: "Response latency distribution in seconds for each verb, dry run value, group, version, resource, subresource, scope and component (watches excluded).",
			Buckets: []float64{0.005, 0.025, 0.05, 0.1, 0.2, 0.4, 0.6, 0.8, 1.0, 1.25, 1.5, 2, 3,
				4, 5, 6, 8, 10, 15, 20, 30, 45, 60},
		}, requestLabels),
		inflight: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "apiserver_current_inflight_requests",
			Help: "Maximal number of currently used inflight request limit of this apiserver per request kind in last second.",
		}, []string{"request_kind"}),
	}
	m.registry.MustRegister(m.requests, m.latency, m.inflight)
	return m
}

// Handler serves the Prometheus text format: this server's metrics and
// the process-wide ones.
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(prometheus.Gatherers{m.registry, prometheus.DefaultGatherer}, promhttp.HandlerOpts{})
}

// Wrap counts and times every request h serves. It must run inside the
// request-info filter (it labels requests by their RequestInfo).
func (m *Metrics) Wrap(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		info, _ := request.RequestInfoFrom(r.Context())
		kind := "readOnly"
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			kind = "mutating"
		}
		gauge := m.inflight.WithLabelValues(kind)
		gauge.Inc()
		defer gauge.Dec()
		start := time.Now()
		rec := &codeRecorder{ResponseWriter: w}
		h.ServeHTTP(rec, r)
		labels := labelsOf(r, info)
		m.requests.WithLabelValues(append(labels, strconv.Itoa(rec.code()))...).Inc()
		if labels[0] != "WATCH" {
			m.latency.WithLabelValues(labels...).Observe(time.Since(start).Seconds())
		}
	})
}

// labelsOf are kube's request labels: an upper-case verb (APPLY for
// server-side apply), the resource and its scope.
func labelsOf(r *http.Request, info *request.RequestInfo) []string {
	dryRun := ""
	if v := r.URL.Query()["dryRun"]; len(v) > 0 {
		dryRun = strings.Join(v, ",")
	}
	if info == nil || !info.IsResourceRequest {
		return []string{r.Method, dryRun, "", "", "", "", "", "apiserver"}
	}
	verb := strings.ToUpper(info.Verb)
	switch info.Verb {
	case "create":
		verb = "POST"
	case "update":
		verb = "PUT"
	case "patch":
		if strings.HasPrefix(r.Header.Get("Content-Type"), "application/apply-patch") {
			verb = "APPLY"
		}
	}
	scope := "cluster" // as kube's CleanScope
	switch {
	case info.Name != "" || info.Verb == "create":
		scope = "resource"
	case info.Namespace != "":
		scope = "namespace"
	}
	return []string{verb, dryRun, info.APIGroup, info.APIVersion, info.Resource, info.Subresource, scope, "apiserver"}
}

// codeRecorder remembers the response code, keeping Flush for watches.
type codeRecorder struct {
	http.ResponseWriter
	status int
}

func (c *codeRecorder) WriteHeader(code int) {
	if c.status == 0 {
		c.status = code
	}
	c.ResponseWriter.WriteHeader(code)
}

func (c *codeRecorder) Write(b []byte) (int, error) {
	if c.status == 0 {
		c.status = http.StatusOK
	}
	return c.ResponseWriter.Write(b)
}

func (c *codeRecorder) Flush() {
	if f, ok := c.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

func (c *codeRecorder) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	if h, ok := c.ResponseWriter.(http.Hijacker); ok {
		return h.Hijack()
	}
	return nil, nil, errors.New("response writer does not support hijacking")
}

func (c *codeRecorder) Unwrap() http.ResponseWriter { return c.ResponseWriter }

func (c *codeRecorder) code() int {
	if c.status == 0 {
		return http.StatusOK
	}
	return c.status
}

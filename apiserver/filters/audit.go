package filters

import (
	"bufio"
	"net"
	"net/http"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/devplane/devplane/apiserver/audit"
	"github.com/devplane/devplane/apiserver/request"
)

// WithAuditRecord opens each request's audit record (its ID in the
// Audit-Id header), counts what the response writes and closes the record
// into the recent-request ring and the audit log. It runs outside
// authentication, so refused requests are recorded too; WithAuditPolicy
// evaluates the policy once the user is known.
func WithAuditRecord(h http.Handler, a *audit.Auditor) http.Handler {
	if a == nil {
		return h
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rec := a.Begin(w, r)
		aw := &auditWriter{ResponseWriter: w, a: a, rec: rec}
		panicked := true
		defer func() {
			rec.Bytes = aw.bytes
			a.End(rec, panicked)
		}()
		h.ServeHTTP(aw, r.WithContext(audit.WithRecord(r.Context(), rec)))
		panicked = false
	})
}

// WithAuditPolicy evaluates the audit policy for the authenticated user
// (before impersonation, as kube) and writes the RequestReceived stage.
func WithAuditPolicy(h http.Handler, a *audit.Auditor) http.Handler {
	if a == nil {
		return h
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if rec := audit.RecordFrom(r.Context()); rec != nil {
			u, _ := request.UserFrom(r.Context())
			audit.SetUser(r.Context(), u)
			a.Evaluate(rec)
		}
		h.ServeHTTP(w, r)
	})
}

// auditWriter tells the record the response's code (the ResponseStarted
// stage of a watch) and counts its bytes, keeping Flush and Hijack.
type auditWriter struct {
	http.ResponseWriter
	a       *audit.Auditor
	rec     *audit.Record
	bytes   int64
	started bool
}

func (w *auditWriter) WriteHeader(code int) {
	if !w.started {
		w.started = true
		w.a.ResponseStarted(w.rec, code)
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *auditWriter) Write(b []byte) (int, error) {
	if !w.started {
		w.started = true
		w.a.ResponseStarted(w.rec, http.StatusOK)
	}
	n, err := w.ResponseWriter.Write(b)
	w.bytes += int64(n)
	return n, err
}

func (w *auditWriter) Flush() {
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

func (w *auditWriter) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	if h, ok := w.ResponseWriter.(http.Hijacker); ok {
		if !w.started {
			w.started = true
			w.a.ResponseStarted(w.rec, http.StatusSwitchingProtocols)
		}
		return h.Hijack()
	}
	return nil, nil, errNoHijack
}

func (w *auditWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// LogResponseStatus takes the Status WriteStatus answers with.
func (w *auditWriter) LogResponseStatus(st *metav1.Status, body []byte) {
	w.rec.LogResponseStatus(st, body)
}

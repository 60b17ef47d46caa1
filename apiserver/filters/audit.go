package filters

import (
	"net/http"

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
		rec, aw := a.Begin(w, r)
		panicked := true
		defer func() { a.End(rec, panicked) }()
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
			a.Evaluate(rec, u)
		}
		h.ServeHTTP(w, r)
	})
}

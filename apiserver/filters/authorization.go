package filters

import (
	"errors"
	"log/slog"
	"net/http"

	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/devplane/devplane/apiserver/audit"
	"github.com/devplane/devplane/apiserver/authz"
	"github.com/devplane/devplane/apiserver/request"
)

// WithAuthorization lets through only what a allows for the user and
// request info in the context (set by WithAuthentication, WithImpersonation
// and WithRequestInfo); anything else gets kube's 403 Status.
func WithAuthorization(h http.Handler, a authz.Authorizer, logger *slog.Logger) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		user, _ := request.UserFrom(r.Context())
		info, ok := request.RequestInfoFrom(r.Context())
		if !ok {
			WriteStatus(w, apierrors.NewInternalError(errors.New("no request info found for request")))
			return
		}
		attrs := authz.AttributesFrom(user, info)
		decision, reason, err := a.Authorize(r.Context(), attrs)
		if err != nil {
			logger.Info("authorization error", "path", r.URL.Path, "user", attrs.User, "err", err)
		}
		if decision != authz.Allow {
			audit.AddAnnotation(r.Context(), audit.AnnotationDecision, "forbid")
			audit.AddAnnotation(r.Context(), audit.AnnotationReason, reason)
			WriteStatus(w, authz.Forbidden(attrs, reason))
			return
		}
		audit.AddAnnotation(r.Context(), audit.AnnotationDecision, "allow")
		audit.AddAnnotation(r.Context(), audit.AnnotationReason, reason)
		h.ServeHTTP(w, r)
	})
}

package snapshot

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/devplane/devplane/apiserver/filters"
)

// Path is where a server takes and restores snapshots (a non-resource
// URL: RBAC grants it to cluster admins only, through nonResourceURLs "*").
const Path = "/debug/devplane/snapshot"

// ContentType is a snapshot file's media type.
const ContentType = "application/vnd.devplane.snapshot"

// maxUpload bounds a restore's body.
const maxUpload = 4 << 30

// Server is a running server's side of the endpoint.
type Server interface {
	// TakeSnapshot reads the current state.
	TakeSnapshot(ctx context.Context) (*Snapshot, error)
	// RestoreSnapshot writes s back and returns once the server's caches
	// serve the restored state.
	RestoreSnapshot(ctx context.Context, s *Snapshot) (Result, error)
}

// Handler serves Path: GET answers with a snapshot file, PUT restores the
// snapshot file in its body and answers with the Result as JSON. Errors
// are kube Statuses.
func Handler(srv Server) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.Method {
		case http.MethodGet:
			s, err := srv.TakeSnapshot(r.Context())
			if err != nil {
				filters.WriteStatus(w, apierrors.NewInternalError(err))
				return
			}
			w.Header().Set("Content-Type", ContentType)
			_, _ = s.WriteTo(w)
		case http.MethodPut:
			s, err := Read(http.MaxBytesReader(w, r.Body, maxUpload))
			if err != nil {
				filters.WriteStatus(w, apierrors.NewBadRequest(err.Error()))
				return
			}
			res, err := srv.RestoreSnapshot(r.Context(), s)
			if errors.Is(err, ErrConflict) {
				filters.WriteStatus(w, statusError(http.StatusConflict, metav1.StatusReasonConflict, err.Error()))
				return
			}
			if err != nil {
				filters.WriteStatus(w, apierrors.NewInternalError(err))
				return
			}
			body, _ := json.Marshal(res)
			w.Header().Set("Content-Type", "application/json")
			_, _ = w.Write(append(body, '\n'))
		default:
			w.Header().Set("Allow", "GET, PUT")
			filters.WriteStatus(w, statusError(http.StatusMethodNotAllowed, metav1.StatusReasonMethodNotAllowed,
				"GET "+Path+" takes a snapshot, PUT "+Path+" restores the one in the body"))
		}
	})
}

func statusError(code int32, reason metav1.StatusReason, message string) error {
	return &apierrors.StatusError{ErrStatus: metav1.Status{
		Status: metav1.StatusFailure, Code: code, Reason: reason, Message: message,
	}}
}

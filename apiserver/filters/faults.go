package filters

import (
	"log/slog"
	"net/http"
	"time"

	"github.com/devplane/devplane/apiserver/audit"
	"github.com/devplane/devplane/apiserver/faults"
	"github.com/devplane/devplane/apiserver/request"
)

// WithFaults applies the injector's rules to resource requests (after
// authentication and authorization, so they see what would be served).
// Each injection is named in a Warning header and a log line. With no
// rule set a request costs one atomic load.
func WithFaults(h http.Handler, inj *faults.Injector, logger *slog.Logger) http.Handler {
	if inj == nil {
		return h
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !inj.Active() {
			h.ServeHTTP(w, r)
			return
		}
		info, _ := request.RequestInfoFrom(r.Context())
		user, _ := request.UserFrom(r.Context())
		f := inj.Match(r, info, user)
		if f == nil {
			h.ServeHTTP(w, r)
			return
		}
		// kube's warning format: code 299, no agent, the text quoted.
		w.Header().Add("Warning", `299 - "devplane: injected fault `+f.Name+`"`)
		audit.AddAnnotation(r.Context(), audit.AnnotationFault, f.Name)
		userName := ""
		if user != nil {
			userName = user.Name
		}
		logger.Info("injected fault", "fault", f.Name, "verb", info.Verb,
			"resource", faults.QualifiedResource(info), "namespace", info.Namespace, "name", info.Name,
			"user", userName, "error", f.Error, "delay", f.Delay, "watch", f.Watch != nil, "webhookTimeout", f.WebhookTimeout != nil)
		if f.Delay > 0 {
			t := time.NewTimer(f.Delay)
			select {
			case <-t.C:
			case <-r.Context().Done():
				t.Stop()
			}
		}
		if err := f.Err(info); err != nil {
			if v := f.RetryAfterHeader(); v != "" {
				w.Header().Set("Retry-After", v)
			}
			WriteStatus(w, err)
			return
		}
		if f.Watch != nil {
			r = r.WithContext(faults.WithWatchEnd(r.Context(), f.Watch))
		}
		if f.WebhookTimeout != nil {
			r = r.WithContext(faults.WithWebhookTimeout(r.Context(), f.WebhookTimeout))
		}
		h.ServeHTTP(w, r)
	})
}

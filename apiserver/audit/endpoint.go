package audit

import (
	"bytes"
	"net/http"
	"time"

	"k8s.io/apimachinery/pkg/runtime"
	auditinternal "k8s.io/apiserver/pkg/apis/audit"
	auditv1 "k8s.io/apiserver/pkg/apis/audit/v1"
	kaudit "k8s.io/apiserver/pkg/audit"
)

// RecentPath is where a server serves its recent requests (a non-resource
// URL: RBAC grants it to cluster admins only, through nonResourceURLs "*").
// GET lists them as an audit.k8s.io/v1 EventList, oldest first; with
// ?watch=true it streams them instead, one Event per line, those held
// first and then each as it ends, until the client hangs up.
const RecentPath = "/debug/devplane/requests"

// followBuffer is how many records a slow follower may lag behind before
// it misses some.
const followBuffer = 1024

var eventCodec = kaudit.Codecs.LegacyCodec(auditv1.SchemeGroupVersion)

// Handler serves a's recent requests at RecentPath.
func Handler(a *Auditor) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet {
			http.Error(w, "GET "+RecentPath+" (?watch=true follows)", http.StatusMethodNotAllowed)
			return
		}
		if r.URL.Query().Get("watch") != "true" {
			list := &auditinternal.EventList{}
			for _, rec := range a.ring.Records() {
				list.Items = append(list.Items, *rec.Event())
			}
			body, err := runtime.Encode(eventCodec, list)
			if err != nil {
				http.Error(w, err.Error(), http.StatusInternalServerError)
				return
			}
			w.Header().Set("Content-Type", "application/json")
			_, _ = w.Write(body)
			return
		}
		held, next, stop := a.ring.Follow(followBuffer)
		defer stop()
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusOK)
		flusher, _ := w.(http.Flusher)
		var buf bytes.Buffer
		write := func(rec *Record) bool {
			buf.Reset()
			if err := eventCodec.Encode(rec.Event(), &buf); err != nil {
				return false
			}
			_, err := w.Write(buf.Bytes())
			return err == nil
		}
		for _, rec := range held {
			if !write(rec) {
				return
			}
		}
		if flusher != nil {
			flusher.Flush()
		}
		// A quiet stream still shows the client it is alive.
		keepAlive := time.NewTicker(30 * time.Second)
		defer keepAlive.Stop()
		for {
			select {
			case <-r.Context().Done():
				return
			case <-keepAlive.C:
				if _, err := w.Write([]byte("\n")); err != nil {
					return
				}
			case rec := <-next:
				if !write(rec) {
					return
				}
			drain:
				for {
					select {
					case rec := <-next:
						if !write(rec) {
							return
						}
					default:
						break drain
					}
				}
			}
			if flusher != nil {
				flusher.Flush()
			}
		}
	})
}

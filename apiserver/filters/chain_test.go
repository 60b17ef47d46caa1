package filters

import (
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

var quiet = slog.New(slog.DiscardHandler)

func status(t *testing.T, rec *httptest.ResponseRecorder) metav1.Status {
	t.Helper()
	var st metav1.Status
	if err := json.Unmarshal(rec.Body.Bytes(), &st); err != nil || st.Kind != "Status" {
		t.Fatalf("body is not a Status: %v %q", err, rec.Body.String())
	}
	return st
}

func TestPanicBecomesA500Status(t *testing.T) {
	h := WithPanicRecovery(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { panic("boom") }), quiet)
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest("GET", "/api/v1/pods", nil))
	if st := status(t, rec); rec.Code != 500 || st.Code != 500 || st.Reason != metav1.StatusReasonInternalError {
		t.Errorf("panic answered %d %+v", rec.Code, st)
	}
}

func TestMaxInFlightAnswers429WithRetryAfter(t *testing.T) {
	release, entered := make(chan struct{}), make(chan struct{}, 4)
	busy := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		entered <- struct{}{}
		<-release
	})
	h := WithRequestInfo(WithMaxInFlight(busy, 1, 1))
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { // occupies the single read slot
		defer wg.Done()
		h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("GET", "/api/v1/namespaces/a/pods", nil))
	}()
	<-entered
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest("GET", "/api/v1/namespaces/a/pods", nil))
	if st := status(t, rec); rec.Code != http.StatusTooManyRequests || rec.Header().Get("Retry-After") != "1" || st.Reason != metav1.StatusReasonTooManyRequests {
		t.Errorf("second read while full: %d Retry-After=%q %+v", rec.Code, rec.Header().Get("Retry-After"), st)
	}
	// Writes have their own slots, and watches are not counted at all.
	for _, req := range []*http.Request{
		httptest.NewRequest("POST", "/api/v1/namespaces/a/pods", nil),
		httptest.NewRequest("GET", "/api/v1/namespaces/a/pods?watch=true", nil),
	} {
		done := make(chan int)
		go func() {
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, req)
			done <- rec.Code
		}()
		select {
		case <-entered:
		case code := <-done:
			t.Errorf("%s %s was refused (%d) while only the read slot was full", req.Method, req.URL, code)
		case <-time.After(5 * time.Second):
			t.Fatalf("%s %s never reached the handler", req.Method, req.URL)
		}
		go func() { <-done }()
	}
	close(release)
	wg.Wait()
}

func TestTimeoutGivesShortRequestsADeadlineButNotWatches(t *testing.T) {
	var deadline time.Time
	var has bool
	h := WithRequestInfo(WithTimeout(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		deadline, has = r.Context().Deadline()
	}), time.Minute))
	h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("GET", "/api/v1/pods", nil))
	if !has || time.Until(deadline) > time.Minute || time.Until(deadline) < 50*time.Second {
		t.Errorf("list deadline = %v (set: %v), want about a minute", time.Until(deadline), has)
	}
	h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("GET", "/api/v1/pods?timeout=5s", nil))
	if !has || time.Until(deadline) > 5*time.Second {
		t.Errorf("?timeout=5s gave %v", time.Until(deadline))
	}
	h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("GET", "/api/v1/pods?watch=true", nil))
	if has {
		t.Errorf("a watch got a request deadline")
	}
}

func TestLongRunningStopEndsWatchesOnly(t *testing.T) {
	stop, release := make(chan struct{}), make(chan struct{})
	entered, ended := make(chan struct{}, 2), make(chan string, 2)
	h := WithRequestInfo(WithLongRunningStop(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		entered <- struct{}{}
		select {
		case <-r.Context().Done():
			ended <- "cancelled:" + r.URL.RawQuery
		case <-release:
			ended <- "finished:" + r.URL.RawQuery
		}
	}), stop))
	go h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("GET", "/api/v1/pods?watch=true", nil))
	go h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("GET", "/api/v1/pods?limit=1", nil))
	<-entered
	<-entered
	close(stop)
	select {
	case first := <-ended:
		if first != "cancelled:watch=true" {
			t.Errorf("after stop: %q ended first, want the watch cancelled", first)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("stop did not end the watch")
	}
	close(release)
	if second := <-ended; second != "finished:limit=1" {
		t.Errorf("the list ended as %q, want it to finish normally", second)
	}
}

func TestAnonymousAllowedOnlyForHealthAndVersion(t *testing.T) {
	for path, want := range map[string]bool{
		"/healthz": true, "/livez": true, "/readyz": true, "/readyz/etcd": true, "/version": true,
		"/api": false, "/apis": false, "/api/v1/pods": false, "/openapi/v2": false, "/healthzz": false,
	} {
		if got := AnonymousAllowed(path); got != want {
			t.Errorf("AnonymousAllowed(%q) = %v, want %v", path, got, want)
		}
	}
}

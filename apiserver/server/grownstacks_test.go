package server

import (
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/devplane/devplane/apiserver/request"
)

func TestGrownStacks(t *testing.T) {
	release := make(chan struct{})
	var served atomic.Int32
	g := withGrownStacks(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/abort":
			panic(http.ErrAbortHandler)
		case "/block":
			<-release
		}
		served.Add(1)
		w.WriteHeader(http.StatusTeapot)
	}))
	defer g.Stop()

	// A worker's response reaches the caller's writer.
	rec := httptest.NewRecorder()
	g.ServeHTTP(rec, httptest.NewRequest("GET", "/", nil))
	if rec.Code != http.StatusTeapot {
		t.Fatalf("code %d, want 418", rec.Code)
	}

	// A panic in a worker is raised again on the request's goroutine, as
	// net/http needs to abort the stream.
	func() {
		defer func() {
			if p := recover(); p != http.ErrAbortHandler {
				t.Errorf("recovered %v, want http.ErrAbortHandler", p)
			}
		}()
		g.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("GET", "/abort", nil))
		t.Error("abort did not panic")
	}()

	// With every worker busy, requests still run (where they arrived),
	// and watches never wait for a worker.
	var wg sync.WaitGroup
	for range grownStackWorkers + 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			g.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("GET", "/block", nil))
		}()
	}
	watch := httptest.NewRequest("GET", "/api/v1/pods?watch=true", nil)
	watch = watch.WithContext(request.WithRequestInfo(watch.Context(),
		&request.RequestInfo{IsResourceRequest: true, Verb: "watch", Resource: "pods"}))
	for _, r := range []*http.Request{httptest.NewRequest("GET", "/", nil), watch} {
		rec := httptest.NewRecorder()
		g.ServeHTTP(rec, r)
		if rec.Code != http.StatusTeapot {
			t.Errorf("%s with all workers busy: code %d", r.URL, rec.Code)
		}
	}
	close(release)
	wg.Wait()
	if got, want := served.Load(), int32(1+grownStackWorkers+8+2); got != want {
		t.Errorf("served %d requests, want %d", got, want)
	}
}

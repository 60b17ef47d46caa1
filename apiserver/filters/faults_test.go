package filters

import (
	"bytes"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/devplane/devplane/apiserver/faults"
	"github.com/devplane/devplane/apiserver/request"
)

// withInfo is WithRequestInfo's result for a GET of path by user.
func withInfo(t *testing.T, path, user string) *http.Request {
	t.Helper()
	r := httptest.NewRequest("GET", path, nil)
	info, err := request.Parse(r)
	if err != nil {
		t.Fatal(err)
	}
	ctx := request.WithUser(request.WithRequestInfo(r.Context(), info), &request.User{Name: user})
	return r.WithContext(ctx)
}

func TestWithFaultsWithoutRulesAllocatesNothing(t *testing.T) {
	served := 0
	h := WithFaults(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { served++ }), faults.NewInjector(), quiet)
	r := withInfo(t, "/api/v1/namespaces/a/configmaps/b", "alice")
	w := httptest.NewRecorder()
	if allocs := testing.AllocsPerRun(100, func() { h.ServeHTTP(w, r) }); allocs != 0 {
		t.Errorf("a request without rules allocated %v times, want 0", allocs)
	}
	if served == 0 {
		t.Error("the request was not served")
	}
}

func TestWithFaultsLogsEachInjection(t *testing.T) {
	var logs bytes.Buffer
	inj := faults.NewInjector()
	if err := inj.Add(faults.Fault{Name: "boom", Names: []string{"b"}, Error: 500}); err != nil {
		t.Fatal(err)
	}
	h := WithFaults(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(200) }),
		inj, slog.New(slog.NewTextHandler(&logs, nil)))

	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, withInfo(t, "/api/v1/namespaces/a/configmaps/other", "alice"))
	if rec.Code != 200 || logs.Len() != 0 || rec.Header().Get("Warning") != "" {
		t.Fatalf("an unmatched request: %d, warning %q, logged %q", rec.Code, rec.Header().Get("Warning"), logs.String())
	}
	rec = httptest.NewRecorder()
	h.ServeHTTP(rec, withInfo(t, "/api/v1/namespaces/a/configmaps/b", "alice"))
	if st := status(t, rec); rec.Code != 500 || st.Code != 500 {
		t.Errorf("the matched request: %d %+v", rec.Code, st)
	}
	line := logs.String()
	for _, want := range []string{"injected fault", "fault=boom", "verb=get", "resource=configmaps", "namespace=a", "name=b", "user=alice"} {
		if !strings.Contains(line, want) {
			t.Errorf("log %q lacks %q", line, want)
		}
	}
}

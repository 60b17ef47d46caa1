package controlplane_test

import (
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/devplane/devplane/apiserver/controlplane"
)

// --profiling serves Go's profiles to cluster admins only, and nothing at
// all without it (as kube-apiserver).
func TestProfiling(t *testing.T) {
	get := func(t *testing.T, c *http.Client, url string) (int, string) {
		t.Helper()
		resp, err := c.Get(url)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(body)
	}
	t.Run("on", func(t *testing.T) {
		s := startControlPlaneWith(t, controlplane.Options{Profiling: true})
		admin := s.client(t, true)
		if code, body := get(t, admin, s.cp.URL()+"/debug/pprof/"); code != http.StatusOK || !strings.Contains(body, "goroutine") {
			t.Errorf("index: %d %.200s", code, body)
		}
		if code, body := get(t, admin, s.cp.URL()+"/debug/pprof/goroutine?debug=1"); code != http.StatusOK || !strings.HasPrefix(body, "goroutine profile: total ") {
			t.Errorf("goroutine profile: %d %.200s", code, body)
		}
		if code, body := get(t, admin, s.cp.URL()+"/debug/pprof/cmdline"); code != http.StatusOK || body == "" {
			t.Errorf("cmdline: %d %q", code, body)
		}
		if code, body := get(t, s.client(t, false), s.cp.URL()+"/debug/pprof/"); code != http.StatusForbidden || !strings.Contains(body, `"reason":"Forbidden"`) {
			t.Errorf("anonymous: want 403 Status, got %d %.300s", code, body)
		}
	})
	t.Run("off", func(t *testing.T) {
		s := startControlPlaneWith(t, controlplane.Options{})
		if code, body := get(t, s.client(t, true), s.cp.URL()+"/debug/pprof/"); code != http.StatusNotFound {
			t.Errorf("without profiling: want 404, got %d %.200s", code, body)
		}
	})
}

package controlplane_test

import (
	"context"
	"io"
	"net/http"
	"regexp"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// /metrics serves kube's request metrics (counted per devplane), the
// embedded etcd's and the Go runtime's, to those RBAC lets read it.
func TestMetrics(t *testing.T) {
	s := startControlPlane(t, "")
	cs := s.clientset(t, false)
	ctx := context.Background()
	if _, err := cs.CoreV1().ConfigMaps("default").Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "m"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := cs.CoreV1().ConfigMaps("default").List(ctx, metav1.ListOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := cs.CoreV1().ConfigMaps("default").Get(ctx, "absent", metav1.GetOptions{}); err == nil {
		t.Fatal("absent ConfigMap found")
	}
	get := func(c *http.Client) (int, string) {
		t.Helper()
		resp, err := c.Get(s.cp.URL() + "/metrics")
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(body)
	}
	code, body := get(s.client(t, true))
	if code != http.StatusOK {
		t.Fatalf("/metrics: %d %.300s", code, body)
	}
	for _, want := range []string{
		`apiserver_request_total{code="201",component="apiserver",dry_run="",group="",resource="configmaps",scope="resource",subresource="",verb="POST",version="v1"} `, // ours and the root CA controller's
		`apiserver_request_total{code="404",component="apiserver",dry_run="",group="",resource="configmaps",scope="resource",subresource="",verb="GET",version="v1"} 1`,
		`apiserver_request_duration_seconds_count{component="apiserver",dry_run="",group="",resource="configmaps",scope="namespace",subresource="",verb="LIST",version="v1"}`,
		"etcd_server_has_leader 1",
		"go_goroutines ",
	} {
		if !strings.Contains(body, want) {
			t.Errorf("/metrics lacks %s", want)
		}
	}
	// The scrape itself is a read in flight.
	m := regexp.MustCompile(`(?m)^apiserver_current_inflight_requests\{request_kind="readOnly"\} (\d+)$`).FindStringSubmatch(body)
	if m == nil || m[1] == "0" {
		t.Errorf("read requests in flight: %v, want at least 1", m)
	}
	if code, body := get(s.client(t, false)); code != http.StatusForbidden {
		t.Errorf("anonymous /metrics: %d %.200s, want 403", code, body)
	}
}

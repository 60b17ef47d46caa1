package filters

import (
	"net"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/devplane/devplane/apiserver/request"
)

func TestWithCompressionDisabledFor(t *testing.T) {
	_, loopback4, _ := net.ParseCIDR("127.0.0.0/8")
	_, loopback6, _ := net.ParseCIDR("::1/128")
	var disabled bool
	h := WithCompressionDisabledFor(http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) {
		disabled = request.CompressionDisabled(r.Context())
	}), []*net.IPNet{loopback4, loopback6})
	for remote, want := range map[string]bool{
		"127.0.0.1:5000":   true,
		"127.9.8.7:1":      true,
		"[::1]:443":        true,
		"10.0.0.5:5000":    false,
		"[2001:db8::1]:80": false,
		"garbage":          false,
	} {
		req := httptest.NewRequest("GET", "/api", nil)
		req.RemoteAddr = remote
		h.ServeHTTP(httptest.NewRecorder(), req)
		if disabled != want {
			t.Errorf("%s: compression disabled = %v, want %v", remote, disabled, want)
		}
	}
	// No ranges (kube's default): nobody is exempt, loopback included.
	h = WithCompressionDisabledFor(http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) {
		disabled = request.CompressionDisabled(r.Context())
	}), nil)
	req := httptest.NewRequest("GET", "/api", nil)
	req.RemoteAddr = "127.0.0.1:5000"
	h.ServeHTTP(httptest.NewRecorder(), req)
	if disabled {
		t.Error("without ranges, loopback was exempt from compression")
	}
}

package controllers_test

import (
	"context"
	"log/slog"
	"net"
	"testing"
	"time"

	"github.com/devplane/devplane/apiserver/controllers"

	"github.com/devplane/devplane/apiserver/controlplane"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// testServer is a real devplane serving on a free 127.0.0.1 port.
type testServer struct {
	cp     *controlplane.ControlPlane
	cfg    *rest.Config
	client kubernetes.Interface
}

func startServer(t *testing.T) *testServer {
	t.Helper()
	_, cidr, _ := net.ParseCIDR("10.0.0.0/24")
	ctx, cancel := context.WithCancel(context.Background())
	cp, err := controlplane.New(ctx, controlplane.Options{
		Name:                  "test",
		DataDir:               t.TempDir(),
		BindAddress:           net.IPv4(127, 0, 0, 1),
		Port:                  0,
		ServiceClusterIPRange: cidr,
		UnsafeNoFsync:         true,
		// These tests run the controllers under test themselves.
		DisableControllers: true,
		Logger:             slog.New(slog.DiscardHandler),
	})
	if err != nil {
		cancel()
		t.Fatalf("starting devplane: %v", err)
	}
	done := make(chan error, 1)
	go func() { done <- cp.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("devplane stopped with error: %v", err)
			}
		case <-time.After(20 * time.Second):
			t.Errorf("devplane did not stop within 20s")
		}
	})
	deadline := time.Now().Add(30 * time.Second)
	for !cp.Ready() {
		if time.Now().After(deadline) {
			t.Fatalf("devplane not ready after 30s: %+v", cp.Status())
		}
		time.Sleep(5 * time.Millisecond)
	}
	cfg := cp.RESTConfig()
	return &testServer{cp: cp, cfg: cfg, client: kubernetes.NewForConfigOrDie(cfg)}
}

// run runs c until the test ends; cleanup checks that it stops.
func run(t *testing.T, c controllers.Controller) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- c.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("%s stopped with error: %v", c.Name(), err)
			}
		case <-time.After(10 * time.Second):
			t.Errorf("%s did not stop within 10s", c.Name())
		}
	})
	eventually(t, 20*time.Second, c.Name()+" synced", func() (bool, string) { return c.HasSynced(), "" })
}

// eventually polls cond until it holds or timeout passes; cond's string
// says what it last saw, for the failure message.
func eventually(t *testing.T, timeout time.Duration, what string, cond func() (bool, string)) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		ok, last := cond()
		if ok {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within %s (last: %s)", what, timeout, last)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

package controllers_test

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/devplane/devplane/apiserver/controllers"

	"github.com/devplane/devplane/apiserver/controlplane"
	"github.com/devplane/devplane/apiserver/controlplane/controlplanetest"
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
	cp, _ := controlplanetest.StartDevplane(t, controlplane.Options{
		// These tests run the controllers under test themselves.
		DisableControllers: true,
		Logger:             slog.New(slog.DiscardHandler),
	})
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
	controlplanetest.Eventually(t, 20*time.Second, c.Name()+" synced", func() (bool, string) { return c.HasSynced(), "" })
}

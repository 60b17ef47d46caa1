package controllers_test

import (
	"context"
	"fmt"
	"net"
	"testing"
	"time"

	"github.com/devplane/devplane/apiserver/controllers"
	"github.com/devplane/devplane/apiserver/controlplane/controlplanetest"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestManager(t *testing.T) {
	s := startServer(t)
	ctx := context.Background()
	m, err := controllers.NewManager(s.cfg, controllers.ManagerOptions{
		CA:          s.cp.Certs.CA.CertPEM,
		Identity:    "manager-test",
		AdvertiseIP: net.IPv4(127, 0, 0, 1),
		Port:        int32(s.cp.Port()),
	})
	if err != nil {
		t.Fatal(err)
	}
	checks := m.SyncChecks()
	for _, name := range []string{"namespace-controller", "garbage-collector", "serviceaccount-controller", "root-ca-cert-publisher", "lease-endpoint-reconciler"} {
		if checks[name] == nil {
			t.Errorf("no sync check for %s: %v", name, checks)
		}
	}
	mctx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- m.Run(mctx) }()
	defer stop()

	controlplanetest.Eventually(t, 30*time.Second, "leading and synced", func() (bool, string) {
		return m.Leading() && m.HasSynced(), fmt.Sprint(m.Leading())
	})

	// The controllers together: a new namespace gets its service account,
	// and deleting it (with a GC-owned pair inside) completes.
	createNamespace(t, s, "app")
	controlplanetest.Eventually(t, 20*time.Second, "default service account", func() (bool, string) {
		_, err := s.client.CoreV1().ServiceAccounts("app").Get(ctx, controllers.DefaultServiceAccountName, metav1.GetOptions{})
		return err == nil, fmt.Sprint(err)
	})
	owner, err := s.client.CoreV1().ConfigMaps("app").Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "owner"}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	f := &gcFixture{t: t, s: s, ns: "app"}
	f.dependent("owned", nil, configMapRef(owner, true))
	start := time.Now()
	if err := s.client.CoreV1().Namespaces().Delete(ctx, "app", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	controlplanetest.Eventually(t, 30*time.Second, "namespace deleted", namespaceGone(t, s, "app"))
	t.Logf("namespace with service account, root CA and owned objects gone after %s", time.Since(start))

	stop()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("manager stopped with error: %v", err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("manager did not stop within 20s")
	}
	if m.Leading() {
		t.Error("still leading after stop")
	}
	// A clean stop takes this replica out of the endpoints.
	if ep, slice := endpointIPs(t, s); ep != "[]" || slice != "[]" {
		t.Errorf("after stop: endpoints %s, slice %s", ep, slice)
	}
}

package controlplane_test

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"net"
	"net/http"
	"testing"
	"time"

	"github.com/devplane/devplane/apiserver/controlplane"
)

// started is a devplane running in this test process.
type started struct {
	cp     *controlplane.ControlPlane
	cancel context.CancelFunc
	done   chan error
}

// startControlPlane starts devplane on a free 127.0.0.1 port in a temp dir
// and waits until /readyz passes. Cleanup stops it and checks it stopped.
func startControlPlane(t testing.TB, dataDir string) *started {
	t.Helper()
	if dataDir == "" {
		dataDir = t.TempDir()
	}
	_, cidr, _ := net.ParseCIDR("10.0.0.0/24")
	ctx, cancel := context.WithCancel(context.Background())
	cp, err := controlplane.New(ctx, controlplane.Options{
		Name:                  "test",
		DataDir:               dataDir,
		BindAddress:           net.IPv4(127, 0, 0, 1),
		Port:                  0,
		ServiceClusterIPRange: cidr,
		UnsafeNoFsync:         true,
	})
	if err != nil {
		cancel()
		t.Fatalf("starting devplane: %v", err)
	}
	s := &started{cp: cp, cancel: cancel, done: make(chan error, 1)}
	go func() { s.done <- cp.Run(ctx) }()
	t.Cleanup(func() { s.stop(t) })
	deadline := time.Now().Add(20 * time.Second)
	for !cp.Ready() {
		if time.Now().After(deadline) {
			t.Fatalf("devplane not ready after 20s: %+v", cp.Status())
		}
		time.Sleep(5 * time.Millisecond)
	}
	return s
}

func (s *started) stop(t testing.TB) {
	t.Helper()
	if s.cancel == nil {
		return
	}
	s.cancel()
	s.cancel = nil
	select {
	case err := <-s.done:
		if err != nil {
			t.Errorf("devplane stopped with error: %v", err)
		}
	case <-time.After(15 * time.Second):
		t.Errorf("devplane did not stop within 15s")
	}
}

// client returns an HTTPS client trusting devplane's CA, presenting the
// admin certificate when admin is true.
func (s *started) client(t testing.TB, admin bool) *http.Client {
	t.Helper()
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(s.cp.Certs.CA.CertPEM)
	cfg := &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}
	if admin {
		cert, err := tls.X509KeyPair(s.cp.Certs.Admin.CertPEM, s.cp.Certs.Admin.KeyPEM)
		if err != nil {
			t.Fatal(err)
		}
		cfg.Certificates = []tls.Certificate{cert}
	}
	tr := &http.Transport{TLSClientConfig: cfg, ForceAttemptHTTP2: true}
	t.Cleanup(tr.CloseIdleConnections)
	return &http.Client{Transport: tr, Timeout: 30 * time.Second}
}

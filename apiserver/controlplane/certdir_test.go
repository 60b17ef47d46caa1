package controlplane

import (
	"bytes"
	"io"
	"log/slog"
	"net"
	"sync"
	"testing"
)

// Two replicas starting at once on an empty shared --cert-dir end up with
// one CA, and the serving certificate covers both their addresses however
// often either restarts.
func TestSharedCertDirOneCAAndServingSANsOnlyGrow(t *testing.T) {
	dir := t.TempDir()
	_, serviceNet, _ := net.ParseCIDR("10.0.0.0/24")
	replica := func(ip string) *ControlPlane {
		return &ControlPlane{logger: slog.New(slog.NewTextHandler(io.Discard, nil)), opts: Options{
			DataDir: t.TempDir(), CertDir: dir, ServiceClusterIPRange: serviceNet,
			BindAddress: net.ParseIP(ip), AdvertiseAddress: net.ParseIP(ip),
		}}
	}
	a, b := replica("192.0.2.10"), replica("192.0.2.20")
	var wg sync.WaitGroup
	errs := make([]error, 2)
	for i, cp := range []*ControlPlane{a, b} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = cp.ensureCerts()
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	if !bytes.Equal(a.Certs.CA.CertPEM, b.Certs.CA.CertPEM) || !bytes.Equal(a.Certs.Admin.CertPEM, b.Certs.Admin.CertPEM) {
		t.Fatal("replicas starting together on an empty --cert-dir made different CAs or admin certificates")
	}
	// Restarts in either order keep one serving certificate covering both.
	var last []byte
	for _, cp := range []*ControlPlane{replica("192.0.2.10"), replica("192.0.2.20"), replica("192.0.2.10")} {
		if err := cp.ensureCerts(); err != nil {
			t.Fatal(err)
		}
		for _, ip := range []string{"192.0.2.10", "192.0.2.20"} {
			if err := cp.Certs.Serving.Cert.VerifyHostname(ip); err != nil {
				t.Fatalf("serving certificate: %v", err)
			}
		}
		if last != nil && !bytes.Equal(last, cp.Certs.Serving.CertPEM) {
			t.Fatal("a restart replaced the shared serving certificate although it already covered both replicas")
		}
		last = cp.Certs.Serving.CertPEM
		if !bytes.Equal(cp.Certs.CA.CertPEM, a.Certs.CA.CertPEM) {
			t.Fatal("the CA changed on restart")
		}
	}
}

package testenv

import (
	"context"
	"crypto/tls"
	"fmt"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// WebhookOptions are admission webhook configurations whose webhooks the
// test serves itself, as envtest's WebhookInstallOptions. Start picks a
// free port on 127.0.0.1, issues a serving certificate for 127.0.0.1 and
// localhost from devplane's CA, and rewrites every clientConfig to
// url: https://127.0.0.1:<port><path> with that CA as caBundle, where path
// is the service's path (or the URL's path). The test then serves on
// WebhookAddr with WebhookCertDir / WebhookTLSConfig.
type WebhookOptions struct {
	Mutating   []*admissionregistrationv1.MutatingWebhookConfiguration
	Validating []*admissionregistrationv1.ValidatingWebhookConfiguration
}

func (w WebhookOptions) empty() bool { return len(w.Mutating) == 0 && len(w.Validating) == 0 }

// webhookServing is what the test's webhook server needs.
type webhookServing struct {
	port            int
	certPEM, keyPEM []byte
	caPEM           []byte
	certDir         string

	mu       sync.Mutex
	reserved net.Listener // holds the port until the test's server takes it
}

// release frees the reserved port (idempotent).
func (w *webhookServing) release() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.reserved != nil {
		w.reserved.Close()
		w.reserved = nil
	}
}

// take hands the reserved listener over, once.
func (w *webhookServing) take() net.Listener {
	w.mu.Lock()
	defer w.mu.Unlock()
	ln := w.reserved
	w.reserved = nil
	return ln
}

// Webhook serving files, named as controller-runtime's webhook server
// expects them in its CertDir.
const (
	WebhookCertFile = "tls.crt"
	WebhookKeyFile  = "tls.key"
	WebhookCAFile   = "ca.crt"
)

func (i *Instance) setUpWebhooks(ctx context.Context, opts WebhookOptions) error {
	// Issued even without configurations: tests may register their own.
	certPEM, keyPEM, err := i.cp.Certs.IssueServing([]string{"127.0.0.1", "localhost"}, 24*time.Hour)
	if err != nil {
		return fmt.Errorf("testenv: webhook serving certificate: %w", err)
	}
	ws := &webhookServing{certPEM: certPEM, keyPEM: keyPEM, caPEM: i.CAData(), certDir: filepath.Join(i.dir, "webhook")}
	if err := os.MkdirAll(ws.certDir, 0o700); err != nil {
		return fmt.Errorf("testenv: %w", err)
	}
	for name, data := range map[string][]byte{WebhookCertFile: certPEM, WebhookKeyFile: keyPEM, WebhookCAFile: ws.caPEM} {
		if err := os.WriteFile(filepath.Join(ws.certDir, name), data, 0o600); err != nil {
			return fmt.Errorf("testenv: %w", err)
		}
	}
	// The port stays bound until the test takes the listener or its server
	// binds the port (WebhookAddr releases it), so no other test grabs it.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return fmt.Errorf("testenv: webhook port: %w", err)
	}
	ws.reserved, ws.port = ln, ln.Addr().(*net.TCPAddr).Port
	i.webhook = ws
	if opts.empty() {
		return nil
	}

	client, err := kubernetes.NewForConfig(i.Config())
	if err != nil {
		return err
	}
	for _, in := range opts.Mutating {
		cfg := in.DeepCopy()
		for j := range cfg.Webhooks {
			if err := i.pointAtLocal(&cfg.Webhooks[j].ClientConfig); err != nil {
				return fmt.Errorf("testenv: mutating webhook %s/%s: %w", cfg.Name, cfg.Webhooks[j].Name, err)
			}
		}
		api := client.AdmissionregistrationV1().MutatingWebhookConfigurations()
		err := createOrReplace(cfg, func() error { _, err := api.Create(ctx, cfg, metav1.CreateOptions{}); return err },
			func() (metav1.Object, error) { return api.Get(ctx, cfg.Name, metav1.GetOptions{}) },
			func() error { _, err := api.Update(ctx, cfg, metav1.UpdateOptions{}); return err })
		if err != nil {
			return fmt.Errorf("testenv: creating MutatingWebhookConfiguration %s: %w", cfg.Name, err)
		}
	}
	for _, in := range opts.Validating {
		cfg := in.DeepCopy()
		for j := range cfg.Webhooks {
			if err := i.pointAtLocal(&cfg.Webhooks[j].ClientConfig); err != nil {
				return fmt.Errorf("testenv: validating webhook %s/%s: %w", cfg.Name, cfg.Webhooks[j].Name, err)
			}
		}
		api := client.AdmissionregistrationV1().ValidatingWebhookConfigurations()
		err := createOrReplace(cfg, func() error { _, err := api.Create(ctx, cfg, metav1.CreateOptions{}); return err },
			func() (metav1.Object, error) { return api.Get(ctx, cfg.Name, metav1.GetOptions{}) },
			func() error { _, err := api.Update(ctx, cfg, metav1.UpdateOptions{}); return err })
		if err != nil {
			return fmt.Errorf("testenv: creating ValidatingWebhookConfiguration %s: %w", cfg.Name, err)
		}
	}
	return nil
}

// createOrReplace creates obj, or replaces the one of its name already
// there: a fork's snapshot may hold its parent's configuration, which
// points at the parent's webhook server.
func createOrReplace(obj metav1.Object, create func() error, get func() (metav1.Object, error), update func() error) error {
	obj.SetResourceVersion("")
	err := create()
	if !apierrors.IsAlreadyExists(err) {
		return err
	}
	existing, err := get()
	if err != nil {
		return err
	}
	obj.SetResourceVersion(existing.GetResourceVersion())
	return update()
}

// pointAtLocal rewrites a clientConfig to the local webhook server.
func (i *Instance) pointAtLocal(cc *admissionregistrationv1.WebhookClientConfig) error {
	path := ""
	switch {
	case cc.Service != nil:
		if cc.Service.Path != nil {
			path = *cc.Service.Path
		}
	case cc.URL != nil:
		u, err := url.Parse(*cc.URL)
		if err != nil {
			return err
		}
		path = u.Path
	}
	u := (&url.URL{Scheme: "https", Host: net.JoinHostPort("127.0.0.1", strconv.Itoa(i.webhook.port)), Path: path}).String()
	cc.Service, cc.URL, cc.CABundle = nil, &u, i.CAData()
	return nil
}

// WebhookAddr is where the test's webhook server must listen: 127.0.0.1
// and a port reserved for it. Calling it releases the reservation so the
// server can bind the port; use WebhookListener to avoid that gap.
func (i *Instance) WebhookAddr() (host string, port int) {
	i.webhook.release()
	return "127.0.0.1", i.webhook.port
}

// WebhookListener hands over the reserved port as a TLS listener serving
// the webhook certificate: http.Serve(env.WebhookListener(), handler).
// It can be taken once.
func (i *Instance) WebhookListener() (net.Listener, error) {
	cfg, err := i.WebhookTLSConfig()
	if err != nil {
		return nil, err
	}
	ln := i.webhook.take()
	if ln == nil {
		return nil, fmt.Errorf("testenv: the webhook port was already taken or released")
	}
	return tls.NewListener(ln, cfg), nil
}

// WebhookCertDir holds tls.crt, tls.key and ca.crt: controller-runtime's
// webhook.Options{CertDir: ...} reads it as is.
func (i *Instance) WebhookCertDir() string { return i.webhook.certDir }

// WebhookServingCert is the PEM serving certificate (127.0.0.1, localhost).
func (i *Instance) WebhookServingCert() []byte { return append([]byte(nil), i.webhook.certPEM...) }

// WebhookServingKey is the PEM key of WebhookServingCert.
func (i *Instance) WebhookServingKey() []byte { return append([]byte(nil), i.webhook.keyPEM...) }

// WebhookCA is the PEM CA the API server trusts the webhook server by
// (the configurations' caBundle).
func (i *Instance) WebhookCA() []byte { return append([]byte(nil), i.webhook.caPEM...) }

// WebhookTLSConfig serves the webhook certificate, for an
// httptest.Server or http.Server.
func (i *Instance) WebhookTLSConfig() (*tls.Config, error) {
	cert, err := tls.X509KeyPair(i.webhook.certPEM, i.webhook.keyPEM)
	if err != nil {
		return nil, err
	}
	return &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}, nil
}

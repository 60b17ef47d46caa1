package aggregator_test

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"io"
	"math/big"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

const (
	wardleGroup   = "wardle.example.com"
	wardleVersion = "v1alpha1"
)

// seen is what the backend learnt about one request.
type seen struct {
	Path   string
	User   string
	Groups []string
	Extra  http.Header
	Proto  string
}

// wardle is a tiny extension API server: discovery for wardle.example.com/
// v1alpha1 and a flunders resource (list, get, watch). It accepts only
// requests whose client certificate chains to the front-proxy CA and names
// front-proxy-client, and reads the user from X-Remote-* as
// k8s.io/apiserver's request-header authenticator does.
type wardle struct {
	t       testing.TB
	caPEM   []byte
	cert    tls.Certificate
	clients *x509.CertPool
	addr    string

	mu   sync.Mutex
	srv  *http.Server
	ln   net.Listener
	reqs []seen
}

func newWardle(t testing.TB, frontProxyCA *x509.CertPool) *wardle {
	t.Helper()
	caPEM, cert := selfSignedServing(t)
	w := &wardle{t: t, caPEM: caPEM, cert: cert, clients: frontProxyCA}
	w.start()
	t.Cleanup(w.stop)
	return w
}

// selfSignedServing makes a CA and a serving certificate for 127.0.0.1,
// as a developer's backend typically has.
func selfSignedServing(t testing.TB) ([]byte, tls.Certificate) {
	t.Helper()
	caKey, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	caTmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "wardle-ca"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour), IsCA: true,
		BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	ca, _ := x509.ParseCertificate(caDER)
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: "localhost"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)}, DNSNames: []string{"localhost"},
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}, KeyUsage: x509.KeyUsageDigitalSignature}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &key.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, _ := x509.MarshalECPrivateKey(key)
	cert, err := tls.X509KeyPair(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER}))
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caDER}), cert
}

// start listens (on the previous port after a stop) and serves.
func (w *wardle) start() {
	w.mu.Lock()
	defer w.mu.Unlock()
	addr := "127.0.0.1:0"
	if w.addr != "" {
		addr = w.addr
	}
	var ln net.Listener
	var err error
	for i := 0; i < 50; i++ { // the old socket may linger a moment
		if ln, err = net.Listen("tcp", addr); err == nil {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if err != nil {
		w.t.Fatalf("backend listen: %v", err)
	}
	w.addr = ln.Addr().String()
	cfg := &tls.Config{Certificates: []tls.Certificate{w.cert}, ClientAuth: tls.VerifyClientCertIfGiven,
		ClientCAs: w.clients, NextProtos: []string{"h2", "http/1.1"}}
	w.srv = &http.Server{Handler: http.HandlerFunc(w.serve), TLSConfig: cfg}
	w.ln = tls.NewListener(ln, cfg)
	go func(s *http.Server, ln net.Listener) { _ = s.Serve(ln) }(w.srv, w.ln)
}

func (w *wardle) stop() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.srv != nil {
		_ = w.srv.Close()
		w.srv = nil
	}
}

func (w *wardle) port() int { return w.ln.Addr().(*net.TCPAddr).Port }

func (w *wardle) requests() []seen {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]seen(nil), w.reqs...)
}

// lastTo is the last request the backend saw for path: the aggregator's
// own discovery and availability requests run in the background, so the
// last request of all may be one of those.
func (w *wardle) lastTo(t *testing.T, path string) seen {
	t.Helper()
	reqs := w.requests()
	for i := len(reqs) - 1; i >= 0; i-- {
		if reqs[i].Path == path {
			return reqs[i]
		}
	}
	t.Fatalf("backend saw no request for %s", path)
	return seen{}
}

func (w *wardle) serve(rw http.ResponseWriter, r *http.Request) {
	if r.TLS == nil || len(r.TLS.VerifiedChains) == 0 || r.TLS.VerifiedChains[0][0].Subject.CommonName != "front-proxy-client" {
		http.Error(rw, "front-proxy client certificate required", http.StatusUnauthorized)
		return
	}
	if strings.HasPrefix(r.URL.Path, "/openapi/") { // fetched in the background: not recorded
		serveWardleOpenAPI(rw, r)
		return
	}
	extra := http.Header{}
	for k, v := range r.Header {
		if strings.HasPrefix(k, "X-Remote-Extra-") || strings.HasPrefix(k, "Impersonate-") || k == "Authorization" {
			extra[k] = v
		}
	}
	w.mu.Lock()
	w.reqs = append(w.reqs, seen{Path: r.URL.Path, User: r.Header.Get("X-Remote-User"),
		Groups: r.Header.Values("X-Remote-Group"), Extra: extra, Proto: r.Proto})
	w.mu.Unlock()

	base := "/apis/" + wardleGroup + "/" + wardleVersion
	parts := strings.Split(strings.TrimPrefix(r.URL.Path, base), "/")
	switch {
	case strings.HasSuffix(r.URL.Path, "/attach") && strings.EqualFold(r.Header.Get("Upgrade"), "echo"):
		w.echo(rw)
	case r.URL.Path == base:
		writeJSON(rw, metav1.APIResourceList{TypeMeta: metav1.TypeMeta{Kind: "APIResourceList", APIVersion: "v1"},
			GroupVersion: wardleGroup + "/" + wardleVersion, APIResources: []metav1.APIResource{
				{Name: "flunders", SingularName: "flunder", Namespaced: true, Kind: "Flunder", Verbs: []string{"get", "list", "watch"}},
				{Name: "flunders/status", Namespaced: true, Kind: "Flunder", Verbs: []string{"get"}},
			}})
	case len(parts) == 4 && parts[1] == "namespaces" && parts[3] == "flunders" && r.URL.Query().Get("watch") == "true":
		w.watch(rw, r, parts[2])
	case len(parts) == 4 && parts[1] == "namespaces" && parts[3] == "flunders":
		writeJSON(rw, map[string]any{"apiVersion": wardleGroup + "/" + wardleVersion, "kind": "FlunderList",
			"metadata": map[string]any{"resourceVersion": "1"},
			"items":    []any{flunder(parts[2], "one", r)}})
	case len(parts) == 5 && parts[1] == "namespaces" && parts[3] == "flunders":
		writeJSON(rw, flunder(parts[2], parts[4], r))
	default:
		http.Error(rw, "not found", http.StatusNotFound)
	}
}

// flunder echoes the identity the backend saw, so clients can check it.
func flunder(ns, name string, r *http.Request) map[string]any {
	return map[string]any{"apiVersion": wardleGroup + "/" + wardleVersion, "kind": "Flunder",
		"metadata": map[string]any{"name": name, "namespace": ns, "resourceVersion": "1",
			"annotations": map[string]any{"user": r.Header.Get("X-Remote-User"),
				"groups": strings.Join(r.Header.Values("X-Remote-Group"), ",")}}}
}

// watch streams three events, one every 100ms, then holds the stream open
// until the client goes: each must reach the client on its own.
func (w *wardle) watch(rw http.ResponseWriter, r *http.Request, ns string) {
	rw.Header().Set("Content-Type", "application/json")
	rw.WriteHeader(http.StatusOK)
	enc := json.NewEncoder(rw)
	for i, typ := range []string{"ADDED", "MODIFIED", "DELETED"} {
		obj := flunder(ns, fmt.Sprintf("w%d", i), r)
		obj["metadata"].(map[string]any)["resourceVersion"] = fmt.Sprint(i + 2)
		if err := enc.Encode(map[string]any{"type": typ, "object": obj}); err != nil {
			return
		}
		rw.(http.Flusher).Flush()
		select {
		case <-r.Context().Done():
			return
		case <-time.After(100 * time.Millisecond):
		}
	}
	<-r.Context().Done()
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(v)
}

// echo answers an upgrade with 101 and then echoes bytes, as an exec or
// attach stream would carry them.
func (w *wardle) echo(rw http.ResponseWriter) {
	conn, buf, err := rw.(http.Hijacker).Hijack()
	if err != nil {
		return
	}
	defer conn.Close()
	_, _ = buf.WriteString("HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: echo\r\n\r\n")
	_ = buf.Flush()
	_, _ = io.Copy(conn, buf)
}

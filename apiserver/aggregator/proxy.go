package aggregator

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httputil"
	"net/textproto"
	"net/url"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apiregv1 "k8s.io/kube-aggregator/pkg/apis/apiregistration/v1"

	"github.com/devplane/devplane/apiserver/filters"
	"github.com/devplane/devplane/apiserver/request"
)

// Request-header authentication, as the extension-apiserver-authentication
// ConfigMap announces it to backends.
const (
	headerUser        = "X-Remote-User"
	headerGroup       = "X-Remote-Group"
	headerUID         = "X-Remote-Uid"
	headerExtraPrefix = "X-Remote-Extra-"
)

// backend holds the transports for one remote APIService; rebuilt when the
// spec's TLS settings or service change.
type backend struct {
	spec      apiregv1.APIServiceSpec
	transport *http.Transport // HTTP/2 or HTTP/1.1
	upgrade   *http.Transport // HTTP/1.1 only: SPDY and websocket upgrades
}

func sameBackendSpec(a, b apiregv1.APIServiceSpec) bool {
	return a.InsecureSkipTLSVerify == b.InsecureSkipTLSVerify && bytes.Equal(a.CABundle, b.CABundle) &&
		*a.Service == *b.Service && (a.Service.Port == nil) == (b.Service.Port == nil) &&
		(a.Service.Port == nil || *a.Service.Port == *b.Service.Port)
}

// backendFor returns the transports for s, building them on first use or
// after a spec change.
func (a *Aggregator) backendFor(s *apiregv1.APIService) (*backend, error) {
	a.mu.RLock()
	b := a.backends[s.Name]
	a.mu.RUnlock()
	if b != nil && sameBackendSpec(b.spec, s.Spec) {
		return b, nil
	}
	nb, err := a.newBackend(s)
	if err != nil {
		return nil, err
	}
	a.mu.Lock()
	if old := a.backends[s.Name]; old != nil {
		old.transport.CloseIdleConnections()
		old.upgrade.CloseIdleConnections()
	}
	a.backends[s.Name] = nb
	a.mu.Unlock()
	return nb, nil
}

// forgetBackends closes the transports of APIServices that are gone.
func (a *Aggregator) forgetBackends() {
	a.mu.Lock()
	defer a.mu.Unlock()
	for name, b := range a.backends {
		if s := a.services[name]; s == nil || isLocal(s) {
			b.transport.CloseIdleConnections()
			b.upgrade.CloseIdleConnections()
			delete(a.backends, name)
		}
	}
}

func (a *Aggregator) newBackend(s *apiregv1.APIService) (*backend, error) {
	var roots *x509.CertPool
	if len(s.Spec.CABundle) > 0 {
		roots = x509.NewCertPool()
		if !roots.AppendCertsFromPEM(s.Spec.CABundle) {
			return nil, errors.New("spec.caBundle holds no PEM certificate")
		}
	}
	svc := s.Spec.Service
	names := []string{svc.Name + "." + svc.Namespace + ".svc", svc.Name + "." + svc.Namespace + ".svc.cluster.local"}
	mk := func(protos []string) *http.Transport {
		dialer := &net.Dialer{Timeout: 5 * time.Second, KeepAlive: 30 * time.Second}
		return &http.Transport{
			DialTLSContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
				host, _, _ := net.SplitHostPort(addr)
				cfg := &tls.Config{
					MinVersion:   tls.VersionTLS12,
					Certificates: []tls.Certificate{a.frontTLS},
					NextProtos:   protos,
					ServerName:   host,
					// Verified below: kube checks the service DNS name; a
					// laptop backend's certificate usually names localhost
					// or 127.0.0.1, so the dialed host is accepted too.
					InsecureSkipVerify: true,
				}
				if !s.Spec.InsecureSkipTLSVerify {
					cfg.VerifyConnection = func(cs tls.ConnectionState) error {
						return verifyServer(cs, roots, append([]string{host}, names...))
					}
				}
				raw, err := dialer.DialContext(ctx, network, addr)
				if err != nil {
					return nil, err
				}
				conn := tls.Client(raw, cfg)
				if err := conn.HandshakeContext(ctx); err != nil {
					raw.Close()
					return nil, err
				}
				return conn, nil
			},
			ForceAttemptHTTP2:     len(protos) > 1,
			MaxIdleConnsPerHost:   10,
			IdleConnTimeout:       90 * time.Second,
			ResponseHeaderTimeout: 0, // watches answer late; request contexts bound the rest
		}
	}
	return &backend{
		spec:      *s.Spec.DeepCopy(),
		transport: mk([]string{"h2", "http/1.1"}),
		upgrade:   mk([]string{"http/1.1"}),
	}, nil
}

// verifyServer checks the chain against roots (system roots when nil) and
// that the leaf is valid for one of names.
func verifyServer(cs tls.ConnectionState, roots *x509.CertPool, names []string) error {
	if len(cs.PeerCertificates) == 0 {
		return errors.New("backend presented no certificate")
	}
	inter := x509.NewCertPool()
	for _, c := range cs.PeerCertificates[1:] {
		inter.AddCert(c)
	}
	leaf := cs.PeerCertificates[0]
	if _, err := leaf.Verify(x509.VerifyOptions{Roots: roots, Intermediates: inter}); err != nil {
		return err
	}
	var firstErr error
	for _, n := range names {
		err := leaf.VerifyHostname(n)
		if err == nil {
			return nil
		}
		if firstErr == nil {
			firstErr = err
		}
	}
	return firstErr
}

// proxy forwards r to a backend of s, as the authenticated user.
func (a *Aggregator) proxy(w http.ResponseWriter, r *http.Request, s *apiregv1.APIService) {
	if c := availableCondition(s); c == nil || c.Status != apiregv1.ConditionTrue {
		filters.WriteStatus(w, apierrors.NewServiceUnavailable("service unavailable"))
		return
	}
	user, ok := request.UserFrom(r.Context())
	if !ok {
		filters.WriteStatus(w, apierrors.NewInternalError(errors.New("missing user")))
		return
	}
	b, err := a.backendFor(s)
	if err != nil {
		filters.WriteStatus(w, apierrors.NewServiceUnavailable(err.Error()))
		return
	}
	addr, err := a.resolve(r.Context(), s.Spec.Service)
	if err != nil {
		filters.WriteStatus(w, apierrors.NewServiceUnavailable(err.Error()))
		return
	}
	transport := b.transport
	if isUpgrade(r) {
		transport = b.upgrade
	}
	rp := &httputil.ReverseProxy{
		Rewrite: func(pr *httputil.ProxyRequest) {
			pr.Out.URL.Scheme, pr.Out.URL.Host, pr.Out.Host = "https", addr, ""
			setIdentity(pr.Out.Header, user)
		},
		Transport:     transport,
		FlushInterval: -1, // watches and streams reach the client as they come
		ErrorHandler: func(w http.ResponseWriter, r *http.Request, err error) {
			if errors.Is(err, context.Canceled) {
				return // the client went away
			}
			a.logger.Info("proxying to backend failed", "apiservice", s.Name, "backend", addr, "err", err)
			kick(a.kickAvailability) // notice a dead backend now, not at the next pass
			filters.WriteStatus(w, apierrors.NewServiceUnavailable(fmt.Sprintf("error trying to reach service: %v", err)))
		},
	}
	rp.ServeHTTP(w, r)
}

// isUpgrade: a SPDY or websocket upgrade (exec, attach, port-forward).
func isUpgrade(r *http.Request) bool {
	for _, v := range r.Header.Values("Connection") {
		for _, tok := range strings.Split(v, ",") {
			if strings.EqualFold(strings.TrimSpace(tok), "upgrade") {
				return true
			}
		}
	}
	return false
}

// setIdentity replaces whatever identity headers the client sent with the
// authenticated user's: a client must never choose who the backend sees.
func setIdentity(h http.Header, u *request.User) {
	for k := range h {
		ck := textproto.CanonicalMIMEHeaderKey(k)
		if ck == "Authorization" || strings.HasPrefix(ck, "Impersonate-") || strings.HasPrefix(ck, "X-Remote-") {
			delete(h, k)
		}
	}
	h.Set(headerUser, u.Name)
	if u.UID != "" {
		h.Set(headerUID, u.UID)
	}
	for _, g := range u.Groups {
		h.Add(headerGroup, g)
	}
	for k, vs := range u.Extra {
		for _, v := range vs {
			h.Add(headerExtraPrefix+url.PathEscape(k), v)
		}
	}
}

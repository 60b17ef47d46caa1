// Package server is devplane's generic API server: the piece kube-apiserver
// instantiates three times (aggregator → core → extensions) and chains by
// delegation. Each server has a name, fixed routes, an optional dynamic API
// handler, post-start hooks and health checks; what it does not serve it
// hands to its delegate. Only the head of the chain listens, applies the
// filters and runs the hooks of every server below it.
//
// Lifecycle, as kube-apiserver's: Config → Complete() → New(delegate) →
// PrepareRun() → Run(ctx).
package server

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/julienschmidt/httprouter"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/devplane/devplane/apiserver/audit"
	"github.com/devplane/devplane/apiserver/authn"
	"github.com/devplane/devplane/apiserver/authz"
	"github.com/devplane/devplane/apiserver/faults"
	"github.com/devplane/devplane/apiserver/filters"
	"github.com/devplane/devplane/apiserver/healthz"
	"github.com/devplane/devplane/apiserver/metrics"
)

// Config is what one generic server needs. The serving fields matter only
// for the head of the chain, which is the one that listens.
type Config struct {
	Name   string // "kube-aggregator", "kube-apiserver", "apiextensions-apiserver"
	Logger *slog.Logger

	// Listener is the bound TCP listener (the caller binds so that port 0
	// and "port in use" are known before start).
	Listener net.Listener
	// ServingCert is the TLS certificate; ClientCA verifies client certs.
	ServingCert tls.Certificate
	ClientCA    *x509.CertPool

	// Authenticator identifies callers; nil accepts client certs only.
	Authenticator authn.Authenticator
	// Authorizer decides what each user may do (nil: no authorization,
	// any authenticated user may do anything).
	Authorizer authz.Authorizer
	// AnonymousAuth lets requests without credentials through as
	// system:anonymous and leaves the decision to the Authorizer (kube's
	// --anonymous-auth). Otherwise only the health and version endpoints
	// are reachable anonymously.
	AnonymousAuth bool

	HTTP2MaxStreamsPerConnection int           // default 250
	MaxRequestsInFlight          int           // reads; default 400
	MaxMutatingRequestsInFlight  int           // writes; default 200
	RequestTimeout               time.Duration // default 60s
	// ShutdownDelay keeps serving (with /readyz failing) before the
	// listener closes, so load balancers notice; default 0 for a laptop.
	ShutdownDelay time.Duration
	// ShutdownTimeout bounds how long in-flight requests may drain.
	ShutdownTimeout time.Duration // default 3s
	// DisableCompressionForClientIPs: responses to clients in these ranges
	// are never gzipped (kube's --disable-compression-for-client-ips).
	DisableCompressionForClientIPs []*net.IPNet
	// Metrics counts and times requests (nil: none).
	Metrics *metrics.Metrics
	// Faults are the rules injecting failures into resource requests
	// (nil: none can be set).
	Faults *faults.Injector
	// Auditor records every request (the recent-request ring) and writes
	// the audit log its policy asks for (nil: nothing is recorded).
	Auditor *audit.Auditor
}

// CompletedConfig is a Config with defaults filled in.
type CompletedConfig struct{ *Config }

// Complete fills in defaults.
func (c *Config) Complete() CompletedConfig {
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	if c.HTTP2MaxStreamsPerConnection == 0 {
		c.HTTP2MaxStreamsPerConnection = 250
	}
	if c.MaxRequestsInFlight == 0 {
		c.MaxRequestsInFlight = 400
	}
	if c.MaxMutatingRequestsInFlight == 0 {
		c.MaxMutatingRequestsInFlight = 200
	}
	if c.RequestTimeout == 0 {
		c.RequestTimeout = 60 * time.Second
	}
	if c.ShutdownTimeout == 0 {
		c.ShutdownTimeout = 3 * time.Second
	}
	if c.Authenticator == nil {
		c.Authenticator = authn.ClientCert{}
	}
	return CompletedConfig{c}
}

// DelegationTarget is what a server needs from the one below it.
type DelegationTarget interface {
	// UnprotectedHandler serves what this server and those below serve,
	// without filters (the head applied them already).
	UnprotectedHandler() http.Handler
	// PostStartHooks and health checks of this server and those below, so
	// the head runs and reports them all.
	PostStartHooks() []*PostStartHook
	HealthzChecks() []healthz.Checker
	LivezChecks() []healthz.Checker
	ReadyzChecks() []healthz.Checker
	PreShutdownHooks() []*PreShutdownHook
	// ServerName names the server ("" for the not-found end of the chain).
	ServerName() string
}

// GenericAPIServer is one link of the chain.
type GenericAPIServer struct {
	name     string
	config   CompletedConfig
	logger   *slog.Logger
	delegate DelegationTarget

	// router serves this server's fixed endpoints; what it does not match
	// goes to apiHandler (if set) and then to the delegate.
	router     *httprouter.Router
	apiHandler http.Handler
	mu         sync.RWMutex // guards apiHandler

	hooks            *hookSet
	preShutdownHooks []*PreShutdownHook
	healthz          *healthz.Set
	livez            *healthz.Set
	readyz           *healthz.Set

	// shutdownStarted closes when shutdown begins: /readyz fails from then.
	shutdownStarted chan struct{}
	shutdownOnce    sync.Once
	prepared        bool
}

// New creates a server that hands what it does not serve to delegate.
func (c CompletedConfig) New(delegate DelegationTarget) (*GenericAPIServer, error) {
	if c.Config == nil {
		return nil, fmt.Errorf("server config is not complete")
	}
	if delegate == nil {
		delegate = NewNotFound()
	}
	s := &GenericAPIServer{
		name:            c.Name,
		config:          c,
		logger:          c.Logger.With("server", c.Name),
		delegate:        delegate,
		router:          httprouter.New(),
		hooks:           newHookSet(),
		healthz:         healthz.NewSet("healthz", c.Logger),
		livez:           healthz.NewSet("livez", c.Logger),
		readyz:          healthz.NewSet("readyz", c.Logger),
		shutdownStarted: make(chan struct{}),
	}
	// kube-apiserver never redirects API paths; a trailing slash is a 404.
	s.router.RedirectTrailingSlash = false
	s.router.RedirectFixedPath = false
	s.router.HandleMethodNotAllowed = false
	s.router.NotFound = http.HandlerFunc(s.notRouted)

	// The delegate's hooks and checks become ours, so the head reports all.
	for _, h := range delegate.PostStartHooks() {
		if err := s.hooks.add(h); err != nil {
			return nil, err
		}
	}
	s.preShutdownHooks = append(s.preShutdownHooks, delegate.PreShutdownHooks()...)
	if err := s.healthz.Add(delegate.HealthzChecks()...); err != nil {
		return nil, err
	}
	if err := s.livez.Add(delegate.LivezChecks()...); err != nil {
		return nil, err
	}
	if err := s.readyz.Add(delegate.ReadyzChecks()...); err != nil {
		return nil, err
	}
	return s, nil
}

// Name is the server's name.
func (s *GenericAPIServer) Name() string       { return s.name }
func (s *GenericAPIServer) ServerName() string { return s.name }

// Logger is the server's logger.
func (s *GenericAPIServer) Logger() *slog.Logger { return s.logger }

// Router exposes the fixed-endpoint router (httprouter cannot add routes
// after serving starts: only fixed endpoints belong here).
func (s *GenericAPIServer) Router() *httprouter.Router { return s.router }

// Handle adds a fixed endpoint for GET and HEAD.
func (s *GenericAPIServer) Handle(path string, h http.Handler) {
	s.router.Handler(http.MethodGet, path, h)
	s.router.Handler(http.MethodHead, path, h)
}

// HandleMethod serves h at path for method only.
func (s *GenericAPIServer) HandleMethod(method, path string, h http.Handler) {
	s.router.Handler(method, path, h)
}

// SetAPIHandler installs the dynamic dispatcher for /api and /apis paths.
// It must pass what it does not serve to next.
func (s *GenericAPIServer) SetAPIHandler(build func(next http.Handler) http.Handler) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.apiHandler = build(s.delegate.UnprotectedHandler())
}

func (s *GenericAPIServer) notRouted(w http.ResponseWriter, r *http.Request) {
	s.mu.RLock()
	h := s.apiHandler
	s.mu.RUnlock()
	if h == nil {
		h = s.delegate.UnprotectedHandler()
	}
	h.ServeHTTP(w, r)
}

// UnprotectedHandler serves this server's endpoints and its delegates'.
func (s *GenericAPIServer) UnprotectedHandler() http.Handler { return s.router }

// Delegate is the next server in the chain.
func (s *GenericAPIServer) Delegate() DelegationTarget { return s.delegate }

func (s *GenericAPIServer) PostStartHooks() []*PostStartHook { return s.hooks.list() }
func (s *GenericAPIServer) HealthzChecks() []healthz.Checker { return s.healthz.Checks() }
func (s *GenericAPIServer) LivezChecks() []healthz.Checker   { return s.livez.Checks() }
func (s *GenericAPIServer) ReadyzChecks() []healthz.Checker  { return s.readyz.Checks() }
func (s *GenericAPIServer) PreShutdownHooks() []*PreShutdownHook {
	return append([]*PreShutdownHook(nil), s.preShutdownHooks...)
}

// AddHealthChecks adds checks to /healthz, /livez and /readyz.
func (s *GenericAPIServer) AddHealthChecks(checks ...healthz.Checker) error {
	if err := s.healthz.Add(checks...); err != nil {
		return err
	}
	if err := s.livez.Add(checks...); err != nil {
		return err
	}
	return s.readyz.Add(checks...)
}

// AddReadyzChecks adds checks to /readyz only (things that make the server
// unready but do not mean it should be restarted).
func (s *GenericAPIServer) AddReadyzChecks(checks ...healthz.Checker) error {
	return s.readyz.Add(checks...)
}

// Readyz exposes the /readyz set (for the dashboard).
func (s *GenericAPIServer) Readyz() *healthz.Set { return s.readyz }

// Livez exposes the /livez set.
func (s *GenericAPIServer) Livez() *healthz.Set { return s.livez }

// ShuttingDown reports whether shutdown has begun.
func (s *GenericAPIServer) ShuttingDown() <-chan struct{} { return s.shutdownStarted }

// notFound is the end of the chain: a 404 Status for anything unserved.
type notFound struct{}

// NewNotFound returns the last delegate of every chain.
func NewNotFound() DelegationTarget { return notFound{} }

func (notFound) UnprotectedHandler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		filters.WriteStatus(w, &apierrors.StatusError{ErrStatus: metav1.Status{
			Status:  metav1.StatusFailure,
			Code:    http.StatusNotFound,
			Reason:  metav1.StatusReasonNotFound,
			Message: "the server could not find the requested resource",
			Details: &metav1.StatusDetails{},
		}})
	})
}
func (notFound) PostStartHooks() []*PostStartHook     { return nil }
func (notFound) HealthzChecks() []healthz.Checker     { return nil }
func (notFound) LivezChecks() []healthz.Checker       { return nil }
func (notFound) ReadyzChecks() []healthz.Checker      { return nil }
func (notFound) PreShutdownHooks() []*PreShutdownHook { return nil }
func (notFound) ServerName() string                   { return "" }

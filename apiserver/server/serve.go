package server

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"sync/atomic"
	"time"

	"golang.org/x/net/http2"

	"github.com/devplane/devplane/apiserver/authz"
	"github.com/devplane/devplane/apiserver/filters"
	"github.com/devplane/devplane/apiserver/healthz"
	"github.com/devplane/devplane/apiserver/version"
)

// PreparedServer is a head-of-chain server ready to Run.
type PreparedServer struct {
	*GenericAPIServer
	handler         http.Handler
	stopLongRunning chan struct{}
	grownStacks     *grownStacks // stopped when Run ends
	inFlight        atomic.Int64 // requests being served, watches included
}

// PrepareRun installs the endpoints every head serves (/healthz, /livez,
// /readyz, /version) and builds the filter chain. Call it on the head only.
func (s *GenericAPIServer) PrepareRun() (*PreparedServer, error) {
	if s.prepared {
		return nil, fmt.Errorf("PrepareRun called twice on %s", s.name)
	}
	s.prepared = true
	if err := s.AddHealthChecks(healthz.Ping, healthz.Log); err != nil {
		return nil, err
	}
	if err := s.readyz.Add(healthz.NamedCheck("shutdown", func(*http.Request) error {
		select {
		case <-s.shutdownStarted:
			return errors.New("server is shutting down")
		default:
			return nil
		}
	})); err != nil {
		return nil, err
	}
	for _, set := range []*healthz.Set{s.healthz, s.livez, s.readyz} {
		name := "/" + setName(set, s)
		s.Handle(name, set)
		s.Handle(name+"/*check", set)
	}
	s.Handle("/version", http.HandlerFunc(serveVersion))

	p := &PreparedServer{GenericAPIServer: s, stopLongRunning: make(chan struct{})}
	c := s.config
	allowAnonymous := func(r *http.Request) bool { return c.AnonymousAuth || filters.AnonymousAllowed(r.URL.Path) }
	var h http.Handler = s.router
	h = filters.WithLongRunningStop(h, p.stopLongRunning)
	// Inside the timeout, so an injected delay counts against it.
	h = filters.WithFaults(h, c.Faults, s.logger)
	h = filters.WithTimeout(h, c.RequestTimeout)
	// As kube's chain runs them: impersonation, then the in-flight limit,
	// then authorization, so a saturated server refuses a request before
	// spending an authorization on it.
	if c.Authorizer != nil {
		h = withAuthorization(h, c.Authorizer, s.logger)
	}
	h = filters.WithMaxInFlight(h, c.MaxRequestsInFlight, c.MaxMutatingRequestsInFlight)
	if c.Authorizer != nil {
		h = filters.WithImpersonation(h, c.Authorizer)
	}
	// As kube's: the audit policy sees the authenticated user, before
	// impersonation.
	h = filters.WithAuditPolicy(h, c.Auditor)
	h = filters.WithAuthentication(h, c.Authenticator, allowAnonymous, s.logger)
	h = filters.WithLogging(h, s.logger)
	// Outside authentication, so refused requests are recorded too.
	h = filters.WithAuditRecord(h, c.Auditor)
	if c.Metrics != nil {
		h = c.Metrics.Wrap(h) // inside request info: it labels by it
	}
	p.grownStacks = withGrownStacks(h) // inside request info: it skips long-running requests
	h = filters.WithRequestInfo(p.grownStacks)
	h = filters.WithCompressionDisabledFor(h, c.DisableCompressionForClientIPs)
	h = filters.WithPanicRecovery(h, s.logger)
	p.handler = p.countInFlight(h)
	return p, nil
}

func setName(set *healthz.Set, s *GenericAPIServer) string {
	switch set {
	case s.healthz:
		return "healthz"
	case s.livez:
		return "livez"
	default:
		return "readyz"
	}
}

func serveVersion(w http.ResponseWriter, _ *http.Request) {
	body, _ := json.MarshalIndent(version.Get(), "", "  ")
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(body)
}

// Handler is the full filtered handler (for in-process tests).
func (p *PreparedServer) Handler() http.Handler { return p.handler }

// Run serves TLS + HTTP/2 on the configured listener until ctx ends, then
// shuts down gracefully: /readyz fails at once, after ShutdownDelay the
// pre-shutdown hooks run (still serving), watches are ended, the listener
// closes and in-flight requests drain (bounded).
func (p *PreparedServer) Run(ctx context.Context) error {
	c := p.config
	if c.Listener == nil {
		return fmt.Errorf("%s: no listener configured", p.name)
	}
	tlsConfig := &tls.Config{
		MinVersion:   tls.VersionTLS12,
		Certificates: []tls.Certificate{c.ServingCert},
		ClientAuth:   tls.VerifyClientCertIfGiven,
		ClientCAs:    c.ClientCA,
		NextProtos:   []string{"h2", "http/1.1"},
	}
	defer p.grownStacks.Stop()
	srv := &http.Server{
		Handler:           p.handler,
		TLSConfig:         tlsConfig,
		MaxHeaderBytes:    1 << 20,
		ReadHeaderTimeout: 32 * time.Second,
		IdleTimeout:       90 * time.Second,
		ErrorLog:          nil,
	}
	if err := ConfigureHTTP2(srv, c.HTTP2MaxStreamsPerConnection); err != nil {
		return err
	}
	ln := NewTLSListener(c.Listener.(*net.TCPListener), srv.TLSConfig)

	hookCtx, cancelHooks := context.WithCancel(context.Background())
	defer cancelHooks()
	serveErr := make(chan error, 1)
	go func() { serveErr <- srv.Serve(ln) }()
	p.runPostStartHooks(hookCtx)

	select {
	case err := <-serveErr:
		return fmt.Errorf("%s stopped serving: %w", p.name, err)
	case <-ctx.Done():
	}

	p.shutdownOnce.Do(func() { close(p.shutdownStarted) })
	p.logger.Info("shutting down: readyz now failing")
	if c.ShutdownDelay > 0 {
		time.Sleep(c.ShutdownDelay)
	}
	// Pre-shutdown hooks run while we still serve, as kube-apiserver's do:
	// controllers use the API to take this replica out of the endpoints.
	for _, h := range p.preShutdownHooks {
		start := time.Now()
		if herr := h.Fn(); herr != nil {
			p.logger.Error("pre-shutdown hook failed", "hook", h.Name, "err", herr)
		}
		p.logger.Debug("pre-shutdown hook done", "hook", h.Name, "took", time.Since(start))
	}
	cancelHooks()
	// Watches never end on their own: end them so the drain can finish.
	close(p.stopLongRunning)
	drainCtx, cancel := context.WithTimeout(context.Background(), c.ShutdownTimeout)
	defer cancel()
	drainStart := time.Now()
	// Shutdown stops accepting and asks HTTP/2 clients to go away, but then
	// waits for them to hang up (a second for idle HTTP/2 connections). The
	// requests are what must finish: once none is in flight, close.
	shutdownDone := make(chan error, 1)
	go func() { shutdownDone <- srv.Shutdown(drainCtx) }()
	if !p.waitIdle(drainCtx) {
		p.logger.Warn("in-flight requests did not drain in time", "after", c.ShutdownTimeout)
	}
	_ = srv.Close()
	<-shutdownDone
	p.logger.Debug("drained", "took", time.Since(drainStart))
	p.logger.Info("listener closed, requests drained")
	return nil
}

// ConfigureHTTP2 sets srv up to serve HTTP/2 as devplane does (the
// transfer-floor benchmark serves its bytes through the same).
func ConfigureHTTP2(srv *http.Server, maxStreams int) error {
	// As kube-apiserver: many streams per connection, with frames and
	// buffers large enough for big lists without flow-control stalls.
	const frame = 256 << 10
	h2 := &http2.Server{
		MaxConcurrentStreams:         uint32(maxStreams),
		MaxReadFrameSize:             frame,
		MaxUploadBufferPerStream:     frame,
		MaxUploadBufferPerConnection: int32(frame * maxStreams),
		IdleTimeout:                  90 * time.Second,
		// The default round-robin scheduler walks every open stream of the
		// connection for each frame it writes; with hundreds of watches on
		// a connection that walk was a fifth of the server's CPU under
		// watch fan-out. This one looks only at streams with frames queued.
		// (x/net deprecates custom schedulers as of Go 1.27, where
		// net/http's own HTTP/2 takes over: measure again then.)
		NewWriteScheduler: func() http2.WriteScheduler { return http2.NewRandomWriteScheduler() },
	}
	if err := http2.ConfigureServer(srv, h2); err != nil {
		return fmt.Errorf("configuring HTTP/2: %w", err)
	}
	// As ConfigureServer's own, but HTTP/2 writes through a batchConn.
	srv.TLSNextProto[http2.NextProtoTLS] = func(hs *http.Server, c *tls.Conn, h http.Handler) {
		var ctx context.Context
		if bc, ok := h.(interface{ BaseContext() context.Context }); ok {
			ctx = bc.BaseContext() // net/http's per-connection context
		}
		h2.ServeConn(newBatchConn(c), &http2.ServeConnOpts{Context: ctx, Handler: h, BaseConfig: hs})
	}
	return nil
}

// NewTLSListener is ln serving TLS with TCP keep-alive, each connection
// under TLS a heldConn (for ConfigureHTTP2's batching).
func NewTLSListener(ln *net.TCPListener, cfg *tls.Config) net.Listener {
	return tls.NewListener(keepAliveListener{ln}, cfg)
}

// keepAliveListener turns on TCP keep-alive so dead clients are noticed,
// and gives TLS a heldConn, so that HTTP/2 can batch its writes.
type keepAliveListener struct{ *net.TCPListener }

func (l keepAliveListener) Accept() (net.Conn, error) {
	c, err := l.AcceptTCP()
	if err != nil {
		return nil, err
	}
	_ = c.SetKeepAlive(true)
	_ = c.SetKeepAlivePeriod(3 * time.Minute)
	return &heldConn{Conn: c}, nil
}

// withAuthorization is filters.WithAuthorization, except that the health
// and version endpoints stay public whatever the policy says.
func withAuthorization(h http.Handler, a authz.Authorizer, logger *slog.Logger) http.Handler {
	authorized := filters.WithAuthorization(h, a, logger)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if filters.AnonymousAllowed(r.URL.Path) {
			h.ServeHTTP(w, r)
			return
		}
		authorized.ServeHTTP(w, r)
	})
}

// countInFlight counts requests being served, so shutdown knows when the
// drain is over.
func (p *PreparedServer) countInFlight(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p.inFlight.Add(1)
		defer p.inFlight.Add(-1)
		h.ServeHTTP(w, r)
	})
}

// waitIdle waits until no request is in flight, or ctx ends (false).
func (p *PreparedServer) waitIdle(ctx context.Context) bool {
	tick := time.NewTicker(2 * time.Millisecond)
	defer tick.Stop()
	for p.inFlight.Load() > 0 {
		select {
		case <-ctx.Done():
			return false
		case <-tick.C:
		}
	}
	return true
}

// Package controlplane assembles a whole devplane: certificates, etcd, and
// the delegation chain aggregator → core → extensions → not-found, as
// kube-apiserver's CreateServerChain does. Both `devplane up` and the Go
// test harness start devplane through it.
package controlplane

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"path/filepath"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/devplane/devplane/apiserver/audit"
	"github.com/devplane/devplane/apiserver/authn"
	"github.com/devplane/devplane/apiserver/authz"
	"github.com/devplane/devplane/apiserver/controllers"
	"github.com/devplane/devplane/apiserver/faults"
	"github.com/devplane/devplane/apiserver/healthz"
	"github.com/devplane/devplane/apiserver/history"
	"github.com/devplane/devplane/apiserver/metrics"
	"github.com/devplane/devplane/apiserver/openapi"
	"github.com/devplane/devplane/apiserver/registry"
	"github.com/devplane/devplane/apiserver/server"
	"github.com/devplane/devplane/apiserver/serviceaccount"
	"github.com/devplane/devplane/apiserver/snapshot"
	"github.com/devplane/devplane/apiserver/storage"
	"github.com/devplane/devplane/apiserver/workloads"
	"github.com/devplane/devplane/certs"
	"github.com/devplane/devplane/embedded"
)

// Server names as kube-apiserver's chain calls them.
const (
	AggregatorName = "kube-aggregator"
	CoreName       = "kube-apiserver"
	ExtensionsName = "apiextensions-apiserver"
)

// ControlPlane is a started (not yet serving) devplane.
type ControlPlane struct {
	opts     Options
	logger   *slog.Logger
	Certs    *certs.Bundle
	Etcd     embedded.Etcd
	listener net.Listener

	Aggregator *server.GenericAPIServer
	Core       *server.GenericAPIServer
	Extensions *server.GenericAPIServer
	// CoreRegistry holds the built-in resources the core server serves.
	CoreRegistry *registry.Registry
	// aggregatorRegistry serves apiregistration.k8s.io (set by installAggregator).
	aggregatorRegistry atomic.Pointer[registry.Registry]
	prepared           atomic.Pointer[server.PreparedServer]

	controllers *controllers.Manager
	// saIssuer signs service account tokens (TokenRequest, and the
	// legacy ones the token controller keeps in Secrets).
	saIssuer *serviceaccount.Issuer
	// authorizer decides requests; admission's CEL asks it too.
	authorizer authz.Authorizer
	// workloads are the simulated nodes, scheduler and workload
	// controllers (nil with no nodes).
	workloads *workloads.Machinery
	// ext is the extensions server (CRDs), set up by installExtensions.
	ext     *extensionsState
	extOnce sync.Once
	// cachers are the built-in kinds' watch caches, stopped after the drain.
	cachers []*storage.Cacher
	// openAPI serves /openapi/v2 and /openapi/v3 (installOpenAPI).
	openAPI *openapi.Service

	// metrics are this devplane's request metrics, served at /metrics.
	metrics *metrics.Metrics
	// faults are the failures injected into requests (none until set).
	faults *faults.Injector
	// auditor records requests: the recent-request ring, the audit log.
	auditor *audit.Auditor
	// writers are who made the stores' recent writes (object history).
	writers *history.Recorder

	steps     *steps
	stopOnce  sync.Once
	startedAt time.Time
}

// New prepares certificates, starts etcd and builds the server chain. It
// does not serve yet: call Run. opts are completed and validated first
// (callers that report option errors early call both themselves). Each step is reported by Steps() so the
// dashboard can show start-up as it happens.
func New(ctx context.Context, opts Options) (*ControlPlane, error) {
	opts.Complete()
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	cp := &ControlPlane{opts: opts, logger: opts.Logger, steps: newSteps(), startedAt: time.Now(), metrics: metrics.New(), faults: faults.NewInjector()}
	var err error
	if cp.auditor, err = opts.Audit.NewAuditor(); err != nil {
		return nil, err
	}
	// Writers are remembered as long as etcd may keep their versions.
	cp.writers = history.NewRecorder(opts.HistoryRetention+CompactionInterval, 0)
	ok := false
	defer func() {
		if !ok {
			cp.stopStorage()
		}
	}()

	if err := cp.steps.run("certificates", func() error { return cp.ensureCerts() }); err != nil {
		return nil, err
	}
	if err := cp.steps.run("etcd", func() (err error) {
		cp.Etcd, err = embedded.Start(ctx, embedded.Options{
			DataDir:       filepath.Join(opts.DataDir, "etcd"),
			Servers:       opts.EtcdServers,
			CAFile:        opts.EtcdCAFile,
			CertFile:      opts.EtcdCertFile,
			KeyFile:       opts.EtcdKeyFile,
			Logger:        cp.logger.With("component", "etcd"),
			UnsafeNoFsync: opts.UnsafeNoFsync,
			Ephemeral:     opts.Ephemeral,
		})
		return err
	}); err != nil {
		return nil, err
	}
	if opts.InitialState != nil {
		if err := cp.steps.run("initial state", func() error {
			_, err := snapshot.Load(ctx, cp.Etcd.Client(), opts.InitialState)
			return err
		}); err != nil {
			return nil, err
		}
	}
	if err := cp.listen(); err != nil {
		return nil, err
	}
	if err := cp.buildChain(); err != nil {
		return nil, err
	}
	ok = true
	return cp, nil
}

func (cp *ControlPlane) ensureCerts() error {
	ips := []net.IP{FirstServiceIP(cp.opts.ServiceClusterIPRange)}
	for _, ip := range []net.IP{cp.opts.BindAddress, cp.opts.AdvertiseAddress} {
		if ip != nil && !ip.IsUnspecified() {
			ips = append(ips, ip)
		}
	}
	dir, dnsNames := filepath.Join(cp.opts.DataDir, "pki"), cp.opts.ExtraSANs
	if cp.opts.CertDir != "" {
		dir = cp.opts.CertDir
		unlock, err := lockCertDir(dir)
		if err != nil {
			return err
		}
		defer unlock()
		dnsNames, ips = withExistingSANs(dir, dnsNames, ips)
	}
	b, err := certs.Ensure(certs.Options{
		Dir:      dir,
		DNSNames: dnsNames,
		IPs:      ips,
		Logger:   cp.logger.With("component", "certs"),
	})
	cp.Certs = b
	return err
}

func (cp *ControlPlane) listen() error {
	if cp.opts.Listener != nil {
		cp.listener = cp.opts.Listener
		return nil
	}
	addr := net.JoinHostPort(cp.opts.BindAddress.String(), strconv.Itoa(cp.opts.Port))
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("cannot listen on %s: %w", addr, err)
	}
	cp.listener = ln
	return nil
}

func (cp *ControlPlane) buildChain() error {
	serving, err := cp.Certs.Serving.TLSCertificate()
	if err != nil {
		return err
	}
	sec, err := cp.newSecurity()
	if err != nil {
		return err
	}
	cp.saIssuer, cp.authorizer = sec.issuer, sec.authorizer
	var authenticators authn.Authenticator = sec.authenticator
	config := func(name string) server.CompletedConfig {
		c := &server.Config{
			Name:          name,
			Logger:        cp.logger,
			Listener:      cp.listener,
			ServingCert:   serving,
			ClientCA:      cp.Certs.CAPool(),
			Authenticator: authenticators,
			Authorizer:    sec.authorizer,
			AnonymousAuth: sec.anonymousAuth(),

			DisableCompressionForClientIPs: cp.opts.DisableCompressionForClientIPs,
			Metrics:                        cp.metrics,
			Faults:                         cp.faults,
			Auditor:                        cp.auditor,
		}
		return c.Complete()
	}

	if cp.Extensions, err = config(ExtensionsName).New(server.NewNotFound()); err != nil {
		return err
	}
	if err := cp.installExtensions(); err != nil {
		return err
	}
	if cp.Core, err = config(CoreName).New(cp.Extensions); err != nil {
		return err
	}
	if err := cp.installCore(); err != nil {
		return err
	}
	if err := cp.installSecurity(sec); err != nil {
		return err
	}
	if cp.Aggregator, err = config(AggregatorName).New(cp.Core); err != nil {
		return err
	}
	cp.installOpenAPI()
	cp.Aggregator.Handle("/metrics", cp.metrics.Handler())
	faultsHandler := faults.Handler(cp.faults)
	cp.Aggregator.Handle(faults.Path, faultsHandler)
	cp.Aggregator.HandleMethod(http.MethodPost, faults.Path, faultsHandler)
	cp.Aggregator.HandleMethod(http.MethodDelete, faults.Path+"/:name", faultsHandler)
	cp.Aggregator.Handle(audit.RecentPath, audit.Handler(cp.auditor))
	cp.Aggregator.Handle(history.Path, history.Handler(cp.localRegistries, cp.writers, cp.opts.HistoryRetention))
	cp.installSnapshots()
	if cp.opts.Profiling {
		cp.installProfiling()
	}
	if err := cp.installIssuerDiscovery(sec); err != nil {
		return err
	}
	return cp.installAggregator()
}

// installCore adds what the core server serves beyond the generic parts.
func (cp *ControlPlane) installCore() error {
	etcdCheck := func(name string) healthz.Checker {
		return healthz.NamedCheck(name, func(r *http.Request) error {
			ctx, cancel := context.WithTimeout(r.Context(), 2*time.Second)
			defer cancel()
			return cp.Etcd.Ready(ctx)
		})
	}
	if err := cp.Core.AddHealthChecks(etcdCheck("etcd")); err != nil {
		return err
	}
	if err := cp.Core.AddReadyzChecks(etcdCheck("etcd-readiness")); err != nil {
		return err
	}
	// Keep the etcd history bounded, to the retention object history
	// needs; the watch cache survives compaction.
	if err := cp.Core.AddPostStartHook("start-etcd-compactor", func(ctx context.Context) error {
		storage.StartCompactor(ctx, cp.Etcd.Client(), storage.CompactorOptions{
			Interval:     min(CompactionInterval, cp.opts.HistoryRetention),
			Retention:    cp.opts.HistoryRetention,
			MaxRevisions: max(cp.opts.HistoryMaxRevisions, 0),
			Logger:       cp.logger.With("component", "compactor"),
		})
		return nil
	}); err != nil {
		return err
	}
	return cp.installCoreAPI()
}

// CompactionInterval is how often etcd history older than the history
// retention is compacted away (kube-apiserver's default interval).
const CompactionInterval = 5 * time.Minute

// URL is where clients reach the API.
func (cp *ControlPlane) URL() string {
	return "https://" + net.JoinHostPort(cp.opts.AdvertiseAddress.String(), strconv.Itoa(cp.Port()))
}

// Port is the port the API listens on (resolved when Options.Port was 0).
func (cp *ControlPlane) Port() int {
	return cp.listener.Addr().(*net.TCPAddr).Port
}

// Run serves until ctx ends, then shuts down gracefully and stops etcd last.
func (cp *ControlPlane) Run(ctx context.Context) error {
	prepared, err := cp.Aggregator.PrepareRun()
	if err != nil {
		cp.stopStorage()
		return err
	}
	cp.prepared.Store(prepared)
	stopAudit := make(chan struct{})
	if err := cp.auditor.Run(stopAudit); err != nil {
		cp.stopStorage()
		return fmt.Errorf("starting the audit backends: %w", err)
	}
	runErr := prepared.Run(ctx)
	// Requests have drained: what the audit backends hold is complete.
	close(stopAudit)
	if err := cp.auditor.Shutdown(auditFlushBound); err != nil {
		cp.logger.Warn("stopping", "err", err)
	}
	cp.stopStorage()
	return runErr
}

// Handler is the filtered head handler, available after Run started
// (nil before): in-process callers that do not want TLS use it.
func (cp *ControlPlane) Handler() http.Handler {
	p := cp.prepared.Load()
	if p == nil {
		return nil
	}
	return p.Handler()
}

func (cp *ControlPlane) stopStorage() {
	cp.stopOnce.Do(func() {
		cp.stopCachers(5 * time.Second)
		if cp.Etcd != nil {
			if err := cp.Etcd.Stop(); err != nil {
				cp.logger.Error("stopping etcd", "err", err)
			} else {
				cp.logger.Info("etcd stopped")
			}
		}
		if cp.listener != nil {
			_ = cp.listener.Close()
		}
	})
}

// FirstServiceIP is the first usable address of the service range, which
// the kubernetes Service gets (10.0.0.1 for 10.0.0.0/24).
func FirstServiceIP(cidr *net.IPNet) net.IP {
	ip := make(net.IP, len(cidr.IP))
	copy(ip, cidr.IP)
	if v4 := ip.To4(); v4 != nil {
		ip = v4
	}
	for i := len(ip) - 1; i >= 0; i-- {
		ip[i]++
		if ip[i] != 0 {
			break
		}
	}
	return ip
}

// stopCachers ends every watch cache, in parallel and bounded: etcd stops
// next whatever happens, so a stuck watch cannot hold the process.
func (cp *ControlPlane) stopCachers(bound time.Duration) {
	var wg sync.WaitGroup
	for _, c := range cp.cachers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c.Stop()
		}()
	}
	done := make(chan struct{})
	go func() {
		wg.Wait()
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(bound):
		cp.logger.Warn("watch caches did not stop in time; stopping etcd anyway", "after", bound)
	}
}

// Faults are the rules injecting failures into this devplane's requests.
func (cp *ControlPlane) Faults() *faults.Injector { return cp.faults }

// auditFlushBound is how long a stop waits for the audit backends to
// deliver what they hold.
const auditFlushBound = 5 * time.Second

// Auditor records this devplane's requests (the recent-request ring).
func (cp *ControlPlane) Auditor() *audit.Auditor { return cp.auditor }

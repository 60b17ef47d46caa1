package controllers

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"sync"
	"sync/atomic"
	"time"

	utilrand "k8s.io/apimachinery/pkg/util/rand"
	"k8s.io/client-go/rest"
)

// ManagerOptions configure the controllers of one devplane replica.
type ManagerOptions struct {
	// CA is the PEM bundle published as kube-root-ca.crt.
	CA []byte
	// Identity names this replica (its Lease, its leader election
	// identity). Default: hostname plus a random suffix.
	Identity string
	// AdvertiseIP and Port are what the kubernetes Service's endpoints
	// list for this replica; without AdvertiseIP no endpoints are kept.
	AdvertiseIP net.IP
	Port        int32
	// LeaseDuration of the replica lease (default 15s): a replica that
	// stopped without cleaning up leaves the endpoints after it.
	LeaseDuration time.Duration
	// LeaderElectionLockName is the Lease in kube-system the controllers'
	// leader election uses (default "devplane-controller-manager").
	LeaderElectionLockName string
	// DisableLeaderElection runs the controllers at once (one replica).
	DisableLeaderElection bool
	// Local, when set, feeds the controllers' informers from the server's
	// own watch caches in-process; otherwise they list and watch over HTTP.
	Local Local
	// QuotaUsage counts a quota's usage for the resource quota
	// controller; without it there is none.
	QuotaUsage QuotaUsageFunc
	// SignCSR issues certificates for approved requests to kube's
	// built-in signers; without it nobody signs them.
	SignCSR CSRSigner
	// LegacyTokens signs the tokens kept in service-account-token Secrets
	// (with CA as their ca.crt); without it nobody fills them.
	LegacyTokens LegacyTokenIssuer
	Logger       *slog.Logger
}

// Manager runs the controllers (under leader election) and the lease
// endpoint reconciler (always) of one replica.
type Manager struct {
	cfg         *rest.Config
	opts        ManagerOptions
	logger      *slog.Logger
	controllers []Controller
	gc          *GarbageCollector
	reconciler  *LeaseEndpointReconciler
	leading     atomic.Bool

	// alongside run in every leadership term, beside the controllers
	// (added at run time by RunWhileLeading).
	termMu    sync.Mutex
	alongside []func(ctx context.Context)
	term      *leadership
}

// leadership is the current term: its context and what runs in it.
type leadership struct {
	ctx context.Context
	wg  sync.WaitGroup
}

// NewManager builds every controller; nothing runs before Run.
func NewManager(cfg *rest.Config, opts ManagerOptions) (*Manager, error) {
	if opts.Identity == "" {
		host, _ := os.Hostname()
		opts.Identity = fmt.Sprintf("devplane-%s-%s", host, utilrand.String(5))
	}
	if opts.LeaseDuration == 0 {
		opts.LeaseDuration = 15 * time.Second
	}
	if opts.LeaderElectionLockName == "" {
		opts.LeaderElectionLockName = "devplane-controller-manager"
	}
	m := &Manager{cfg: cfg, opts: opts, logger: loggerOr(opts.Logger, "manager")}
	ns, err := NewNamespaceController(cfg, opts.Local, opts.Logger)
	if err != nil {
		return nil, err
	}
	if m.gc, err = NewGarbageCollector(cfg, opts.Local, opts.Logger); err != nil {
		return nil, err
	}
	sa, err := NewServiceAccountsController(cfg, opts.Local, opts.Logger)
	if err != nil {
		return nil, err
	}
	m.controllers = []Controller{ns, m.gc, sa}
	if opts.QuotaUsage != nil {
		quota, err := NewQuotaController(cfg, opts.Local, opts.QuotaUsage, opts.Logger)
		if err != nil {
			return nil, err
		}
		m.controllers = append(m.controllers, quota)
	}
	if len(opts.CA) > 0 {
		ca, err := NewRootCAPublisher(cfg, opts.Local, opts.CA, opts.Logger)
		if err != nil {
			return nil, err
		}
		m.controllers = append(m.controllers, ca)
	}
	if opts.LegacyTokens != nil && len(opts.CA) > 0 {
		tokens, err := NewServiceAccountTokensController(cfg, opts.Local, opts.LegacyTokens, opts.CA, opts.Logger)
		if err != nil {
			return nil, err
		}
		m.controllers = append(m.controllers, tokens)
	}
	if opts.SignCSR != nil {
		signing, err := NewCSRSigningController(cfg, opts.Local, opts.SignCSR, opts.Logger)
		if err != nil {
			return nil, err
		}
		m.controllers = append(m.controllers, signing)
	}
	if opts.AdvertiseIP != nil {
		if m.reconciler, err = NewLeaseEndpointReconciler(cfg, opts.Identity, opts.AdvertiseIP, opts.Port, opts.LeaseDuration, opts.Logger); err != nil {
			return nil, err
		}
	}
	return m, nil
}

// Controllers are the leader-elected controllers, by Name.
func (m *Manager) Controllers() []Controller { return m.controllers }

// GarbageCollector is exposed for Resync (call it when CRDs change).
func (m *Manager) GarbageCollector() *GarbageCollector { return m.gc }

// Leading reports whether this replica runs the controllers now.
func (m *Manager) Leading() bool { return m.leading.Load() }

// SyncChecks returns one check per controller (and the reconciler) for
// readyz's informer-sync: a standby replica has nothing to sync, so its
// leader-elected controllers count as synced while it is not leading.
func (m *Manager) SyncChecks() map[string]func() bool {
	checks := map[string]func() bool{}
	for _, c := range m.controllers {
		checks[c.Name()] = func() bool { return !m.leading.Load() || c.HasSynced() }
	}
	if m.reconciler != nil {
		checks[m.reconciler.Name()] = m.reconciler.HasSynced
	}
	return checks
}

// HasSynced is true when every check of SyncChecks passes.
func (m *Manager) HasSynced() bool {
	for _, check := range m.SyncChecks() {
		if !check() {
			return false
		}
	}
	return true
}

// Run runs everything until ctx ends and returns once all of it stopped.
func (m *Manager) Run(ctx context.Context) error {
	var wg sync.WaitGroup
	var reconcilerErr error
	if m.reconciler != nil {
		wg.Add(1)
		go func() {
			defer wg.Done()
			reconcilerErr = m.reconciler.Run(ctx)
		}()
	}
	var err error
	if m.opts.DisableLeaderElection {
		m.runControllers(ctx)
	} else {
		err = RunWithLeaderElection(ctx, m.cfg, m.opts.Identity, m.opts.LeaderElectionLockName, m.runControllers)
	}
	wg.Wait()
	return errors.Join(err, reconcilerErr)
}

// RunWhileLeading runs run in this replica's current leadership term, if
// any, and in every later one, beside the controllers (for good when
// leader election is off). run must return when its context ends; a
// term ends only once it has.
func (m *Manager) RunWhileLeading(run func(ctx context.Context)) {
	m.termMu.Lock()
	defer m.termMu.Unlock()
	m.alongside = append(m.alongside, run)
	if t := m.term; t != nil {
		t.wg.Go(func() { run(t.ctx) })
	}
}

// runControllers runs every controller for one leadership term,
// restarting one that fails, and returns when all have stopped.
func (m *Manager) runControllers(ctx context.Context) {
	m.leading.Store(true)
	defer m.leading.Store(false)
	m.logger.Info("running controllers", "identity", m.opts.Identity)
	t := &leadership{ctx: ctx}
	m.termMu.Lock()
	m.term = t
	for _, run := range m.alongside {
		t.wg.Go(func() { run(ctx) })
	}
	m.termMu.Unlock()
	defer func() {
		<-ctx.Done()
		m.termMu.Lock()
		m.term = nil
		m.termMu.Unlock()
		t.wg.Wait()
	}()
	var wg sync.WaitGroup
	for _, c := range m.controllers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for ctx.Err() == nil {
				if err := c.Run(ctx); err != nil && ctx.Err() == nil {
					m.logger.Error("controller failed, restarting", "controller", c.Name(), "err", err)
				}
				select {
				case <-ctx.Done():
				case <-time.After(time.Second):
				}
			}
		}()
	}
	wg.Wait()
}

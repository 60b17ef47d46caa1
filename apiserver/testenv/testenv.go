// Package testenv runs a real devplane inside a test process: the API
// server controller and webhook tests talk to, in place of
// controller-runtime's envtest (no binaries to download, ~100 ms to start).
//
//	env := testenv.StartT(t, testenv.Options{CRDDirectoryPaths: []string{"testdata/crds"}})
//	client := kubernetes.NewForConfigOrDie(env.Config())
//
// Every Instance has its own data dir, port and CA, so tests can start
// several at once, in parallel.
//
// Snapshots and forks: once a suite's fixtures are loaded, Snapshot takes
// the whole API state in milliseconds; Restore puts it back between specs
// (time moves forward: restored objects get new resourceVersions, and
// watches receive the events that lead to the restored state), and
// Options.From starts a new Instance on it, so parallel specs each get a
// copy of their own:
//
//	snap, _ := env.Snapshot(ctx)           // in TestMain or a BeforeSuite
//	fork := testenv.StartT(t, testenv.Options{From: snap}) // per spec, in parallel
//
// A fork of a freshly started Instance's snapshot is also the cheapest
// fresh instance: it skips the bootstrap writes a Start makes.
package testenv

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/devplane/devplane/apiserver/controlplane"
	"github.com/devplane/devplane/apiserver/snapshot"
)

// Options configure one Instance. The zero value is a plain API server.
type Options struct {
	// CRDDirectoryPaths are files or directories of YAML/JSON
	// CustomResourceDefinitions (apiextensions.k8s.io/v1) to install.
	CRDDirectoryPaths []string
	// CRDs are installed too. Start waits until every CRD is Established
	// and its resources are in discovery.
	CRDs []*apiextensionsv1.CustomResourceDefinition

	// Webhooks are admission webhook configurations pointed at a server
	// the test runs on 127.0.0.1 (see WebhookOptions).
	Webhooks WebhookOptions

	// AuthorizationMode is "RBAC" (the default, as `devplane up`: RBAC
	// manifests are really exercised) or "AlwaysAllow".
	AuthorizationMode string

	// Logger receives devplane's logs; nil discards them.
	Logger *slog.Logger

	// FastStorage runs etcd without fsync: tests lose nothing (the data
	// dir is temporary) and writes get several times faster. nil means
	// true; set it to a false value to measure with real fsyncs.
	FastStorage *bool

	// StartTimeout bounds Start when ctx has no deadline (default 60s).
	StartTimeout time.Duration

	// Workloads runs simulated nodes, kube's scheduler and kube's workload
	// controllers, so Deployments, Jobs, StatefulSets... progress as on a
	// cluster. Off by default, as in envtest: a controller's test must not
	// have kube's deployment controller rewriting what it asserts.
	Workloads bool
	// Nodes is how many simulated nodes run with Workloads (default 1).
	Nodes int

	// From starts the Instance on a snapshot's state (a fork): its objects
	// and CRDs are in etcd before the server starts, which then comes up
	// on them as on a restart, and a snapshot taken by Instance.Snapshot
	// brings its instance's certificates along. CRDs and Webhooks above
	// are installed on top, replacing those of the same name (a parent's
	// webhook configurations point at the parent's server). Reset returns
	// to the snapshot's state.
	// Workloads are not in a snapshot: set Workloads for the fork too if
	// the snapshot's nodes should run its pods.
	From *Snapshot
}

// Instance is a running devplane.
type Instance struct {
	cp      *controlplane.ControlPlane
	dir     string
	cancel  context.CancelFunc
	done    chan error
	webhook *webhookServing

	// baseline is the etcd content right after start: what Reset restores.
	baseline *baseline

	stopOnce sync.Once
	stopErr  error
}

// ErrCRDsNotServed is returned (wrapped) by Start when CRDs were asked for
// and this devplane does not serve apiextensions.k8s.io yet.
var ErrCRDsNotServed = errors.New("devplane does not serve apiextensions.k8s.io (CustomResourceDefinitions) yet")

// A graceful stop takes at most ~4s (3s drain, 1s HTTP/2 GOAWAY);
// unstickAfter leaves room for it before the etcd client is closed.
const (
	unstickAfter = 5 * time.Second
	stopTimeout  = 30 * time.Second
)

// Start starts devplane on a free 127.0.0.1 port in a new temporary data
// dir and returns once it is ready and Options' CRDs and webhooks are
// installed. ctx bounds the start only; Stop ends the Instance.
func Start(ctx context.Context, opts Options) (*Instance, error) {
	if _, ok := ctx.Deadline(); !ok {
		timeout := opts.StartTimeout
		if timeout <= 0 {
			timeout = 60 * time.Second
		}
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, timeout)
		defer cancel()
	}
	logger := opts.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	dir, err := os.MkdirTemp("", "devplane-testenv-")
	if err != nil {
		return nil, fmt.Errorf("testenv: %w", err)
	}
	var initial *snapshot.Snapshot
	if opts.From != nil {
		initial = opts.From.state
		if err := writePKI(filepath.Join(dir, "pki"), opts.From.pki); err != nil {
			os.RemoveAll(dir)
			return nil, fmt.Errorf("testenv: %w", err)
		}
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("testenv: %w", err)
	}
	cpOpts := controlplane.Options{
		Name:              "testenv",
		DataDir:           dir,
		Listener:          ln,
		UnsafeNoFsync:     opts.FastStorage == nil || *opts.FastStorage,
		Ephemeral:         true,
		AuthorizationMode: opts.AuthorizationMode,
		Nodes:             nodesOf(opts),
		// Tests talk to it over loopback: gzip would only cost CPU.
		DisableCompressionForClientIPs: controlplane.LoopbackNetworks(),
		Logger:                         logger,
		InitialState:                   initial,
	}
	cpOpts.Complete()
	if err := cpOpts.Validate(); err != nil {
		ln.Close()
		os.RemoveAll(dir)
		return nil, fmt.Errorf("testenv: %w", err)
	}
	// The instance outlives ctx: it runs until Stop.
	runCtx, cancel := context.WithCancel(context.Background())
	cp, err := controlplane.New(runCtx, cpOpts)
	if err != nil {
		cancel()
		ln.Close()
		os.RemoveAll(dir)
		return nil, fmt.Errorf("testenv: starting devplane: %w", err)
	}
	inst := &Instance{cp: cp, dir: dir, cancel: cancel, done: make(chan error, 1)}
	go func() { inst.done <- cp.Run(runCtx) }()

	ok := false
	defer func() {
		if !ok {
			_ = inst.Stop()
		}
	}()
	if err := inst.waitReady(ctx); err != nil {
		return nil, err
	}
	if initial != nil {
		if err := cp.WaitCRDsServed(ctx, initial); err != nil {
			return nil, fmt.Errorf("testenv: starting from a snapshot: %w", err)
		}
	}
	if err := clientcmd.WriteToFile(*cp.Kubeconfig(), inst.KubeconfigPath()); err != nil {
		return nil, fmt.Errorf("testenv: writing kubeconfig: %w", err)
	}
	if err := inst.setUpWebhooks(ctx, opts.Webhooks); err != nil {
		return nil, err
	}
	// The baseline is taken before CRDs go in, so Reset(ctx, false) removes
	// them; webhook configurations are part of the harness and stay.
	if inst.baseline, err = takeBaseline(ctx, cp.Etcd.Client()); err != nil {
		return nil, fmt.Errorf("testenv: %w", err)
	}
	if err := inst.installCRDs(ctx, opts); err != nil {
		return nil, err
	}
	ok = true
	return inst, nil
}

// StartT starts an Instance for t and stops it when t ends. It fails t on
// any error, except that it skips t, naming the missing capability, when
// CRDs were asked for and devplane does not serve them yet.
func StartT(t testing.TB, opts Options) *Instance {
	t.Helper()
	inst, err := Start(t.Context(), opts)
	if errors.Is(err, ErrCRDsNotServed) {
		t.Skipf("skipping: %v", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := inst.Stop(); err != nil {
			t.Errorf("testenv: stopping devplane: %v", err)
		}
	})
	return inst
}

// waitReady waits for /readyz and, with workloads, for the nodes to be
// registered and the machinery synced: they are part of the baseline
// Reset returns to, and a test's first Deployment is not kept waiting.
func (i *Instance) waitReady(ctx context.Context) error {
	tick := time.NewTicker(2 * time.Millisecond)
	defer tick.Stop()
	for !i.cp.Ready() || !i.cp.WorkloadsSynced() {
		select {
		case err := <-i.done:
			i.done <- err // Stop reads it again
			return fmt.Errorf("testenv: devplane stopped while starting: %v", err)
		case <-ctx.Done():
			return fmt.Errorf("testenv: devplane not ready: %w (%s)", ctx.Err(), failing(i.cp.Status()))
		case <-tick.C:
		}
	}
	return nil
}

// failing names what is not OK yet, for start-up errors.
func failing(items []controlplane.Item) string {
	var out []string
	for _, it := range items {
		if it.State != controlplane.OK {
			out = append(out, it.Name)
		}
	}
	return fmt.Sprintf("not ready: %v", out)
}

// Stop shuts devplane down gracefully (etcd last) and removes the data dir.
// It waits until the server has stopped; calling it again returns the
// first result.
func (i *Instance) Stop() error {
	i.stopOnce.Do(func() {
		var errs []error
		if i.webhook != nil {
			i.webhook.release()
		}
		i.cancel()
		var err error
		select {
		case err = <-i.done:
		case <-time.After(unstickAfter):
			// An in-process etcd watch can deadlock while being cancelled
			// (etcd's v3client adapter), holding a watch cache's Stop;
			// closing the client ends every watch. etcd stops after.
			_ = i.cp.Etcd.Client().Close()
			select {
			case err = <-i.done:
			case <-time.After(stopTimeout):
				err = fmt.Errorf("devplane did not stop within %s", stopTimeout+unstickAfter)
			}
		}
		if err != nil {
			errs = append(errs, err)
		}
		if err := os.RemoveAll(i.dir); err != nil {
			errs = append(errs, err)
		}
		i.stopErr = errors.Join(errs...)
	})
	return i.stopErr
}

// Config is a client-go config for the admin (system:masters). Each call
// returns a new copy.
func (i *Instance) Config() *rest.Config { return i.cp.RESTConfig() }

// ConfigFor is a client-go config authenticating as user in groups, with a
// client certificate signed by devplane's CA.
func (i *Instance) ConfigFor(user string, groups ...string) *rest.Config {
	certPEM, keyPEM, err := i.cp.Certs.IssueClient(user, groups, 24*time.Hour)
	if err != nil {
		// Only an empty user name or a broken CA gets here.
		panic(fmt.Sprintf("testenv: issuing a client certificate for %q: %v", user, err))
	}
	cfg := i.cp.RESTConfig()
	cfg.CertData, cfg.KeyData = certPEM, keyPEM
	return cfg
}

// KubeconfigPath is an admin kubeconfig file (removed by Stop).
func (i *Instance) KubeconfigPath() string { return filepath.Join(i.dir, "kubeconfig") }

// URL is the API server's https URL.
func (i *Instance) URL() string { return i.cp.URL() }

// CAData is the PEM CA that signed the serving and client certificates.
func (i *Instance) CAData() []byte { return append([]byte(nil), i.cp.Certs.CA.CertPEM...) }

// DataDir is the Instance's temporary data dir (removed by Stop).
func (i *Instance) DataDir() string { return i.dir }

// ControlPlane is the running control plane, for tests of devplane itself.
func (i *Instance) ControlPlane() *controlplane.ControlPlane { return i.cp }

// nodesOf is how many simulated nodes opts ask for: none without
// Workloads, one unless Nodes says more.
func nodesOf(opts Options) int {
	if !opts.Workloads {
		return 0
	}
	return max(opts.Nodes, 1)
}

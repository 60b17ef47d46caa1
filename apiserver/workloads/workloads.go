// Package workloads makes workloads progress as on a real cluster, without
// containers: simulated nodes (Node objects, Leases, a simulated kubelet
// that moves bound pods through their lifecycle), kube's own scheduler and
// kube's own workload controllers (deployment, replicaset, statefulset,
// daemonset, job, cronjob, endpoints, endpointslices, disruption, podgc,
// ttl-after-finished, the persistent-volume binder) in-process, plus a
// provisioner for the default StorageClass. Their informers read the
// server's watch caches in place; their writes go through the API.
package workloads

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"sync"
	"sync/atomic"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	utilrand "k8s.io/apimachinery/pkg/util/rand"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	typedcorev1 "k8s.io/client-go/kubernetes/typed/core/v1"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"

	"github.com/devplane/devplane/apiserver/controllers"
)

// Options configure the machinery.
type Options struct {
	// Nodes is how many simulated nodes to run (at least 1).
	Nodes int
	// NodeCapacity overrides each node's capacity (cpu, memory, pods, ...).
	NodeCapacity corev1.ResourceList
	// ClusterCIDR is the pod network, split into one block of
	// NodeCIDRMaskSize bits per node (kube-controller-manager's
	// --cluster-cidr and --node-cidr-mask-size).
	ClusterCIDR      *net.IPNet
	NodeCIDRMaskSize int
	// SchedulerConfig, when set, is what kube's scheduler runs with
	// (profiles, percentageOfNodesToScore...) instead of its defaults.
	SchedulerConfig *SchedulerConfig
	// ClusterName makes node IDs differ between instances.
	ClusterName string
	// UnpullableImages are patterns of images whose pulls fail (see
	// NewImagePolicy), besides those at reserved registry names.
	UnpullableImages []string
	// Config is the admin's; each component gets a copy with its own
	// user agent.
	Config *rest.Config
	// NodeConfig returns the client config a node's kubelet acts with.
	NodeConfig func(node string) (*rest.Config, error)
	// Local reads the server's watch caches in-process.
	Local  controllers.Local
	Logger *slog.Logger
}

// Machinery is the simulated nodes, the scheduler and the workload
// controllers of one devplane. It runs while its replica leads.
type Machinery struct {
	opts   Options
	logger *slog.Logger
	bootID string
	images *ImagePolicy

	synced  atomic.Bool
	running atomic.Bool

	mu      sync.Mutex
	nodes   []*simNode
	kubelet *kubelet
	status  Status

	execState
}

// Status is what the dashboard shows.
type Status struct {
	Nodes, ReadyNodes int
	Pods, RunningPods int
	Err               error
}

// New checks the options; nothing runs before Run.
func New(opts Options) (*Machinery, error) {
	if opts.Nodes < 1 {
		return nil, fmt.Errorf("workloads need at least one node")
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	if err := CheckNodes(opts.Nodes, opts.NodeCapacity, opts.ClusterCIDR, opts.NodeCIDRMaskSize); err != nil {
		return nil, err
	}
	images, err := NewImagePolicy(opts.UnpullableImages)
	if err != nil {
		return nil, err
	}
	return &Machinery{opts: opts, logger: opts.Logger, images: images, bootID: string(utilrand.String(8)) + "-" + fmt.Sprint(time.Now().Unix())}, nil
}

// The pod network's defaults: kind's and kube-controller-manager's.
const (
	DefaultClusterCIDR      = "10.244.0.0/16"
	DefaultNodeCIDRMaskSize = 24
)

// CheckNodes reports whether n nodes of the given capacity (over the
// defaults) fit in the pod network cluster, a block of maskSize bits each.
func CheckNodes(n int, capacity corev1.ResourceList, cluster *net.IPNet, maskSize int) error {
	caps := (&Machinery{opts: Options{NodeCapacity: capacity}}).capacity()
	_, err := nodeCIDRs(n, caps.Pods().Value(), cluster, maskSize)
	return err
}

// Name is the machinery's name among the controllers.
func (m *Machinery) Name() string { return "workloads" }

// HasSynced reports whether the current run's nodes are registered and
// every informer has synced.
func (m *Machinery) HasSynced() bool { return m.synced.Load() }

// Status summarises nodes and pods.
func (m *Machinery) Status() Status {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.status
}

func configFor(cfg *rest.Config, name string) *rest.Config {
	c := rest.CopyConfig(cfg)
	c.UserAgent = name
	// In-process components talk to their own server: no client-side
	// throttling (kube-controller-manager's 20 QPS is for shared clusters).
	c.QPS, c.Burst = -1, -1
	// Protobuf, as kube's kubelet, scheduler and controller manager speak
	// to the API by default (--kube-api-content-type): JSON bodies cost
	// both sides several times as much (clients of other APIs, dynamic
	// and scale, choose JSON themselves).
	c.ContentType = runtime.ContentTypeProtobuf
	c.AcceptContentTypes = runtime.ContentTypeProtobuf + "," + runtime.ContentTypeJSON
	return c
}

// Run registers the nodes, starts the kubelets, the scheduler and the
// controllers, and returns once ctx ended and all of them stopped. It may
// be called again (a replica can lose and regain leadership).
func (m *Machinery) Run(ctx context.Context) error {
	m.synced.Store(false)
	m.running.Store(true)
	defer m.running.Store(false)
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()

	admin, err := kubernetes.NewForConfig(configFor(m.opts.Config, "devplane/workloads"))
	if err != nil {
		return err
	}
	caps := m.capacity()
	cidrs, err := nodeCIDRs(m.opts.Nodes, caps.Pods().Value(), m.opts.ClusterCIDR, m.opts.NodeCIDRMaskSize)
	if err != nil {
		return err
	}
	nodes := make([]*simNode, m.opts.Nodes)
	for i := range nodes {
		name := NodeName(i + 1)
		cfg, err := m.opts.NodeConfig(name)
		if err != nil {
			return err
		}
		client, err := newNodeClient(configFor(cfg, "kubelet/"+kubeletVersion()+" (devplane simulated)"))
		if err != nil {
			return err
		}
		nodes[i] = &simNode{name: name, index: i + 1, hostIP: hostIPOf(i + 1), podCIDR: cidrs[i], client: client, ips: newIPPool(cidrs[i])}
	}

	broadcaster := record.NewBroadcaster(record.WithContext(ctx))
	broadcaster.StartRecordingToSink(&typedcorev1.EventSinkImpl{Interface: admin.CoreV1().Events("")})
	defer broadcaster.Shutdown()
	for _, n := range nodes {
		n.recorder = broadcaster.NewRecorder(scheme.Scheme, corev1.EventSource{Component: "kubelet", Host: n.name})
	}
	m.mu.Lock()
	m.nodes = nodes
	m.mu.Unlock()

	// One factory for the kubelets, the controllers and the scheduler; the
	// scheduler's pods informer is its own (it leaves finished pods out).
	factory := newLocalFactory(admin, m.opts.Local, 12*time.Hour, "", nil)
	k, err := newKubelet(m, nodes, factory.Core().V1().Pods().Informer())
	if err != nil {
		return err
	}
	k.api = admin
	m.mu.Lock()
	m.kubelet = k
	m.mu.Unlock()

	var wg sync.WaitGroup
	defer wg.Wait()
	defer cancel()

	if err := m.registerNodes(ctx, nodes); err != nil {
		return err
	}
	wg.Go(func() { m.heartbeats(ctx, nodes) })

	// The shared factory starts in startControllers, once every kube
	// controller has added its handlers: a handler added to a running
	// informer is called at once, and the disruption controller's pod
	// handler read its PDB lister before setting it (a nil dereference
	// when pods already existed).
	var waits []func() bool
	waits = append(waits, factory.Core().V1().Pods().Informer().HasSynced)
	wg.Go(func() { k.run(ctx) })

	sched, err := m.startScheduler(ctx, &wg, factory)
	if err != nil {
		return fmt.Errorf("starting the scheduler: %w", err)
	}
	waits = append(waits, sched...)
	provisionerEvents := broadcaster.NewRecorder(scheme.Scheme, corev1.EventSource{Component: Provisioner})
	ctrl, err := m.startControllers(ctx, &wg, admin, factory, provisionerEvents)
	if err != nil {
		return fmt.Errorf("starting the workload controllers: %w", err)
	}
	waits = append(waits, ctrl...)
	if ns := factory.NotServed(); len(ns) > 0 {
		m.logger.Info("resources not served here: their informers stay empty", "resources", ns)
	}
	wg.Go(func() {
		// Every few milliseconds, not cache.WaitForCacheSync's 100ms: the
		// machinery is ready within a second of start-up.
		err := wait.PollUntilContextCancel(ctx, 5*time.Millisecond, true, func(context.Context) (bool, error) {
			for _, w := range waits {
				if !w() {
					return false, nil
				}
			}
			return true, nil
		})
		if err == nil {
			m.synced.Store(true)
		}
	})
	wg.Go(func() { m.watchStatus(ctx, factory) })
	<-ctx.Done()
	return nil
}

// registerNodes registers every node and creates its Lease, a few nodes
// at a time (one at a time, 1,000 nodes would take seconds).
func (m *Machinery) registerNodes(ctx context.Context, nodes []*simNode) error {
	const parallel = 8
	work := make(chan *simNode)
	errs := make(chan error, parallel)
	var wg sync.WaitGroup
	for range parallel {
		wg.Go(func() {
			for n := range work {
				err := retry(ctx, func() error { return m.registerNode(ctx, n) })
				if err == nil {
					err = retry(ctx, func() error { return m.renewLease(ctx, n) })
				}
				if err != nil {
					errs <- err
					return
				}
			}
		})
	}
	var err error
feed:
	for _, n := range nodes {
		select {
		case work <- n:
		case err = <-errs:
			break feed
		}
	}
	close(work)
	wg.Wait()
	if err == nil && len(errs) > 0 {
		err = <-errs
	}
	return err
}

// retry calls f until it succeeds or ctx ends, backing off a little.
func retry(ctx context.Context, f func() error) error {
	delay := 50 * time.Millisecond
	for {
		err := f()
		if err == nil || ctx.Err() != nil {
			return err
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(delay):
		}
		delay = min(2*delay, 2*time.Second)
	}
}

// watchStatus keeps the dashboard's summary fresh: at most once a second,
// and only after a node or pod changed (counting 1,000 idle nodes every
// second was a fortieth of their idle CPU).
func (m *Machinery) watchStatus(ctx context.Context, factory *localFactory) {
	pods := factory.Core().V1().Pods()
	nodes := factory.Core().V1().Nodes()
	var changed atomic.Bool
	changed.Store(true)
	mark := cache.ResourceEventHandlerFuncs{
		AddFunc:    func(any) { changed.Store(true) },
		UpdateFunc: func(any, any) { changed.Store(true) },
		DeleteFunc: func(any) { changed.Store(true) },
	}
	for _, informer := range []cache.SharedIndexInformer{pods.Informer(), nodes.Informer()} {
		registration, err := informer.AddEventHandler(mark)
		if err != nil {
			m.logger.Warn("workloads status: cannot follow changes", "err", err)
			continue
		}
		defer func() { _ = informer.RemoveEventHandler(registration) }()
	}
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	for {
		if changed.Swap(false) {
			m.countStatus(pods.Lister(), nodes.Lister())
		}
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}

// countStatus counts nodes and pods for Status.
func (m *Machinery) countStatus(pods corelisters.PodLister, nodes corelisters.NodeLister) {
	var st Status
	if all, err := nodes.List(everything); err == nil {
		for _, n := range all {
			st.Nodes++
			for _, c := range n.Status.Conditions {
				if c.Type == corev1.NodeReady && c.Status == corev1.ConditionTrue {
					st.ReadyNodes++
				}
			}
		}
	}
	if all, err := pods.List(everything); err == nil {
		for _, p := range all {
			st.Pods++
			if p.Status.Phase == corev1.PodRunning {
				st.RunningPods++
			}
		}
	}
	m.mu.Lock()
	m.status = st
	m.mu.Unlock()
}

var everything = labels.Everything()

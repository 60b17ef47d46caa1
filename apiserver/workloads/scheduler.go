package workloads

import (
	"cmp"
	"context"
	"fmt"
	"os"
	"sync"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/events"
	"k8s.io/kubernetes/pkg/scheduler"
	schedconfig "k8s.io/kubernetes/pkg/scheduler/apis/config"
	schedscheme "k8s.io/kubernetes/pkg/scheduler/apis/config/scheme"
	schedvalidation "k8s.io/kubernetes/pkg/scheduler/apis/config/validation"
	"k8s.io/kubernetes/pkg/scheduler/profile"
	"sigs.k8s.io/yaml"
)

// SchedulerConfig is a KubeSchedulerConfiguration, as kube-scheduler's
// --config file gives it.
type SchedulerConfig = schedconfig.KubeSchedulerConfiguration

// LoadSchedulerConfig reads a KubeSchedulerConfiguration file
// (kubescheduler.config.k8s.io/v1), defaulted and validated as
// kube-scheduler reads its --config.
func LoadSchedulerConfig(path string) (*SchedulerConfig, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("--scheduler-config: %w", err)
	}
	var kind metav1.TypeMeta
	if err := yaml.Unmarshal(data, &kind); err == nil && kind.Kind != "KubeSchedulerConfiguration" {
		return nil, fmt.Errorf("--scheduler-config %s holds a %s: want a KubeSchedulerConfiguration (kubescheduler.config.k8s.io/v1)", path, cmp.Or(kind.Kind, "document without a kind"))
	}
	obj, _, err := schedscheme.Codecs.UniversalDecoder().Decode(data, nil, nil)
	if err != nil {
		return nil, fmt.Errorf("--scheduler-config %s: %w", path, err)
	}
	cfg, ok := obj.(*SchedulerConfig)
	if !ok {
		return nil, fmt.Errorf("--scheduler-config %s: not a KubeSchedulerConfiguration", path)
	}
	if err := schedvalidation.ValidateKubeSchedulerConfiguration(cfg); err != nil {
		return nil, fmt.Errorf("--scheduler-config %s: %w", path, err)
	}
	return cfg, nil
}

// startScheduler runs kube's scheduler with its default profile (node
// affinity and selectors, taints and tolerations, resource fit, topology
// spread, volume binding, ...), or the profiles of --scheduler-config. It
// returns what to wait on for sync.
func (m *Machinery) startScheduler(ctx context.Context, wg *sync.WaitGroup, shared *localFactory) ([]func() bool, error) {
	client, err := kubernetes.NewForConfig(configFor(m.opts.Config, "kube-scheduler/devplane"))
	if err != nil {
		return nil, err
	}
	// kube-scheduler's pods informer leaves out finished pods: they hold
	// no resources on their node. Its other informers are the shared ones
	// (started with the controllers').
	factory := newLocalFactory(client, m.opts.Local, 0, "status.phase!=Succeeded,status.phase!=Failed", shared)
	broadcaster := events.NewBroadcaster(&events.EventSinkImpl{Interface: client.EventsV1()})
	opts := []scheduler.Option{
		// A dev cluster retries unschedulable pods sooner than kube's
		// 1s/10s back-off when something changes.
		scheduler.WithPodInitialBackoffSeconds(1),
		scheduler.WithPodMaxBackoffSeconds(5),
	}
	if cfg := m.opts.SchedulerConfig; cfg != nil {
		// What kube-scheduler takes from its --config, the file's
		// back-off included.
		opts = []scheduler.Option{
			scheduler.WithProfiles(cfg.Profiles...),
			scheduler.WithPercentageOfNodesToScore(cfg.PercentageOfNodesToScore),
			scheduler.WithParallelism(cfg.Parallelism),
			scheduler.WithExtenders(cfg.Extenders...),
			scheduler.WithPodInitialBackoffSeconds(cfg.PodInitialBackoffSeconds),
			scheduler.WithPodMaxBackoffSeconds(cfg.PodMaxBackoffSeconds),
		}
	}
	sched, err := scheduler.New(ctx, client, factory, nil, profile.NewRecorderFactory(broadcaster), opts...)
	if err != nil {
		return nil, err
	}
	broadcaster.StartRecordingToSink(ctx.Done())
	factory.Start(ctx.Done())
	synced := make(chan struct{})
	wg.Go(func() {
		defer broadcaster.Shutdown()
		factory.WaitForCacheSync(ctx.Done())
		if err := sched.WaitForHandlersSync(ctx); err != nil {
			return
		}
		close(synced)
		sched.Run(ctx)
	})
	return []func() bool{func() bool {
		select {
		case <-synced:
			return true
		default:
			return false
		}
	}}, nil
}

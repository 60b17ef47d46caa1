package workloads

import (
	"context"
	"sync"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/events"
	"k8s.io/kubernetes/pkg/scheduler"
	"k8s.io/kubernetes/pkg/scheduler/profile"
)

// startScheduler runs kube's scheduler with its default profile (node
// affinity and selectors, taints and tolerations, resource fit, topology
// spread, volume binding, ...). It returns what to wait on for sync.
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
	sched, err := scheduler.New(ctx, client, factory, nil, profile.NewRecorderFactory(broadcaster),
		// A dev cluster retries unschedulable pods sooner than kube's
		// 1s/10s back-off when something changes.
		scheduler.WithPodInitialBackoffSeconds(1),
		scheduler.WithPodMaxBackoffSeconds(5),
	)
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

package workloads

import (
	"context"
	"sync"
	"time"

	utilfeature "k8s.io/apiserver/pkg/util/feature"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	schedulinginformers "k8s.io/client-go/informers/scheduling/v1beta1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/restmapper"
	"k8s.io/client-go/scale"
	"k8s.io/client-go/tools/record"
	"k8s.io/client-go/util/flowcontrol"
	"k8s.io/klog/v2"
	"k8s.io/kubernetes/pkg/controller/cronjob"
	"k8s.io/kubernetes/pkg/controller/daemon"
	"k8s.io/kubernetes/pkg/controller/deployment"
	"k8s.io/kubernetes/pkg/controller/disruption"
	"k8s.io/kubernetes/pkg/controller/endpoint"
	"k8s.io/kubernetes/pkg/controller/endpointslice"
	"k8s.io/kubernetes/pkg/controller/endpointslicemirroring"
	"k8s.io/kubernetes/pkg/controller/job"
	"k8s.io/kubernetes/pkg/controller/podautoscaler"
	"k8s.io/kubernetes/pkg/controller/podautoscaler/metrics"
	"k8s.io/kubernetes/pkg/controller/podgc"
	"k8s.io/kubernetes/pkg/controller/replicaset"
	"k8s.io/kubernetes/pkg/controller/replication"
	"k8s.io/kubernetes/pkg/controller/statefulset"
	"k8s.io/kubernetes/pkg/controller/tainteviction"
	"k8s.io/kubernetes/pkg/controller/ttlafterfinished"
	"k8s.io/kubernetes/pkg/controller/volume/ephemeral"
	"k8s.io/kubernetes/pkg/controller/volume/persistentvolume"
	"k8s.io/kubernetes/pkg/controller/volume/pvcprotection"
	"k8s.io/kubernetes/pkg/controller/volume/pvprotection"
	"k8s.io/kubernetes/pkg/features"
	resourceclient "k8s.io/metrics/pkg/client/clientset/versioned/typed/metrics/v1beta1"
	"k8s.io/metrics/pkg/client/custom_metrics"
	"k8s.io/metrics/pkg/client/external_metrics"
)

// Workers per controller: fewer than kube-controller-manager's 5, enough
// for a dev cluster's objects (each goroutine costs memory while idle).
const (
	concurrentSyncs      = 2
	terminatedPodGCLimit = 12500 // kube's --terminated-pod-gc-threshold
)

// The HPA controller's settings, kube-controller-manager's defaults.
const (
	hpaSyncPeriod             = 15 * time.Second
	hpaDownscaleStabilization = 5 * time.Minute
	hpaTolerance              = 0.1
	hpaCPUInitialization      = 5 * time.Minute
	hpaInitialReadinessDelay  = 30 * time.Second
)

// startControllers runs kube's workload controllers on the shared factory,
// each with a client of its own name (kube-controller-manager's). Our own
// controllers (GC, namespace, service accounts, quota) already run in
// apiserver/controllers and are not started again. It returns what to
// wait on for sync.
func (m *Machinery) startControllers(ctx context.Context, wg *sync.WaitGroup, admin kubernetes.Interface, f *localFactory, recorder record.EventRecorder) ([]func() bool, error) {
	clientFor := func(name string) (kubernetes.Interface, error) {
		return kubernetes.NewForConfig(configFor(m.opts.Config, "kube-controller-manager/"+name))
	}
	var runs []func()
	add := func(name string, build func(client kubernetes.Interface) (func(), error)) error {
		client, err := clientFor(name)
		if err != nil {
			return err
		}
		run, err := build(client)
		if err != nil {
			return err
		}
		runs = append(runs, run)
		return nil
	}
	core, apps, batch := f.Core().V1(), f.Apps().V1(), f.Batch().V1()
	// One RESTMapper for the controllers that need one, as
	// kube-controller-manager shares its own; each its own scale client.
	mapper := restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(admin.Discovery()))
	scaleClient := func(name string, c kubernetes.Interface) (scale.ScalesGetter, error) {
		return scale.NewForConfig(configFor(m.opts.Config, "kube-controller-manager/"+name), mapper,
			dynamic.LegacyAPIPathResolverFunc, scale.NewDiscoveryScaleKindResolver(c.Discovery()))
	}

	steps := []struct {
		name  string
		build func(kubernetes.Interface) (func(), error)
	}{
		{"deployment-controller", func(c kubernetes.Interface) (func(), error) {
			dc, err := deployment.NewDeploymentController(ctx, apps.Deployments(), apps.ReplicaSets(), core.Pods(), c)
			return func() { dc.Run(ctx, concurrentSyncs) }, err
		}},
		{"replicaset-controller", func(c kubernetes.Interface) (func(), error) {
			rsc := replicaset.NewReplicaSetController(ctx, apps.ReplicaSets(), core.Pods(), c, replicaset.BurstReplicas)
			return func() { rsc.Run(ctx, concurrentSyncs) }, nil
		}},
		{"replication-controller", func(c kubernetes.Interface) (func(), error) {
			rm := replication.NewReplicationManager(ctx, core.Pods(), core.ReplicationControllers(), c, replication.BurstReplicas)
			return func() { rm.Run(ctx, concurrentSyncs) }, nil
		}},
		{"statefulset-controller", func(c kubernetes.Interface) (func(), error) {
			ssc := statefulset.NewStatefulSetController(ctx, core.Pods(), apps.StatefulSets(), core.PersistentVolumeClaims(), apps.ControllerRevisions(), c)
			return func() { ssc.Run(ctx, concurrentSyncs) }, nil
		}},
		{"daemon-set-controller", func(c kubernetes.Interface) (func(), error) {
			dsc, err := daemon.NewDaemonSetsController(ctx, apps.DaemonSets(), apps.ControllerRevisions(), core.Pods(), core.Nodes(), c,
				flowcontrol.NewBackOff(time.Second, 15*time.Minute))
			if err != nil {
				return nil, err
			}
			return func() { dsc.Run(ctx, 2) }, nil
		}},
		{"job-controller", func(c kubernetes.Interface) (func(), error) {
			var workloads schedulinginformers.WorkloadInformer
			var podGroups schedulinginformers.PodGroupInformer
			if utilfeature.DefaultFeatureGate.Enabled(features.WorkloadWithJob) {
				workloads, podGroups = f.Scheduling().V1beta1().Workloads(), f.Scheduling().V1beta1().PodGroups()
			}
			jc, err := job.NewController(ctx, c, core.Pods(), batch.Jobs(), workloads, podGroups)
			if err != nil {
				return nil, err
			}
			return func() { jc.Run(ctx, concurrentSyncs) }, nil
		}},
		{"cronjob-controller", func(c kubernetes.Interface) (func(), error) {
			cj, err := cronjob.NewControllerV2(ctx, batch.Jobs(), batch.CronJobs(), c)
			if err != nil {
				return nil, err
			}
			return func() { cj.Run(ctx, concurrentSyncs) }, nil
		}},
		{"ttl-after-finished-controller", func(c kubernetes.Interface) (func(), error) {
			tc := ttlafterfinished.New(ctx, batch.Jobs(), c)
			return func() { tc.Run(ctx, concurrentSyncs) }, nil
		}},
		{"endpoint-controller", func(c kubernetes.Interface) (func(), error) {
			ec := endpoint.NewEndpointController(ctx, core.Pods(), core.Services(), core.Endpoints(), c, 0)
			return func() { ec.Run(ctx, concurrentSyncs) }, nil
		}},
		{"endpointslice-controller", func(c kubernetes.Interface) (func(), error) {
			ec := endpointslice.NewController(ctx, core.Pods(), core.Services(), core.Nodes(), f.Discovery().V1().EndpointSlices(), 100, c, 0)
			return func() { ec.Run(ctx, concurrentSyncs) }, nil
		}},
		{"endpointslicemirroring-controller", func(c kubernetes.Interface) (func(), error) {
			ec := endpointslicemirroring.NewController(ctx, core.Endpoints(), f.Discovery().V1().EndpointSlices(), core.Services(), 1000, c, 0)
			return func() { ec.Run(ctx, concurrentSyncs) }, nil
		}},
		{"disruption-controller", func(c kubernetes.Interface) (func(), error) {
			sc, err := scaleClient("disruption-controller", c)
			if err != nil {
				return nil, err
			}
			dc := disruption.NewDisruptionController(ctx, core.Pods(), f.Policy().V1().PodDisruptionBudgets(), core.ReplicationControllers(),
				apps.ReplicaSets(), apps.Deployments(), apps.StatefulSets(), c, mapper, sc, c.Discovery())
			return func() { dc.Run(ctx, concurrentSyncs) }, nil
		}},
		{"horizontal-pod-autoscaler", func(c kubernetes.Interface) (func(), error) {
			// As kube-controller-manager wires it. Without a metrics API
			// (devplane serves none; install metrics-server's APIService
			// for one) HPAs still hold their targets within min and max
			// and say why they cannot do more, as on any such cluster.
			cfg := configFor(m.opts.Config, "kube-controller-manager/horizontal-pod-autoscaler")
			sc, err := scaleClient("horizontal-pod-autoscaler", c)
			if err != nil {
				return nil, err
			}
			resources, err := resourceclient.NewForConfig(cfg)
			if err != nil {
				return nil, err
			}
			external, err := external_metrics.NewForConfig(cfg)
			if err != nil {
				return nil, err
			}
			apiVersions := custom_metrics.NewAvailableAPIsGetter(c.Discovery())
			client := metrics.NewRESTMetricsClient(resources, custom_metrics.NewForConfig(cfg, mapper, apiVersions), external)
			hc := podautoscaler.NewHorizontalController(ctx, c.CoreV1(), sc, c.AutoscalingV2(), mapper, client,
				f.Autoscaling().V2().HorizontalPodAutoscalers(), core.Pods(),
				hpaSyncPeriod, hpaDownscaleStabilization, hpaTolerance, hpaCPUInitialization, hpaInitialReadinessDelay)
			return func() {
				go custom_metrics.PeriodicallyInvalidate(apiVersions, hpaSyncPeriod, ctx.Done())
				hc.Run(ctx, concurrentSyncs)
			}, nil
		}},
		{"ephemeral-volume-controller", func(c kubernetes.Interface) (func(), error) {
			// A pod's generic ephemeral volumes become claims it owns.
			ec, err := ephemeral.NewController(ctx, c, core.Pods(), core.PersistentVolumeClaims())
			if err != nil {
				return nil, err
			}
			return func() { ec.Run(ctx, concurrentSyncs) }, nil
		}},
		{"pvc-protection-controller", func(c kubernetes.Interface) (func(), error) {
			// They take off the finalizers admission's
			// StorageObjectInUseProtection puts on: a claim's once no pod
			// uses it, a volume's once it is no longer bound.
			pc, err := pvcprotection.NewPVCProtectionController(klog.FromContext(ctx), core.PersistentVolumeClaims(), core.Pods(), c)
			if err != nil {
				return nil, err
			}
			return func() { pc.Run(ctx, 1) }, nil
		}},
		{"pv-protection-controller", func(c kubernetes.Interface) (func(), error) {
			pc, err := pvprotection.NewPVProtectionController(klog.FromContext(ctx), core.PersistentVolumes(), c)
			if err != nil {
				return nil, err
			}
			return func() { pc.Run(ctx, 1) }, nil
		}},
		{"taint-eviction-controller", func(c kubernetes.Interface) (func(), error) {
			// Pods that do not tolerate a node's NoExecute taints are
			// deleted (after their tolerationSeconds).
			tc, err := tainteviction.New(ctx, c, core.Pods(), core.Nodes(), "taint-eviction-controller")
			if err != nil {
				return nil, err
			}
			return func() { tc.Run(ctx) }, nil
		}},
		{"pod-garbage-collector", func(c kubernetes.Interface) (func(), error) {
			gc := podgc.NewPodGC(ctx, c, core.Pods(), core.Nodes(), terminatedPodGCLimit)
			return func() { gc.Run(ctx) }, nil
		}},
		{"persistent-volume-binder", func(c kubernetes.Interface) (func(), error) {
			// No in-tree volume plugins: claims of the default class are
			// provisioned by ours (provisioner.go), as by a CSI driver.
			pv, err := persistentvolume.NewController(ctx, persistentvolume.ControllerParameters{
				KubeClient:                c,
				SyncPeriod:                15 * time.Second,
				VolumeInformer:            core.PersistentVolumes(),
				ClaimInformer:             core.PersistentVolumeClaims(),
				ClassInformer:             f.Storage().V1().StorageClasses(),
				PodInformer:               core.Pods(),
				NodeInformer:              core.Nodes(),
				EnableDynamicProvisioning: true,
			})
			if err != nil {
				return nil, err
			}
			return func() { pv.Run(ctx) }, nil
		}},
	}
	for _, s := range steps {
		if err := add(s.name, s.build); err != nil {
			return nil, err
		}
	}
	prov, err := newProvisioner(m, admin, f, recorder)
	if err != nil {
		return nil, err
	}
	runs = append(runs, func() { prov.run(ctx) })

	f.Start(ctx.Done())
	for _, run := range runs {
		wg.Go(run)
	}
	return f.syncedFuncs(), nil
}

package controlplane

import (
	"context"
	"errors"
	"fmt"
	"time"

	"k8s.io/client-go/rest"

	"github.com/devplane/devplane/apiserver/registry/core/pod"
	"github.com/devplane/devplane/apiserver/workloads"
)

// SectionWorkloads groups the workload machinery's rows on the dashboard.
const SectionWorkloads = "workloads"

const startWorkloadsHook = "start-workloads"

// installWorkloads adds the start-workloads post-start hook: simulated
// nodes and kubelets, kube's scheduler and workload controllers. They run
// beside the controllers, on the replica leading them, and start in the
// background: the hook returns at once, so /readyz does not wait for them.
// With no nodes nothing is built or started.
func (cp *ControlPlane) installWorkloads() error {
	if cp.opts.Nodes <= 0 || cp.controllers == nil {
		return nil
	}
	var sched *workloads.SchedulerConfig
	if cp.opts.SchedulerConfig != "" {
		var err error
		if sched, err = workloads.LoadSchedulerConfig(cp.opts.SchedulerConfig); err != nil {
			return err
		}
	}
	m, err := workloads.New(workloads.Options{
		SchedulerConfig:  sched,
		Nodes:            cp.opts.Nodes,
		NodeCapacity:     cp.opts.NodeCapacity,
		ClusterCIDR:      cp.opts.ClusterCIDR,
		NodeCIDRMaskSize: cp.opts.NodeCIDRMaskSize,
		UnpullableImages: cp.opts.UnpullableImages,
		ClusterName:      cp.opts.Name,
		Config:           cp.RESTConfig(),
		NodeConfig:       cp.nodeConfig,
		Local:            cp.LocalReader,
		Logger:           cp.logger.With("component", "workloads"),
	})
	if err != nil {
		return err
	}
	cp.workloads = m
	return cp.Core.AddPostStartHook(startWorkloadsHook, func(context.Context) error {
		cp.controllers.RunWhileLeading(func(ctx context.Context) {
			for ctx.Err() == nil {
				if err := m.Run(ctx); err != nil && !errors.Is(err, context.Canceled) && ctx.Err() == nil {
					cp.logger.Error("workloads stopped, restarting", "err", err)
				}
				select {
				case <-ctx.Done():
				case <-time.After(time.Second):
				}
			}
		})
		return nil
	})
}

// nodeConfig is the client a simulated node's kubelet uses: the user
// system:node:<name> in system:nodes, as kube's kubelets are. It
// impersonates that user over the admin's connection, which every node
// shares (a client certificate each meant a TLS connection each, held at
// both ends: with 1,000 nodes, ~200 MB of the idle server's 374 MB went
// with them and their clients). kube authorizes kubelets
// with the Node authorizer (the bootstrap system:node ClusterRoleBinding
// has no subjects); devplane authorizes with RBAC alone, so the identity is
// in system:masters as well.
func (cp *ControlPlane) nodeConfig(node string) (*rest.Config, error) {
	cfg := cp.RESTConfig()
	cfg.Impersonate = rest.ImpersonationConfig{UserName: "system:node:" + node, Groups: []string{"system:nodes", "system:masters"}}
	return cfg, nil
}

// workloadsItems are the dashboard's rows for the machinery.
func (cp *ControlPlane) workloadsItems() []Item {
	if cp.workloads == nil {
		return nil
	}
	st := cp.workloads.Status()
	it := Item{Section: SectionWorkloads, Kind: "check", Name: "nodes", State: Running}
	switch {
	case cp.controllers != nil && !cp.controllers.Leading():
		it.State, it.Message = OK, "another replica runs them"
	case cp.workloads.HasSynced() && st.ReadyNodes == cp.opts.Nodes:
		it.State = OK
		it.Message = fmt.Sprintf("%d/%d Ready, %d/%d pods Running", st.ReadyNodes, cp.opts.Nodes, st.RunningPods, st.Pods)
	default:
		it.Message = fmt.Sprintf("%d/%d Ready, starting scheduler and controllers", st.ReadyNodes, cp.opts.Nodes)
	}
	return []Item{it}
}

// WorkloadsSynced reports whether the workload machinery (if any) has
// registered its nodes and synced its informers, or runs on another
// replica.
func (cp *ControlPlane) WorkloadsSynced() bool {
	if cp.workloads == nil || cp.controllers == nil {
		return true
	}
	return !cp.controllers.Leading() || cp.workloads.HasSynced()
}

// podContainers serves pods' logs, exec and attach sessions from the
// simulated kubelets, once they run (nil until then, and with no nodes).
func (cp *ControlPlane) podContainers() pod.Containers {
	if cp.workloads == nil {
		return nil
	}
	return cp.workloads
}

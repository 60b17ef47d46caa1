package service

import (
	"context"
	"log/slog"
	"net"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/devplane/devplane/apiserver/ipalloc"
	"github.com/devplane/devplane/apiserver/registry"
	"github.com/devplane/devplane/apiserver/request"
)

// Node ports come from kube-apiserver's default range, 30000-32767.
const (
	nodePortBase = 30000
	nodePortSize = 2768
	// serviceRepairInterval is how often allocations nobody owns are freed.
	serviceRepairInterval = 3 * time.Minute
)

// InstallAllocation gives Services cluster IPs from serviceRange and node
// ports, kept in etcd so allocation survives restarts and is shared by
// replicas. repair frees, until ctx ends, what no Service owns (kube's
// start-service-ip-repair).
func InstallAllocation(services *registry.Store, client *clientv3.Client, serviceRange *net.IPNet, logger *slog.Logger) (repair func(ctx context.Context)) {
	allocator := &ipalloc.Services{
		IPs:       ipalloc.NewServiceIPRange(client, serviceRange),
		NodePorts: ipalloc.NewNodePortRange(client, nodePortBase, nodePortSize),
	}
	services.Hooks = registry.Hooks{
		BeforeCreate: func(ctx context.Context, obj runtime.Object) (func(), error) {
			svc, ok := obj.(*corev1.Service)
			if !ok {
				return nil, apierrors.NewBadRequest("not a Service")
			}
			return allocator.OnCreate(ctx, svc)
		},
		BeforeUpdate: func(ctx context.Context, obj, old runtime.Object) (func(), func(), error) {
			svc, ok1 := obj.(*corev1.Service)
			prev, ok2 := old.(*corev1.Service)
			if !ok1 || !ok2 {
				return nil, nil, apierrors.NewBadRequest("not a Service")
			}
			return allocator.OnUpdate(ctx, svc, prev)
		},
		AfterDelete: func(ctx context.Context, obj runtime.Object) {
			if svc, ok := obj.(*corev1.Service); ok {
				if err := allocator.OnDelete(context.WithoutCancel(ctx), svc); err != nil {
					logger.Warn("releasing a deleted Service's addresses; the repair loop will retry", "service", svc.Namespace+"/"+svc.Name, "err", err)
				}
			}
		},
	}
	return func(ctx context.Context) {
		tick := time.NewTicker(serviceRepairInterval)
		defer tick.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
			list, err := services.List(request.AsAPIServer(ctx), "", metav1.ListOptions{})
			if err != nil {
				continue
			}
			items := list.(*corev1.ServiceList).Items
			live := make([]*corev1.Service, len(items))
			for i := range items {
				live[i] = &items[i]
			}
			if _, err := allocator.Repair(ctx, live); err != nil {
				logger.Warn("service address repair", "err", err)
			}
		}
	}
}

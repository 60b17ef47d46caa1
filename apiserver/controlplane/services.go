package controlplane

import (
	"context"
	"time"

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

// serviceAllocation gives Services cluster IPs and node ports kept in etcd,
// so allocation survives restarts and is shared by replicas.
func (cp *ControlPlane) serviceAllocation(services *registry.Store) error {
	allocator := &ipalloc.Services{
		IPs:       ipalloc.NewServiceIPRange(cp.Etcd.Client(), cp.opts.ServiceClusterIPRange),
		NodePorts: ipalloc.NewNodePortRange(cp.Etcd.Client(), nodePortBase, nodePortSize),
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
					cp.logger.Warn("releasing a deleted Service's addresses; the repair loop will retry", "service", svc.Namespace+"/"+svc.Name, "err", err)
				}
			}
		},
	}
	return cp.Core.AddPostStartHook("start-service-ip-repair", func(ctx context.Context) error {
		go func() {
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
					cp.logger.Warn("service address repair", "err", err)
				}
			}
		}()
		return nil
	})
}

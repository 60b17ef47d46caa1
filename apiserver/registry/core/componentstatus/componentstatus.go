// Package componentstatus serves the deprecated componentstatuses (kubectl
// get cs), computed on each read.
package componentstatus

import (
	"context"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/devplane/devplane/apiserver/printers"
	"github.com/devplane/devplane/apiserver/registry"
)

// Components are what componentstatuses report on.
type Components struct {
	// EtcdReady checks etcd's health for real.
	EtcdReady func(ctx context.Context) error
	// ControllersRun and SchedulerRuns say whether the in-process
	// controllers and kube's scheduler run here.
	ControllersRun, SchedulerRuns bool
}

// Install serves componentstatuses: etcd's health checked for real, and the
// scheduler and controller-manager as they are here: in-process, or not
// run at all.
func Install(reg *registry.Registry, components Components) {
	gvr := corev1.SchemeGroupVersion.WithResource("componentstatuses")
	reg.Add(&registry.Resource{
		GVR:        gvr,
		Kind:       "ComponentStatus",
		ListKind:   "ComponentStatusList",
		Singular:   "componentstatus",
		ShortNames: []string{"cs"},
		Verbs:      []string{"get", "list"},
		New:        func() runtime.Object { return &corev1.ComponentStatus{} },
		NewList:    func() runtime.Object { return &corev1.ComponentStatusList{} },
		Table:      printers.For(gvr.GroupResource()),
		Read: &registry.VirtualRead{
			Warning: "v1 ComponentStatus is deprecated in v1.19+",
			Get: func(ctx context.Context, name string) (runtime.Object, error) {
				for _, cs := range components.statuses(ctx) {
					if cs.Name == name {
						return &cs, nil
					}
				}
				return nil, apierrors.NewNotFound(gvr.GroupResource(), name)
			},
			List: func(ctx context.Context) (runtime.Object, error) {
				return &corev1.ComponentStatusList{Items: components.statuses(ctx)}, nil
			},
		},
	})
}

func (c Components) statuses(ctx context.Context) []corev1.ComponentStatus {
	status := func(name string, err error, down string) corev1.ComponentStatus {
		c := corev1.ComponentCondition{Type: corev1.ComponentHealthy, Status: corev1.ConditionTrue, Message: "ok"}
		switch {
		case err != nil:
			c.Status, c.Message, c.Error = corev1.ConditionFalse, "", err.Error()
		case down != "":
			c.Status, c.Message = corev1.ConditionFalse, down
		}
		return corev1.ComponentStatus{TypeMeta: metav1.TypeMeta{Kind: "ComponentStatus", APIVersion: "v1"},
			ObjectMeta: metav1.ObjectMeta{Name: name}, Conditions: []corev1.ComponentCondition{c}}
	}
	checkCtx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	var controllers, scheduler string
	if !c.ControllersRun {
		controllers = "not run: devplane was started without its controllers"
	}
	if !c.SchedulerRuns {
		scheduler = "not run: devplane was started with no nodes (--nodes 0), so nothing is scheduled"
	}
	return []corev1.ComponentStatus{
		status("controller-manager", nil, controllers),
		status("etcd-0", c.EtcdReady(checkCtx), ""),
		status("scheduler", nil, scheduler),
	}
}

// Package deployment is kube's deployment strategy where it differs from
// the generic store's: a status write may not change the labels (the
// annotations it may: the controller writes the revision so).
package deployment

import (
	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/devplane/devplane/apiserver/registry"
)

// Configure gives the generic strategy the deployment's differences.
func Configure(s *registry.Strategy) {
	s.StatusResetFields = []string{"metadata.labels"}
	s.PrepareStatusUpdate = func(obj, old runtime.Object) {
		d, ok1 := obj.(*appsv1.Deployment)
		prev, ok2 := old.(*appsv1.Deployment)
		if ok1 && ok2 {
			d.Labels = prev.Labels
		}
	}
}

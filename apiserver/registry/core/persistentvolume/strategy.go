// Package persistentvolume is kube's persistent volume strategy where it
// differs from the generic store's: the server stamps each phase change.
package persistentvolume

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/devplane/devplane/apiserver/registry"
)

// Configure gives the generic strategy the persistent volume's differences.
func Configure(s *registry.Strategy) {
	s.PrepareForCreate = func(obj runtime.Object) {
		if pv, ok := obj.(*corev1.PersistentVolume); ok {
			now := metav1.Now()
			pv.Status.LastPhaseTransitionTime = &now
		}
	}
	s.PrepareStatusUpdate = stampPhaseTransition
}

// stampPhaseTransition keeps lastPhaseTransitionTime while the phase stays,
// and sets it when the phase moves and the writer did not.
func stampPhaseTransition(obj, old runtime.Object) {
	pv, ok1 := obj.(*corev1.PersistentVolume)
	prev, ok2 := old.(*corev1.PersistentVolume)
	if !ok1 || !ok2 {
		return
	}
	switch {
	case pv.Status.Phase == prev.Status.Phase && pv.Status.LastPhaseTransitionTime == nil:
		pv.Status.LastPhaseTransitionTime = prev.Status.LastPhaseTransitionTime
	case pv.Status.Phase != prev.Status.Phase &&
		(pv.Status.LastPhaseTransitionTime == nil || pv.Status.LastPhaseTransitionTime.Equal(prev.Status.LastPhaseTransitionTime)):
		now := metav1.Now()
		pv.Status.LastPhaseTransitionTime = &now
	}
}

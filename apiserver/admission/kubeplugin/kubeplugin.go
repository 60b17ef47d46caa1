// Package kubeplugin holds the parts of kube-apiserver's admission plugins
// devplane runs as kube wrote them, because their rules are many and
// exact: the resource quota evaluators (what each pod, service or claim
// counts, and which quota scopes it falls under) and LimitRanger's
// min/max/ratio checks. It is the only admission code that imports
// k8s.io/kubernetes.
package kubeplugin

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	quota "k8s.io/apiserver/pkg/quota/v1"
	"k8s.io/apiserver/pkg/quota/v1/generic"
	"k8s.io/dynamic-resource-allocation/deviceclass/extendedresourcecache"
	"k8s.io/klog/v2"
	evaluators "k8s.io/kubernetes/pkg/quota/v1/evaluator/core"
	"k8s.io/utils/clock"
)

// countedByOldName are the kinds quota also counts by their pre-count/
// names (configmaps, secrets, ...), as kube keeps them.
var countedByOldName = map[schema.GroupVersionResource]corev1.ResourceName{
	corev1.SchemeGroupVersion.WithResource("configmaps"):             corev1.ResourceConfigMaps,
	corev1.SchemeGroupVersion.WithResource("secrets"):                corev1.ResourceSecrets,
	corev1.SchemeGroupVersion.WithResource("resourcequotas"):         corev1.ResourceQuotas,
	corev1.SchemeGroupVersion.WithResource("replicationcontrollers"): corev1.ResourceReplicationControllers,
}

// QuotaEvaluators are kube's evaluators for the kinds quota counts by more
// than their number: pods, services, persistent volume claims, resource
// claims, and the kinds with old names. list serves their usage counts
// (the quota controller's); admission, which counts one object at a time,
// may pass nil. Every other kind is counted by generic.NewObjectCountEvaluator.
func QuotaEvaluators(list quota.ListerForResourceFunc) []quota.Evaluator {
	// No DeviceClass maps an extended resource to devices here: claims
	// count by device class only.
	devices := extendedresourcecache.NewExtendedResourceCache(klog.FromContext(context.Background()))
	out := []quota.Evaluator{
		evaluators.NewPodEvaluator(list, clock.RealClock{}),
		evaluators.NewServiceEvaluator(list),
		evaluators.NewPersistentVolumeClaimEvaluator(list),
		evaluators.NewResourceClaimEvaluator(list, devices, nil, nil),
	}
	for gvr, name := range countedByOldName {
		out = append(out, generic.NewObjectCountEvaluator(gvr.GroupResource(), listByNamespace(list, gvr), name))
	}
	return out
}

// listByNamespace lists gvr through list, or is nil without one.
func listByNamespace(list quota.ListerForResourceFunc, gvr schema.GroupVersionResource) generic.ListFuncByNamespace {
	if list == nil {
		return nil
	}
	return generic.ListResourceUsingListerFunc(list, gvr)
}

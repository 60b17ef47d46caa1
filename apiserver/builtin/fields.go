package builtin

import (
	"fmt"
	"reflect"
	"sort"
	"strconv"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	resourcev1 "k8s.io/api/resource/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
)

// objectFields returns the kind-specific selectable fields, as kube's
// field label lists define them. Kinds without any return an empty set.
func objectFields(obj runtime.Object) fields.Set {
	if isNil(obj) {
		return fields.Set{}
	}
	switch o := obj.(type) {
	case *corev1.Pod:
		// Like kube, status.podIPs is an accepted label but only the first
		// IP is exposed, as status.podIP.
		podIP := ""
		if len(o.Status.PodIPs) > 0 {
			podIP = o.Status.PodIPs[0].IP
		}
		return fields.Set{
			"spec.nodeName":            o.Spec.NodeName,
			"spec.restartPolicy":       string(o.Spec.RestartPolicy),
			"spec.schedulerName":       o.Spec.SchedulerName,
			"spec.serviceAccountName":  o.Spec.ServiceAccountName,
			"spec.hostNetwork":         strconv.FormatBool(o.Spec.HostNetwork),
			"status.phase":             string(o.Status.Phase),
			"status.podIP":             podIP,
			"status.nominatedNodeName": o.Status.NominatedNodeName,
		}
	case *corev1.Event:
		// One stored Event answers both APIs' field selectors (events.k8s.io
		// reads the core objects): both spellings are offered.
		return withEventsV1Names(eventFields(o.InvolvedObject, o.Reason, o.ReportingController, o.Source.Component, o.Type),
			o.ReportingController, o.Source.Component)
	case *eventsv1.Event:
		return withEventsV1Names(eventFields(o.Regarding, o.Reason, o.ReportingController, o.DeprecatedSource.Component, o.Type),
			o.ReportingController, o.DeprecatedSource.Component)
	case *corev1.Secret:
		return fields.Set{"type": string(o.Type)}
	case *corev1.Namespace:
		return fields.Set{"status.phase": string(o.Status.Phase)}
	case *corev1.Node:
		return fields.Set{"spec.unschedulable": strconv.FormatBool(o.Spec.Unschedulable)}
	case *corev1.ReplicationController:
		return fields.Set{"status.replicas": strconv.Itoa(int(o.Status.Replicas))}
	case *corev1.Service:
		return fields.Set{"spec.clusterIP": o.Spec.ClusterIP, "spec.type": string(o.Spec.Type)}
	case *appsv1.ReplicaSet:
		return fields.Set{"status.replicas": strconv.Itoa(int(o.Status.Replicas))}
	case *batchv1.Job:
		return fields.Set{"status.successful": strconv.Itoa(int(o.Status.Succeeded))}
	case *certificatesv1.CertificateSigningRequest:
		return fields.Set{"spec.signerName": o.Spec.SignerName}
	case *resourcev1.ResourceSlice:
		node := ""
		if o.Spec.NodeName != nil {
			node = *o.Spec.NodeName
		}
		return fields.Set{"spec.nodeName": node, "spec.driver": o.Spec.Driver}
	case *certificatesv1.ClusterTrustBundle:
		return fields.Set{"spec.signerName": o.Spec.SignerName}
	case *certificatesv1.PodCertificateRequest:
		return fields.Set{"spec.signerName": o.Spec.SignerName, "spec.podName": o.Spec.PodName, "spec.nodeName": string(o.Spec.NodeName)}
	}
	return fields.Set{}
}

func eventFields(ref corev1.ObjectReference, reason, reportingController, source, eventType string) fields.Set {
	// Events written through events.k8s.io name their reporter only in
	// reportingController; kube's source selector finds them by it.
	if source == "" {
		source = reportingController
	}
	return fields.Set{
		"involvedObject.kind":            ref.Kind,
		"involvedObject.namespace":       ref.Namespace,
		"involvedObject.name":            ref.Name,
		"involvedObject.uid":             string(ref.UID),
		"involvedObject.apiVersion":      ref.APIVersion,
		"involvedObject.resourceVersion": ref.ResourceVersion,
		"involvedObject.fieldPath":       ref.FieldPath,
		"reason":                         reason,
		"reportingComponent":             reportingController,
		"source":                         source,
		"type":                           eventType,
	}
}

// SupportedFields lists the field selector labels kind k accepts, sorted:
// metadata.name, metadata.namespace and the kind's own. The REST layer
// rejects others with "field label not supported: <label>".
func SupportedFields(k Kind) []string {
	set := map[string]bool{"metadata.name": true, "metadata.namespace": true}
	if k.New != nil && k.Fields != nil {
		for f := range k.Fields(k.New()) {
			set[f] = true
		}
	}
	if k.GroupVersion.Group == "" && k.Resource == "pods" {
		set["status.podIPs"] = true
	}
	if k.GroupVersion.Group == "" && k.Resource == "events" {
		// Stored Events carry events.k8s.io's names too; the core API
		// selects by its own.
		for f := range set {
			if strings.HasPrefix(f, "regarding.") || f == "reportingController" || f == "deprecatedSource" {
				delete(set, f)
			}
		}
	}
	out := make([]string, 0, len(set))
	for f := range set {
		out = append(out, f)
	}
	sort.Strings(out)
	return out
}

func metaOf(obj runtime.Object) (metav1.Object, error) {
	if isNil(obj) {
		return nil, fmt.Errorf("nil object")
	}
	return meta.Accessor(obj)
}

// isNil reports a nil interface or a typed nil pointer.
func isNil(obj runtime.Object) bool {
	if obj == nil {
		return true
	}
	v := reflect.ValueOf(obj)
	return v.Kind() == reflect.Pointer && v.IsNil()
}

// eventsV1Names pairs core Event field names with events.k8s.io's (spelled
// out once: each event's set keeps its keys).
var eventsV1Names = [][2]string{
	{"involvedObject.kind", "regarding.kind"},
	{"involvedObject.namespace", "regarding.namespace"},
	{"involvedObject.name", "regarding.name"},
	{"involvedObject.uid", "regarding.uid"},
	{"involvedObject.apiVersion", "regarding.apiVersion"},
	{"involvedObject.resourceVersion", "regarding.resourceVersion"},
	{"involvedObject.fieldPath", "regarding.fieldPath"},
}

// withEventsV1Names adds events.k8s.io's names for the core Event fields.
func withEventsV1Names(set fields.Set, reportingController, source string) fields.Set {
	for _, names := range eventsV1Names {
		set[names[1]] = set[names[0]]
	}
	set["reportingController"] = reportingController
	set["deprecatedSource"] = source
	return set
}

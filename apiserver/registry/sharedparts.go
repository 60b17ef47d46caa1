package registry

import (
	"strings"
	"unique"
	"unsafe"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// shareRepeatedParts is the watch cache's Compact for built-in kinds: the
// parts that many objects repeat become one copy. A ReplicaSet's 10,000
// pods carry the same namespace, generateName, owner reference, creator's
// managedFields entry, container, volume and status spellings, and the
// events one component writes the same managedFields, kinds, reasons and
// often messages; decoded, each object had its own copy of every string
// and of each entry's fieldsV1 JSON (~50 MB of the cache at 10,000 pods
// and their events). Canonical copies come from package unique, so a value
// no cached object holds any more is collected. Only parts that repeat are
// shared (a unique one would cost an entry in unique's map for nothing).
// The object is read-only afterwards, as every cached object is: the
// shared fieldsV1 bytes are a canonical string's.
func shareRepeatedParts(obj runtime.Object) {
	switch o := obj.(type) {
	case *corev1.Pod:
		sharePodSpec(&o.Spec)
		sharePodStatus(&o.Status)
	case *corev1.Event:
		shareEvent(o)
	}
	accessor, ok := obj.(metav1.ObjectMetaAccessor)
	if !ok {
		return
	}
	if m, ok := accessor.GetObjectMeta().(*metav1.ObjectMeta); ok {
		shareObjectMeta(m)
	}
}

func shareObjectMeta(m *metav1.ObjectMeta) {
	m.Namespace = shared(m.Namespace)
	m.GenerateName = shared(m.GenerateName)
	for i := range m.OwnerReferences {
		ref := &m.OwnerReferences[i]
		ref.APIVersion, ref.Kind, ref.Name = shared(ref.APIVersion), shared(ref.Kind), shared(ref.Name)
		ref.UID = sharedString(ref.UID)
	}
	for i := range m.ManagedFields {
		entry := &m.ManagedFields[i]
		entry.Manager, entry.APIVersion, entry.FieldsType = shared(entry.Manager), shared(entry.APIVersion), shared(entry.FieldsType)
		entry.Operation = sharedString(entry.Operation)
		entry.Subresource = shared(entry.Subresource)
		if entry.FieldsV1 != nil && len(entry.FieldsV1.Raw) > 0 {
			entry.FieldsV1.Raw = sharedBytes(entry.FieldsV1.Raw)
		}
	}
}

func sharePodSpec(spec *corev1.PodSpec) {
	spec.NodeName, spec.SchedulerName = shared(spec.NodeName), shared(spec.SchedulerName)
	spec.ServiceAccountName, spec.DeprecatedServiceAccount = shared(spec.ServiceAccountName), shared(spec.DeprecatedServiceAccount)
	spec.RestartPolicy, spec.DNSPolicy = sharedString(spec.RestartPolicy), sharedString(spec.DNSPolicy)
	for _, containers := range [][]corev1.Container{spec.InitContainers, spec.Containers} {
		for i := range containers {
			c := &containers[i]
			c.Name, c.Image, c.TerminationMessagePath = shared(c.Name), shared(c.Image), shared(c.TerminationMessagePath)
			c.ImagePullPolicy, c.TerminationMessagePolicy = sharedString(c.ImagePullPolicy), sharedString(c.TerminationMessagePolicy)
			for j := range c.VolumeMounts {
				c.VolumeMounts[j].MountPath = shared(c.VolumeMounts[j].MountPath)
			}
		}
	}
	for i := range spec.Volumes {
		projected := spec.Volumes[i].Projected
		if projected == nil {
			continue
		}
		for j := range projected.Sources {
			source := &projected.Sources[j]
			if source.ConfigMap != nil {
				source.ConfigMap.Name = shared(source.ConfigMap.Name)
				shareKeyPaths(source.ConfigMap.Items)
			}
			if source.DownwardAPI != nil {
				for k := range source.DownwardAPI.Items {
					item := &source.DownwardAPI.Items[k]
					item.Path = shared(item.Path)
					if item.FieldRef != nil {
						item.FieldRef.APIVersion, item.FieldRef.FieldPath = shared(item.FieldRef.APIVersion), shared(item.FieldRef.FieldPath)
					}
				}
			}
			if source.ServiceAccountToken != nil {
				source.ServiceAccountToken.Path = shared(source.ServiceAccountToken.Path)
			}
		}
	}
	for i := range spec.Tolerations {
		t := &spec.Tolerations[i]
		t.Key, t.Operator, t.Effect = shared(t.Key), sharedString(t.Operator), sharedString(t.Effect)
	}
}

func shareKeyPaths(items []corev1.KeyToPath) {
	for i := range items {
		items[i].Key, items[i].Path = shared(items[i].Key), shared(items[i].Path)
	}
}

func sharePodStatus(status *corev1.PodStatus) {
	status.Phase, status.QOSClass, status.HostIP = sharedString(status.Phase), sharedString(status.QOSClass), shared(status.HostIP)
	for i := range status.HostIPs {
		status.HostIPs[i].IP = shared(status.HostIPs[i].IP)
	}
	for i := range status.Conditions {
		c := &status.Conditions[i]
		c.Type, c.Status, c.Reason = sharedString(c.Type), sharedString(c.Status), shared(c.Reason)
	}
	for _, statuses := range [][]corev1.ContainerStatus{status.InitContainerStatuses, status.ContainerStatuses} {
		for i := range statuses {
			cs := &statuses[i]
			cs.Name, cs.Image, cs.ImageID = shared(cs.Name), shared(cs.Image), shared(cs.ImageID)
			for j := range cs.VolumeMounts {
				cs.VolumeMounts[j].MountPath = shared(cs.VolumeMounts[j].MountPath)
			}
		}
	}
}

func shareEvent(e *corev1.Event) {
	ref := &e.InvolvedObject
	ref.Kind, ref.Namespace, ref.APIVersion, ref.FieldPath = shared(ref.Kind), shared(ref.Namespace), shared(ref.APIVersion), shared(ref.FieldPath)
	e.Reason, e.Type, e.Action = shared(e.Reason), shared(e.Type), shared(e.Action)
	e.Source.Component, e.Source.Host = shared(e.Source.Component), shared(e.Source.Host)
	e.ReportingController, e.ReportingInstance = shared(e.ReportingController), shared(e.ReportingInstance)
	// Messages repeat when they do not name the object ("Started container c").
	if !strings.Contains(e.Message, ref.Name) {
		e.Message = shared(e.Message)
	}
}

func shared(s string) string {
	if s == "" {
		return s
	}
	return unique.Make(s).Value()
}

func sharedString[S ~string](s S) S { return S(shared(string(s))) }

// sharedBytes returns the canonical copy of b's content, as bytes no one
// may write to.
func sharedBytes(b []byte) []byte {
	s := unique.Make(string(b)).Value()
	return unsafe.Slice(unsafe.StringData(s), len(s))
}

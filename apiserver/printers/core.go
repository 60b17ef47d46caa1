package printers

import (
	"fmt"
	"net"
	"sort"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
)

// maxListed is how many addresses or ports a cell lists before "+ N more...".
const maxListed = 3

var serviceColumns = []metav1.TableColumnDefinition{
	nameColumn,
	column("Type", "string", "How the service is exposed."),
	column("Cluster-IP", "string", "Virtual IP inside the cluster."),
	column("External-IP", "string", "Addresses reachable from outside the cluster."),
	column("Port(s)", "string", "Service ports, with node ports where allocated."),
	ageColumn,
	wideColumn("Selector", "string", "Labels of the pods behind the service."),
}

func serviceCells(svc *corev1.Service) []interface{} {
	clusterIP := "<none>"
	if len(svc.Spec.ClusterIPs) > 0 {
		clusterIP = svc.Spec.ClusterIPs[0]
	} else if svc.Spec.ClusterIP != "" {
		clusterIP = svc.Spec.ClusterIP
	}
	return []interface{}{
		svc.Name, string(svc.Spec.Type), clusterIP, serviceExternalIP(svc), orNone(servicePorts(svc.Spec.Ports)), age(svc),
		labels.FormatLabels(svc.Spec.Selector),
	}
}

func serviceExternalIP(svc *corev1.Service) string {
	switch svc.Spec.Type {
	case corev1.ServiceTypeClusterIP, corev1.ServiceTypeNodePort:
		if len(svc.Spec.ExternalIPs) > 0 {
			return strings.Join(svc.Spec.ExternalIPs, ",")
		}
		return "<none>"
	case corev1.ServiceTypeLoadBalancer:
		addresses := loadBalancerAddresses(svc.Status.LoadBalancer.Ingress)
		addresses = append(addresses, svc.Spec.ExternalIPs...)
		if len(addresses) == 0 {
			return "<pending>"
		}
		return strings.Join(addresses, ",")
	case corev1.ServiceTypeExternalName:
		return svc.Spec.ExternalName
	}
	return "<unknown>"
}

// loadBalancerAddresses returns the sorted, de-duplicated IPs (or hostnames).
func loadBalancerAddresses(ingress []corev1.LoadBalancerIngress) []string {
	seen := map[string]bool{}
	var out []string
	for _, in := range ingress {
		addr := in.IP
		if addr == "" {
			addr = in.Hostname
		}
		if addr != "" && !seen[addr] {
			seen[addr] = true
			out = append(out, addr)
		}
	}
	sort.Strings(out)
	return out
}

func servicePorts(ports []corev1.ServicePort) string {
	pieces := make([]string, len(ports))
	for i, p := range ports {
		if p.NodePort > 0 {
			pieces[i] = fmt.Sprintf("%d:%d/%s", p.Port, p.NodePort, p.Protocol)
		} else {
			pieces[i] = fmt.Sprintf("%d/%s", p.Port, p.Protocol)
		}
	}
	return strings.Join(pieces, ",")
}

var endpointsColumns = []metav1.TableColumnDefinition{
	nameColumn,
	column("Endpoints", "string", "Ready addresses with their ports."),
	ageColumn,
}

func endpointsCells(ep *corev1.Endpoints) []interface{} {
	return []interface{}{ep.Name, formatEndpoints(ep), age(ep)}
}

// formatEndpoints lists the first three "ip:port" pairs and counts the rest.
func formatEndpoints(ep *corev1.Endpoints) string {
	if len(ep.Subsets) == 0 {
		return "<none>"
	}
	var list []string
	count := 0
	add := func(s string) {
		count++
		if len(list) < maxListed {
			list = append(list, s)
		}
	}
	for _, subset := range ep.Subsets {
		if len(subset.Ports) == 0 {
			// Headless services may have addresses without ports.
			for _, a := range subset.Addresses {
				add(a.IP)
			}
			continue
		}
		for _, port := range subset.Ports {
			for _, a := range subset.Addresses {
				add(net.JoinHostPort(a.IP, strconv.Itoa(int(port.Port))))
			}
		}
	}
	return listWithMore(list, count, "")
}

// listWithMore joins list and appends "+ N more..." when count exceeds it.
func listWithMore(list []string, count int, empty string) string {
	joined := strings.Join(list, ",")
	if count > len(list) {
		return fmt.Sprintf("%s + %d more...", joined, count-len(list))
	}
	if joined == "" {
		return empty
	}
	return joined
}

var endpointSliceColumns = []metav1.TableColumnDefinition{
	nameColumn,
	column("AddressType", "string", "Address family of the endpoints."),
	column("Ports", "string", "Ports exposed by the endpoints."),
	column("Endpoints", "string", "Addresses of the endpoints."),
	ageColumn,
}

func endpointSliceCells(s *discoveryv1.EndpointSlice) []interface{} {
	var ports []string
	for _, p := range s.Ports {
		if len(ports) == maxListed {
			break
		}
		switch {
		case p.Port != nil:
			ports = append(ports, strconv.Itoa(int(*p.Port)))
		case p.Name != nil:
			ports = append(ports, *p.Name)
		default:
			ports = append(ports, "*")
		}
	}
	var addresses []string
	addressCount := 0
	for _, e := range s.Endpoints {
		for _, a := range e.Addresses {
			addressCount++
			if len(addresses) < maxListed {
				addresses = append(addresses, a)
			}
		}
	}
	return []interface{}{
		s.Name, string(s.AddressType), listWithMore(ports, len(s.Ports), "<unset>"), listWithMore(addresses, addressCount, "<unset>"), age(s),
	}
}

var configMapColumns = []metav1.TableColumnDefinition{
	nameColumn,
	column("Data", "string", "Number of data and binaryData keys."),
	ageColumn,
}

func configMapCells(cm *corev1.ConfigMap) []interface{} {
	return []interface{}{cm.Name, int64(len(cm.Data) + len(cm.BinaryData)), age(cm)}
}

var secretColumns = []metav1.TableColumnDefinition{
	nameColumn,
	column("Type", "string", "Secret type."),
	column("Data", "string", "Number of data keys."),
	ageColumn,
}

func secretCells(s *corev1.Secret) []interface{} {
	// stringData is write-only and merged into data on write, so only data counts.
	return []interface{}{s.Name, string(s.Type), int64(len(s.Data)), age(s)}
}

var serviceAccountColumns = []metav1.TableColumnDefinition{
	nameColumn,
	column("Secrets", "string", "Number of referenced secrets."),
	ageColumn,
}

func serviceAccountCells(sa *corev1.ServiceAccount) []interface{} {
	return []interface{}{sa.Name, int64(len(sa.Secrets)), age(sa)}
}

var namespaceColumns = []metav1.TableColumnDefinition{
	nameColumn,
	column("Status", "string", "Lifecycle phase of the namespace."),
	ageColumn,
}

func namespaceCells(ns *corev1.Namespace) []interface{} {
	return []interface{}{ns.Name, string(ns.Status.Phase), age(ns)}
}

const (
	nodeRoleLabelPrefix = "node-role.kubernetes.io/"
	legacyNodeRoleLabel = "kubernetes.io/role"
)

var nodeColumns = []metav1.TableColumnDefinition{
	nameColumn,
	column("Status", "string", "Readiness of the node, and whether it is cordoned."),
	column("Roles", "string", "Roles from node-role.kubernetes.io labels."),
	ageColumn,
	column("Version", "string", "Kubelet version."),
	wideColumn("Internal-IP", "string", "First internal address."),
	wideColumn("External-IP", "string", "First external address."),
	wideColumn("OS-Image", "string", "Operating system image."),
	wideColumn("Kernel-Version", "string", "Kernel version."),
	wideColumn("Container-Runtime", "string", "Container runtime and version."),
}

func nodeCells(node *corev1.Node) []interface{} {
	status := "Unknown"
	for _, c := range node.Status.Conditions {
		if c.Type == corev1.NodeReady {
			status = "NotReady"
			if c.Status == corev1.ConditionTrue {
				status = "Ready"
			}
		}
	}
	if node.Spec.Unschedulable {
		status += ",SchedulingDisabled"
	}
	info := node.Status.NodeInfo
	return []interface{}{
		node.Name, status, nodeRoles(node), age(node), info.KubeletVersion,
		nodeAddress(node, corev1.NodeInternalIP), nodeAddress(node, corev1.NodeExternalIP),
		orUnknown(info.OSImage), orUnknown(info.KernelVersion), orUnknown(info.ContainerRuntimeVersion),
	}
}

func nodeRoles(node *corev1.Node) string {
	roles := map[string]bool{}
	for k, v := range node.Labels {
		switch {
		case strings.HasPrefix(k, nodeRoleLabelPrefix):
			if role := strings.TrimPrefix(k, nodeRoleLabelPrefix); role != "" {
				roles[role] = true
			}
		case k == legacyNodeRoleLabel && v != "":
			roles[v] = true
		}
	}
	if len(roles) == 0 {
		return "<none>"
	}
	sorted := make([]string, 0, len(roles))
	for r := range roles {
		sorted = append(sorted, r)
	}
	sort.Strings(sorted)
	return strings.Join(sorted, ",")
}

func nodeAddress(node *corev1.Node, addressType corev1.NodeAddressType) string {
	for _, a := range node.Status.Addresses {
		if a.Type == addressType {
			return a.Address
		}
	}
	return "<none>"
}

func orUnknown(s string) string {
	if s == "" {
		return "<unknown>"
	}
	return s
}

var eventColumns = []metav1.TableColumnDefinition{
	column("Last Seen", "string", "Time since the event was last observed."),
	column("Type", "string", "Normal or Warning."),
	column("Reason", "string", "Short machine-readable reason."),
	column("Object", "string", "Object the event is about."),
	wideColumn("Subobject", "string", "Field path within the object, such as a container."),
	wideColumn("Source", "string", "Component (and host) that reported the event."),
	column("Message", "string", "Human-readable description."),
	wideColumn("First Seen", "string", "Time since the event was first observed."),
	wideColumn("Count", "string", "How many times the event occurred."),
	{Name: "Name", Type: "string", Format: "name", Priority: 1, Description: "Name of the event object."},
}

// eventFields is what both event APIs (core/v1 and events.k8s.io/v1) share for printing.
type eventFields struct {
	name, eventType, reason, message  string
	regarding                         corev1.ObjectReference
	component, host                   string
	firstTimestamp, lastTimestamp     metav1.Time
	eventTime                         metav1.MicroTime
	count                             int32
	series                            bool
	seriesCount                       int32
	seriesLastObserved                metav1.MicroTime
	reportingController, reportingPod string
}

func coreEventCells(e *corev1.Event) []interface{} {
	f := eventFields{
		name: e.Name, eventType: e.Type, reason: e.Reason, message: e.Message, regarding: e.InvolvedObject,
		component: e.Source.Component, host: e.Source.Host,
		firstTimestamp: e.FirstTimestamp, lastTimestamp: e.LastTimestamp, eventTime: e.EventTime, count: e.Count,
		reportingController: e.ReportingController, reportingPod: e.ReportingInstance,
	}
	if e.Series != nil {
		f.series, f.seriesCount, f.seriesLastObserved = true, e.Series.Count, e.Series.LastObservedTime
	}
	return eventCells(f)
}

func eventsV1EventCells(e *eventsv1.Event) []interface{} {
	f := eventFields{
		name: e.Name, eventType: e.Type, reason: e.Reason, message: e.Note, regarding: e.Regarding,
		firstTimestamp: e.DeprecatedFirstTimestamp, lastTimestamp: e.DeprecatedLastTimestamp, eventTime: e.EventTime, count: e.DeprecatedCount,
		component: e.DeprecatedSource.Component, host: e.DeprecatedSource.Host,
		reportingController: e.ReportingController, reportingPod: e.ReportingInstance,
	}
	if e.Series != nil {
		f.series, f.seriesCount, f.seriesLastObserved = true, e.Series.Count, e.Series.LastObservedTime
	}
	return eventCells(f)
}

func eventCells(f eventFields) []interface{} {
	firstSeen := since(f.firstTimestamp)
	if f.firstTimestamp.IsZero() {
		firstSeen = sinceMicro(f.eventTime)
	}
	lastSeen := since(f.lastTimestamp)
	if f.lastTimestamp.IsZero() {
		lastSeen = firstSeen
	}
	count := f.count
	if f.series {
		lastSeen = sinceMicro(f.seriesLastObserved)
		count = f.seriesCount
	} else if count == 0 {
		// Events from the new API are singletons without a count.
		count = 1
	}
	object := strings.ToLower(f.regarding.Kind)
	if f.regarding.Name != "" {
		object += "/" + f.regarding.Name
	}
	component, host := f.component, f.host
	if component == "" {
		component = f.reportingController
	}
	if host == "" {
		host = f.reportingPod
	}
	source := component
	if host != "" {
		source += ", " + host
	}
	return []interface{}{
		lastSeen, f.eventType, f.reason, object, f.regarding.FieldPath, source, strings.TrimSpace(f.message),
		firstSeen, int64(count), f.name,
	}
}

var persistentVolumeColumns = []metav1.TableColumnDefinition{
	nameColumn,
	column("Capacity", "string", "Storage capacity."),
	column("Access Modes", "string", "How the volume can be mounted (RWO, ROX, RWX, RWOP)."),
	column("Reclaim Policy", "string", "What happens to the volume when released."),
	column("Status", "string", "Lifecycle phase of the volume."),
	column("Claim", "string", "Namespace/name of the bound claim."),
	column("StorageClass", "string", "Storage class of the volume."),
	column("VolumeAttributesClass", "string", "Volume attributes class of the volume."),
	column("Reason", "string", "Why the volume is in its phase."),
	ageColumn,
	wideColumn("VolumeMode", "string", "Filesystem or Block."),
}

// legacyStorageClassAnnotation predates spec.storageClassName and still wins over it.
const legacyStorageClassAnnotation = "volume.beta.kubernetes.io/storage-class"

func persistentVolumeCells(pv *corev1.PersistentVolume) []interface{} {
	claim := ""
	if pv.Spec.ClaimRef != nil {
		claim = pv.Spec.ClaimRef.Namespace + "/" + pv.Spec.ClaimRef.Name
	}
	phase := string(pv.Status.Phase)
	if pv.DeletionTimestamp != nil {
		phase = "Terminating"
	}
	storageClass := pv.Spec.StorageClassName
	if class, ok := pv.Annotations[legacyStorageClassAnnotation]; ok {
		storageClass = class
	}
	capacity := pv.Spec.Capacity[corev1.ResourceStorage]
	return []interface{}{
		pv.Name, capacity.String(), accessModes(pv.Spec.AccessModes), string(pv.Spec.PersistentVolumeReclaimPolicy),
		phase, claim, storageClass, stringPtrOrUnset(pv.Spec.VolumeAttributesClassName), pv.Status.Reason, age(pv),
		volumeMode(pv.Spec.VolumeMode),
	}
}

var persistentVolumeClaimColumns = []metav1.TableColumnDefinition{
	nameColumn,
	column("Status", "string", "Lifecycle phase of the claim."),
	column("Volume", "string", "Name of the bound volume."),
	column("Capacity", "string", "Capacity of the bound volume."),
	column("Access Modes", "string", "Access modes of the bound volume."),
	column("StorageClass", "string", "Storage class requested by the claim."),
	column("VolumeAttributesClass", "string", "Volume attributes class requested by the claim."),
	ageColumn,
	wideColumn("VolumeMode", "string", "Filesystem or Block."),
}

func persistentVolumeClaimCells(pvc *corev1.PersistentVolumeClaim) []interface{} {
	phase := string(pvc.Status.Phase)
	if pvc.DeletionTimestamp != nil {
		phase = "Terminating"
	}
	// Capacity and modes are only meaningful once bound.
	capacity, modes := "", ""
	if pvc.Spec.VolumeName != "" {
		q := pvc.Status.Capacity[corev1.ResourceStorage]
		capacity, modes = q.String(), accessModes(pvc.Status.AccessModes)
	}
	storageClass := ""
	if pvc.Spec.StorageClassName != nil {
		storageClass = *pvc.Spec.StorageClassName
	}
	if class, ok := pvc.Annotations[legacyStorageClassAnnotation]; ok {
		storageClass = class
	}
	return []interface{}{
		pvc.Name, phase, pvc.Spec.VolumeName, capacity, modes, storageClass,
		stringPtrOrUnset(pvc.Spec.VolumeAttributesClassName), age(pvc), volumeMode(pvc.Spec.VolumeMode),
	}
}

// accessModes abbreviates modes in a fixed order, ignoring duplicates.
func accessModes(modes []corev1.PersistentVolumeAccessMode) string {
	has := map[corev1.PersistentVolumeAccessMode]bool{}
	for _, m := range modes {
		has[m] = true
	}
	var out []string
	for _, m := range []struct {
		mode  corev1.PersistentVolumeAccessMode
		short string
	}{
		{corev1.ReadWriteOnce, "RWO"},
		{corev1.ReadOnlyMany, "ROX"},
		{corev1.ReadWriteMany, "RWX"},
		{corev1.ReadWriteOncePod, "RWOP"},
	} {
		if has[m.mode] {
			out = append(out, m.short)
		}
	}
	return strings.Join(out, ",")
}

func volumeMode(mode *corev1.PersistentVolumeMode) string {
	if mode == nil {
		return "<unset>"
	}
	return string(*mode)
}

func stringPtrOrUnset(s *string) string {
	if s == nil {
		return "<unset>"
	}
	return *s
}

var resourceQuotaColumns = []metav1.TableColumnDefinition{
	nameColumn,
	column("Request", "string", "Used/hard amounts of non-limit resources."),
	column("Limit", "string", "Used/hard amounts of limits.* resources."),
	ageColumn,
}

func resourceQuotaCells(q *corev1.ResourceQuota) []interface{} {
	names := make([]string, 0, len(q.Status.Hard))
	for name := range q.Status.Hard {
		names = append(names, string(name))
	}
	sort.Strings(names)
	var requests, limits []string
	for _, name := range names {
		used := q.Status.Used[corev1.ResourceName(name)]
		hard := q.Status.Hard[corev1.ResourceName(name)]
		entry := fmt.Sprintf("%s: %s/%s", name, used.String(), hard.String())
		if strings.HasPrefix(name, "limits.") {
			limits = append(limits, entry)
		} else {
			requests = append(requests, entry)
		}
	}
	return []interface{}{q.Name, strings.Join(requests, ", "), strings.Join(limits, ", "), age(q)}
}

package printers

import (
	"context"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	appsv1 "k8s.io/api/apps/v1"
	autoscalingv1 "k8s.io/api/autoscaling/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	batchv1 "k8s.io/api/batch/v1"
	certificatesv1 "k8s.io/api/certificates/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	eventsv1 "k8s.io/api/events/v1"
	networkingv1 "k8s.io/api/networking/v1"
	nodev1 "k8s.io/api/node/v1"
	policyv1 "k8s.io/api/policy/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	storagev1 "k8s.io/api/storage/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/intstr"
)

func ptr[T any](v T) *T { return &v }

// ago returns a creation timestamp d in the past.
func ago(d time.Duration) metav1.Time { return metav1.NewTime(time.Now().Add(-d)) }

func objectMeta(name string) metav1.ObjectMeta {
	return metav1.ObjectMeta{Name: name, Namespace: "default", CreationTimestamp: ago(5 * time.Minute), ResourceVersion: "7"}
}

func convert(t *testing.T, gr schema.GroupResource, obj runtime.Object) *metav1.Table {
	t.Helper()
	table, err := For(gr).ConvertToTable(context.Background(), obj, nil)
	if err != nil {
		t.Fatalf("ConvertToTable(%v, %T): %v", gr, obj, err)
	}
	return table
}

// columnNames renders columns as "Name" or "Name/1" for wide-only columns.
func columnNames(table *metav1.Table) []string {
	names := make([]string, len(table.ColumnDefinitions))
	for i, c := range table.ColumnDefinitions {
		names[i] = c.Name
		if c.Priority != 0 {
			names[i] += fmt.Sprintf("/%d", c.Priority)
		}
	}
	return names
}

// cell returns the cell under the named column of row i.
func cell(t *testing.T, table *metav1.Table, row int, column string) interface{} {
	t.Helper()
	for i, c := range table.ColumnDefinitions {
		if c.Name == column {
			return table.Rows[row].Cells[i]
		}
	}
	t.Fatalf("no column %q in %v", column, columnNames(table))
	return nil
}

func wantCells(t *testing.T, table *metav1.Table, row int, want map[string]interface{}) {
	t.Helper()
	for column, value := range want {
		if got := cell(t, table, row, column); !reflect.DeepEqual(got, value) {
			t.Errorf("%s: got %#v, want %#v", column, got, value)
		}
	}
}

type resourceCase struct {
	gr      schema.GroupResource
	obj     runtime.Object
	list    runtime.Object // two items named like obj plus "-2"
	columns []string
}

func podTemplate(containers ...string) corev1.PodTemplateSpec {
	spec := corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "web"}}}
	for _, c := range containers {
		spec.Spec.Containers = append(spec.Spec.Containers, corev1.Container{Name: c, Image: c + ":1.0"})
	}
	return spec
}

var webSelector = &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}}

func resourceCases() []resourceCase {
	pod := corev1.Pod{ObjectMeta: objectMeta("web-0"), Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "app"}}},
		Status: corev1.PodStatus{Phase: corev1.PodRunning}}
	deploy := appsv1.Deployment{ObjectMeta: objectMeta("web"), Spec: appsv1.DeploymentSpec{Replicas: ptr(int32(2)), Selector: webSelector, Template: podTemplate("nginx")}}
	rs := appsv1.ReplicaSet{ObjectMeta: objectMeta("web-abc"), Spec: appsv1.ReplicaSetSpec{Replicas: ptr(int32(2)), Selector: webSelector, Template: podTemplate("nginx")}}
	sts := appsv1.StatefulSet{ObjectMeta: objectMeta("db"), Spec: appsv1.StatefulSetSpec{Replicas: ptr(int32(3)), Template: podTemplate("pg")}}
	ds := appsv1.DaemonSet{ObjectMeta: objectMeta("agent"), Spec: appsv1.DaemonSetSpec{Selector: webSelector, Template: podTemplate("agent")}}
	rc := corev1.ReplicationController{ObjectMeta: objectMeta("legacy"), Spec: corev1.ReplicationControllerSpec{Replicas: ptr(int32(1)), Selector: map[string]string{"app": "web"}, Template: ptr(podTemplate("nginx"))}}
	job := batchv1.Job{ObjectMeta: objectMeta("migrate"), Spec: batchv1.JobSpec{Completions: ptr(int32(1)), Template: podTemplate("migrate")}}
	cronJob := batchv1.CronJob{ObjectMeta: objectMeta("nightly"), Spec: batchv1.CronJobSpec{Schedule: "0 0 * * *",
		JobTemplate: batchv1.JobTemplateSpec{Spec: batchv1.JobSpec{Template: podTemplate("backup")}}}}
	svc := corev1.Service{ObjectMeta: objectMeta("web"), Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeClusterIP, ClusterIP: "10.0.0.10", ClusterIPs: []string{"10.0.0.10"},
		Ports: []corev1.ServicePort{{Port: 80, Protocol: corev1.ProtocolTCP}}}}
	ep := corev1.Endpoints{ObjectMeta: objectMeta("web")}
	slice := discoveryv1.EndpointSlice{ObjectMeta: objectMeta("web-x1"), AddressType: discoveryv1.AddressTypeIPv4}
	cm := corev1.ConfigMap{ObjectMeta: objectMeta("settings"), Data: map[string]string{"a": "1"}}
	secret := corev1.Secret{ObjectMeta: objectMeta("token"), Type: corev1.SecretTypeOpaque, Data: map[string][]byte{"k": []byte("v")}}
	sa := corev1.ServiceAccount{ObjectMeta: objectMeta("default")}
	ns := corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "team-a", CreationTimestamp: ago(time.Hour)}, Status: corev1.NamespaceStatus{Phase: corev1.NamespaceActive}}
	node := corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "node-1", CreationTimestamp: ago(time.Hour)}}
	event := corev1.Event{ObjectMeta: objectMeta("web-0.17a"), InvolvedObject: corev1.ObjectReference{Kind: "Pod", Name: "web-0"}, Type: "Normal", Reason: "Pulled"}
	eventV1 := eventsv1.Event{ObjectMeta: objectMeta("web-0.17b"), Regarding: corev1.ObjectReference{Kind: "Pod", Name: "web-0"}, Type: "Normal", Reason: "Pulled", EventTime: metav1.NewMicroTime(time.Now())}
	pv := corev1.PersistentVolume{ObjectMeta: metav1.ObjectMeta{Name: "pv-1"}, Spec: corev1.PersistentVolumeSpec{Capacity: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")}}}
	pvc := corev1.PersistentVolumeClaim{ObjectMeta: objectMeta("data")}
	limitRange := corev1.LimitRange{ObjectMeta: objectMeta("limits")}
	quota := corev1.ResourceQuota{ObjectMeta: objectMeta("quota")}
	podTpl := corev1.PodTemplate{ObjectMeta: objectMeta("tpl"), Template: podTemplate("a", "b")}
	revision := appsv1.ControllerRevision{ObjectMeta: objectMeta("db-6c8"), Revision: 2}
	hpa := autoscalingv2.HorizontalPodAutoscaler{ObjectMeta: objectMeta("web"), Spec: autoscalingv2.HorizontalPodAutoscalerSpec{
		ScaleTargetRef: autoscalingv2.CrossVersionObjectReference{Kind: "Deployment", Name: "web"}, MaxReplicas: 5}}
	hpaV1 := autoscalingv1.HorizontalPodAutoscaler{ObjectMeta: objectMeta("web"), Spec: autoscalingv1.HorizontalPodAutoscalerSpec{
		ScaleTargetRef: autoscalingv1.CrossVersionObjectReference{Kind: "Deployment", Name: "web"}, MaxReplicas: 5}}
	lease := coordinationv1.Lease{ObjectMeta: objectMeta("leader"), Spec: coordinationv1.LeaseSpec{HolderIdentity: ptr("node-1")}}
	ingress := networkingv1.Ingress{ObjectMeta: objectMeta("web")}
	ingressClass := networkingv1.IngressClass{ObjectMeta: metav1.ObjectMeta{Name: "nginx"}, Spec: networkingv1.IngressClassSpec{Controller: "k8s.io/ingress-nginx"}}
	netpol := networkingv1.NetworkPolicy{ObjectMeta: objectMeta("deny")}
	pdb := policyv1.PodDisruptionBudget{ObjectMeta: objectMeta("web"), Spec: policyv1.PodDisruptionBudgetSpec{MinAvailable: ptr(intstr.FromInt32(1))}}
	role := rbacv1.Role{ObjectMeta: objectMeta("reader")}
	clusterRole := rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "admin"}}
	roleBinding := rbacv1.RoleBinding{ObjectMeta: objectMeta("read"), RoleRef: rbacv1.RoleRef{Kind: "Role", Name: "reader"}}
	clusterRoleBinding := rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "admins"}, RoleRef: rbacv1.RoleRef{Kind: "ClusterRole", Name: "admin"}}
	storageClass := storagev1.StorageClass{ObjectMeta: metav1.ObjectMeta{Name: "standard"}, Provisioner: "rancher.io/local-path"}
	csiDriver := storagev1.CSIDriver{ObjectMeta: metav1.ObjectMeta{Name: "csi.example.com"}}
	csiNode := storagev1.CSINode{ObjectMeta: metav1.ObjectMeta{Name: "node-1"}}
	attachment := storagev1.VolumeAttachment{ObjectMeta: metav1.ObjectMeta{Name: "csi-123"}, Spec: storagev1.VolumeAttachmentSpec{Attacher: "csi.example.com", NodeName: "node-1"}}
	priorityClass := schedulingv1.PriorityClass{ObjectMeta: metav1.ObjectMeta{Name: "high"}, Value: 1000}
	runtimeClass := nodev1.RuntimeClass{ObjectMeta: metav1.ObjectMeta{Name: "gvisor"}, Handler: "runsc"}
	mutating := admissionregistrationv1.MutatingWebhookConfiguration{ObjectMeta: metav1.ObjectMeta{Name: "inject"}}
	validating := admissionregistrationv1.ValidatingWebhookConfiguration{ObjectMeta: metav1.ObjectMeta{Name: "policy"}}
	csr := certificatesv1.CertificateSigningRequest{ObjectMeta: metav1.ObjectMeta{Name: "csr-1"}, Spec: certificatesv1.CertificateSigningRequestSpec{SignerName: "kubernetes.io/kube-apiserver-client", Username: "alice"}}
	crd := apiextensionsv1.CustomResourceDefinition{ObjectMeta: metav1.ObjectMeta{Name: "widgets.example.com"}}

	renamed := func(m *metav1.ObjectMeta) { m.Name += "-2" }

	// Each list holds the object and a copy with "-2" appended to its name.
	pod2, deploy2, rs2, sts2, ds2, rc2, job2, cronJob2 := pod, deploy, rs, sts, ds, rc, job, cronJob
	renamed(&pod2.ObjectMeta)
	renamed(&deploy2.ObjectMeta)
	renamed(&rs2.ObjectMeta)
	renamed(&sts2.ObjectMeta)
	renamed(&ds2.ObjectMeta)
	renamed(&rc2.ObjectMeta)
	renamed(&job2.ObjectMeta)
	renamed(&cronJob2.ObjectMeta)
	svc2, ep2, slice2, cm2, secret2, sa2, ns2, node2 := svc, ep, slice, cm, secret, sa, ns, node
	renamed(&svc2.ObjectMeta)
	renamed(&ep2.ObjectMeta)
	renamed(&slice2.ObjectMeta)
	renamed(&cm2.ObjectMeta)
	renamed(&secret2.ObjectMeta)
	renamed(&sa2.ObjectMeta)
	renamed(&ns2.ObjectMeta)
	renamed(&node2.ObjectMeta)
	event2, eventV12, pv2, pvc2, limitRange2, quota2, podTpl2, revision2 := event, eventV1, pv, pvc, limitRange, quota, podTpl, revision
	renamed(&event2.ObjectMeta)
	renamed(&eventV12.ObjectMeta)
	renamed(&pv2.ObjectMeta)
	renamed(&pvc2.ObjectMeta)
	renamed(&limitRange2.ObjectMeta)
	renamed(&quota2.ObjectMeta)
	renamed(&podTpl2.ObjectMeta)
	renamed(&revision2.ObjectMeta)
	hpa2, hpaV12, lease2, ingress2, ingressClass2, netpol2, pdb2 := hpa, hpaV1, lease, ingress, ingressClass, netpol, pdb
	renamed(&hpa2.ObjectMeta)
	renamed(&hpaV12.ObjectMeta)
	renamed(&lease2.ObjectMeta)
	renamed(&ingress2.ObjectMeta)
	renamed(&ingressClass2.ObjectMeta)
	renamed(&netpol2.ObjectMeta)
	renamed(&pdb2.ObjectMeta)
	role2, clusterRole2, roleBinding2, clusterRoleBinding2, storageClass2, csiDriver2, csiNode2, attachment2 := role, clusterRole, roleBinding, clusterRoleBinding, storageClass, csiDriver, csiNode, attachment
	renamed(&role2.ObjectMeta)
	renamed(&clusterRole2.ObjectMeta)
	renamed(&roleBinding2.ObjectMeta)
	renamed(&clusterRoleBinding2.ObjectMeta)
	renamed(&storageClass2.ObjectMeta)
	renamed(&csiDriver2.ObjectMeta)
	renamed(&csiNode2.ObjectMeta)
	renamed(&attachment2.ObjectMeta)
	priorityClass2, runtimeClass2, mutating2, validating2, csr2, crd2 := priorityClass, runtimeClass, mutating, validating, csr, crd
	renamed(&priorityClass2.ObjectMeta)
	renamed(&runtimeClass2.ObjectMeta)
	renamed(&mutating2.ObjectMeta)
	renamed(&validating2.ObjectMeta)
	renamed(&csr2.ObjectMeta)
	renamed(&crd2.ObjectMeta)

	createdAt := []string{"Name", "Created At"}
	workload := func(cols ...string) []string { return append(cols, "Containers/1", "Images/1", "Selector/1") }
	eventCols := []string{"Last Seen", "Type", "Reason", "Object", "Subobject/1", "Source/1", "Message", "First Seen/1", "Count/1", "Name/1"}
	hpaCols := []string{"Name", "Reference", "Targets", "MinPods", "MaxPods", "Replicas", "Age"}
	bindingCols := []string{"Name", "Role", "Age", "Users/1", "Groups/1", "ServiceAccounts/1"}
	webhookCols := []string{"Name", "Webhooks", "Age"}
	rbacGroup := "rbac.authorization.k8s.io"

	return []resourceCase{
		{schema.GroupResource{Resource: "pods"}, &pod, &corev1.PodList{Items: []corev1.Pod{pod, pod2}},
			[]string{"Name", "Ready", "Status", "Restarts", "Age", "IP/1", "Node/1", "Nominated Node/1", "Readiness Gates/1"}},
		{schema.GroupResource{Group: "apps", Resource: "deployments"}, &deploy, &appsv1.DeploymentList{Items: []appsv1.Deployment{deploy, deploy2}},
			workload("Name", "Ready", "Up-to-date", "Available", "Age")},
		{schema.GroupResource{Group: "apps", Resource: "replicasets"}, &rs, &appsv1.ReplicaSetList{Items: []appsv1.ReplicaSet{rs, rs2}},
			workload("Name", "Desired", "Current", "Ready", "Age")},
		{schema.GroupResource{Group: "apps", Resource: "statefulsets"}, &sts, &appsv1.StatefulSetList{Items: []appsv1.StatefulSet{sts, sts2}},
			[]string{"Name", "Ready", "Age", "Containers/1", "Images/1"}},
		{schema.GroupResource{Group: "apps", Resource: "daemonsets"}, &ds, &appsv1.DaemonSetList{Items: []appsv1.DaemonSet{ds, ds2}},
			workload("Name", "Desired", "Current", "Ready", "Up-to-date", "Available", "Node Selector", "Age")},
		{schema.GroupResource{Resource: "replicationcontrollers"}, &rc, &corev1.ReplicationControllerList{Items: []corev1.ReplicationController{rc, rc2}},
			workload("Name", "Desired", "Current", "Ready", "Age")},
		{schema.GroupResource{Group: "batch", Resource: "jobs"}, &job, &batchv1.JobList{Items: []batchv1.Job{job, job2}},
			workload("Name", "Status", "Completions", "Duration", "Age")},
		{schema.GroupResource{Group: "batch", Resource: "cronjobs"}, &cronJob, &batchv1.CronJobList{Items: []batchv1.CronJob{cronJob, cronJob2}},
			workload("Name", "Schedule", "Timezone", "Suspend", "Active", "Last Schedule", "Age")},
		{schema.GroupResource{Resource: "services"}, &svc, &corev1.ServiceList{Items: []corev1.Service{svc, svc2}},
			[]string{"Name", "Type", "Cluster-IP", "External-IP", "Port(s)", "Age", "Selector/1"}},
		{schema.GroupResource{Resource: "endpoints"}, &ep, &corev1.EndpointsList{Items: []corev1.Endpoints{ep, ep2}},
			[]string{"Name", "Endpoints", "Age"}},
		{schema.GroupResource{Group: "discovery.k8s.io", Resource: "endpointslices"}, &slice, &discoveryv1.EndpointSliceList{Items: []discoveryv1.EndpointSlice{slice, slice2}},
			[]string{"Name", "AddressType", "Ports", "Endpoints", "Age"}},
		{schema.GroupResource{Resource: "configmaps"}, &cm, &corev1.ConfigMapList{Items: []corev1.ConfigMap{cm, cm2}},
			[]string{"Name", "Data", "Age"}},
		{schema.GroupResource{Resource: "secrets"}, &secret, &corev1.SecretList{Items: []corev1.Secret{secret, secret2}},
			[]string{"Name", "Type", "Data", "Age"}},
		{schema.GroupResource{Resource: "serviceaccounts"}, &sa, &corev1.ServiceAccountList{Items: []corev1.ServiceAccount{sa, sa2}},
			[]string{"Name", "Secrets", "Age"}},
		{schema.GroupResource{Resource: "namespaces"}, &ns, &corev1.NamespaceList{Items: []corev1.Namespace{ns, ns2}},
			[]string{"Name", "Status", "Age"}},
		{schema.GroupResource{Resource: "nodes"}, &node, &corev1.NodeList{Items: []corev1.Node{node, node2}},
			[]string{"Name", "Status", "Roles", "Age", "Version", "Internal-IP/1", "External-IP/1", "OS-Image/1", "Kernel-Version/1", "Container-Runtime/1"}},
		{schema.GroupResource{Resource: "events"}, &event, &corev1.EventList{Items: []corev1.Event{event, event2}}, eventCols},
		{schema.GroupResource{Group: "events.k8s.io", Resource: "events"}, &eventV1, &eventsv1.EventList{Items: []eventsv1.Event{eventV1, eventV12}}, eventCols},
		{schema.GroupResource{Resource: "persistentvolumes"}, &pv, &corev1.PersistentVolumeList{Items: []corev1.PersistentVolume{pv, pv2}},
			[]string{"Name", "Capacity", "Access Modes", "Reclaim Policy", "Status", "Claim", "StorageClass", "VolumeAttributesClass", "Reason", "Age", "VolumeMode/1"}},
		{schema.GroupResource{Resource: "persistentvolumeclaims"}, &pvc, &corev1.PersistentVolumeClaimList{Items: []corev1.PersistentVolumeClaim{pvc, pvc2}},
			[]string{"Name", "Status", "Volume", "Capacity", "Access Modes", "StorageClass", "VolumeAttributesClass", "Age", "VolumeMode/1"}},
		{schema.GroupResource{Resource: "limitranges"}, &limitRange, &corev1.LimitRangeList{Items: []corev1.LimitRange{limitRange, limitRange2}}, createdAt},
		{schema.GroupResource{Resource: "resourcequotas"}, &quota, &corev1.ResourceQuotaList{Items: []corev1.ResourceQuota{quota, quota2}},
			[]string{"Name", "Request", "Limit", "Age"}},
		{schema.GroupResource{Resource: "podtemplates"}, &podTpl, &corev1.PodTemplateList{Items: []corev1.PodTemplate{podTpl, podTpl2}},
			[]string{"Name", "Containers", "Images", "Pod Labels"}},
		{schema.GroupResource{Group: "apps", Resource: "controllerrevisions"}, &revision, &appsv1.ControllerRevisionList{Items: []appsv1.ControllerRevision{revision, revision2}},
			[]string{"Name", "Controller", "Revision", "Age"}},
		{schema.GroupResource{Group: "autoscaling", Resource: "horizontalpodautoscalers"}, &hpa,
			&autoscalingv2.HorizontalPodAutoscalerList{Items: []autoscalingv2.HorizontalPodAutoscaler{hpa, hpa2}}, hpaCols},
		{schema.GroupResource{Group: "autoscaling", Resource: "horizontalpodautoscalers"}, &hpaV1,
			&autoscalingv1.HorizontalPodAutoscalerList{Items: []autoscalingv1.HorizontalPodAutoscaler{hpaV1, hpaV12}}, hpaCols},
		{schema.GroupResource{Group: "coordination.k8s.io", Resource: "leases"}, &lease, &coordinationv1.LeaseList{Items: []coordinationv1.Lease{lease, lease2}},
			[]string{"Name", "Holder", "Age"}},
		{schema.GroupResource{Group: "networking.k8s.io", Resource: "ingresses"}, &ingress, &networkingv1.IngressList{Items: []networkingv1.Ingress{ingress, ingress2}},
			[]string{"Name", "Class", "Hosts", "Address", "Ports", "Age"}},
		{schema.GroupResource{Group: "networking.k8s.io", Resource: "ingressclasses"}, &ingressClass, &networkingv1.IngressClassList{Items: []networkingv1.IngressClass{ingressClass, ingressClass2}},
			[]string{"Name", "Controller", "Parameters", "Age"}},
		{schema.GroupResource{Group: "networking.k8s.io", Resource: "networkpolicies"}, &netpol, &networkingv1.NetworkPolicyList{Items: []networkingv1.NetworkPolicy{netpol, netpol2}},
			[]string{"Name", "Pod-Selector", "Age"}},
		{schema.GroupResource{Group: "policy", Resource: "poddisruptionbudgets"}, &pdb, &policyv1.PodDisruptionBudgetList{Items: []policyv1.PodDisruptionBudget{pdb, pdb2}},
			[]string{"Name", "Min Available", "Max Unavailable", "Allowed Disruptions", "Age"}},
		{schema.GroupResource{Group: rbacGroup, Resource: "roles"}, &role, &rbacv1.RoleList{Items: []rbacv1.Role{role, role2}}, createdAt},
		{schema.GroupResource{Group: rbacGroup, Resource: "clusterroles"}, &clusterRole, &rbacv1.ClusterRoleList{Items: []rbacv1.ClusterRole{clusterRole, clusterRole2}}, createdAt},
		{schema.GroupResource{Group: rbacGroup, Resource: "rolebindings"}, &roleBinding, &rbacv1.RoleBindingList{Items: []rbacv1.RoleBinding{roleBinding, roleBinding2}}, bindingCols},
		{schema.GroupResource{Group: rbacGroup, Resource: "clusterrolebindings"}, &clusterRoleBinding,
			&rbacv1.ClusterRoleBindingList{Items: []rbacv1.ClusterRoleBinding{clusterRoleBinding, clusterRoleBinding2}}, bindingCols},
		{schema.GroupResource{Group: "storage.k8s.io", Resource: "storageclasses"}, &storageClass, &storagev1.StorageClassList{Items: []storagev1.StorageClass{storageClass, storageClass2}},
			[]string{"Name", "Provisioner", "ReclaimPolicy", "VolumeBindingMode", "AllowVolumeExpansion", "Age"}},
		{schema.GroupResource{Group: "storage.k8s.io", Resource: "csidrivers"}, &csiDriver, &storagev1.CSIDriverList{Items: []storagev1.CSIDriver{csiDriver, csiDriver2}},
			[]string{"Name", "AttachRequired", "PodInfoOnMount", "StorageCapacity", "TokenRequests", "RequiresRepublish", "Modes", "Age"}},
		{schema.GroupResource{Group: "storage.k8s.io", Resource: "csinodes"}, &csiNode, &storagev1.CSINodeList{Items: []storagev1.CSINode{csiNode, csiNode2}},
			[]string{"Name", "Drivers", "Age"}},
		{schema.GroupResource{Group: "storage.k8s.io", Resource: "volumeattachments"}, &attachment, &storagev1.VolumeAttachmentList{Items: []storagev1.VolumeAttachment{attachment, attachment2}},
			[]string{"Name", "Attacher", "PV", "Node", "Attached", "Age"}},
		{schema.GroupResource{Group: "scheduling.k8s.io", Resource: "priorityclasses"}, &priorityClass, &schedulingv1.PriorityClassList{Items: []schedulingv1.PriorityClass{priorityClass, priorityClass2}},
			[]string{"Name", "Value", "Global-Default", "Age", "PreemptionPolicy"}},
		{schema.GroupResource{Group: "node.k8s.io", Resource: "runtimeclasses"}, &runtimeClass, &nodev1.RuntimeClassList{Items: []nodev1.RuntimeClass{runtimeClass, runtimeClass2}},
			[]string{"Name", "Handler", "Age"}},
		{schema.GroupResource{Group: "admissionregistration.k8s.io", Resource: "mutatingwebhookconfigurations"}, &mutating,
			&admissionregistrationv1.MutatingWebhookConfigurationList{Items: []admissionregistrationv1.MutatingWebhookConfiguration{mutating, mutating2}}, webhookCols},
		{schema.GroupResource{Group: "admissionregistration.k8s.io", Resource: "validatingwebhookconfigurations"}, &validating,
			&admissionregistrationv1.ValidatingWebhookConfigurationList{Items: []admissionregistrationv1.ValidatingWebhookConfiguration{validating, validating2}}, webhookCols},
		{schema.GroupResource{Group: "certificates.k8s.io", Resource: "certificatesigningrequests"}, &csr,
			&certificatesv1.CertificateSigningRequestList{Items: []certificatesv1.CertificateSigningRequest{csr, csr2}},
			[]string{"Name", "Age", "SignerName", "Requestor", "RequestedDuration", "Condition"}},
		{schema.GroupResource{Group: "apiextensions.k8s.io", Resource: "customresourcedefinitions"}, &crd,
			&apiextensionsv1.CustomResourceDefinitionList{Items: []apiextensionsv1.CustomResourceDefinition{crd, crd2}}, createdAt},
	}
}

// TestEveryResourceColumnsAndRows checks, for every served kind, the exact
// columns and that single objects and lists produce well-formed rows.
func TestEveryResourceColumnsAndRows(t *testing.T) {
	for _, tc := range resourceCases() {
		t.Run(fmt.Sprintf("%s/%T", tc.gr, tc.obj), func(t *testing.T) {
			single := convert(t, tc.gr, tc.obj)
			if got := columnNames(single); !reflect.DeepEqual(got, tc.columns) {
				t.Fatalf("columns:\n got %q\nwant %q", got, tc.columns)
			}
			for _, c := range single.ColumnDefinitions {
				if c.Type == "" || c.Description == "" {
					t.Errorf("column %q lacks type or description", c.Name)
				}
			}
			if len(single.Rows) != 1 {
				t.Fatalf("single object gave %d rows", len(single.Rows))
			}
			if single.Rows[0].Object.Object != tc.obj {
				t.Errorf("row object is %p, want the converted object %p", single.Rows[0].Object.Object, tc.obj)
			}
			if n := len(single.Rows[0].Cells); n != len(tc.columns) {
				t.Errorf("row has %d cells for %d columns", n, len(tc.columns))
			}

			list := convert(t, tc.gr, tc.list)
			if !reflect.DeepEqual(columnNames(list), tc.columns) {
				t.Errorf("list columns differ: %q", columnNames(list))
			}
			if len(list.Rows) != 2 {
				t.Fatalf("list of two gave %d rows", len(list.Rows))
			}
			name := tc.obj.(metav1.Object).GetName()
			for i, wantName := range []string{name, name + "-2"} {
				row := list.Rows[i]
				if len(row.Cells) != len(tc.columns) {
					t.Errorf("row %d has %d cells for %d columns", i, len(row.Cells), len(tc.columns))
				}
				item, ok := row.Object.Object.(metav1.Object)
				if !ok || item.GetName() != wantName {
					t.Errorf("row %d object = %#v, want item %q", i, row.Object.Object, wantName)
				}
				if got := cell(t, list, i, "Name"); !strings.HasPrefix(got.(string), wantName) {
					t.Errorf("row %d Name cell = %q, want %q", i, got, wantName)
				}
			}
		})
	}
}

func TestEveryListedResourceHasItsOwnPrinter(t *testing.T) {
	// kube itself prints these with the default NAME/CREATED AT table.
	printedByDefault := map[schema.GroupResource]bool{
		{Resource: "limitranges"}:                                              true,
		{Group: "rbac.authorization.k8s.io", Resource: "roles"}:                true,
		{Group: "rbac.authorization.k8s.io", Resource: "clusterroles"}:         true,
		{Group: "apiextensions.k8s.io", Resource: "customresourcedefinitions"}: true,
	}
	for _, tc := range resourceCases() {
		got := For(tc.gr)
		if printedByDefault[tc.gr] {
			if got != Default {
				t.Errorf("%v: want Default convertor, got %T", tc.gr, got)
			}
			continue
		}
		if got == Default {
			t.Errorf("%v: has no dedicated printer", tc.gr)
		}
	}
	if For(schema.GroupResource{Group: "example.com", Resource: "widgets"}) != Default {
		t.Error("unknown resource should get Default")
	}
}

func TestNoHeadersOmitsColumnDefinitions(t *testing.T) {
	cm := &corev1.ConfigMap{ObjectMeta: objectMeta("settings")}
	for _, convertor := range []TableConvertor{For(schema.GroupResource{Resource: "configmaps"}), Default} {
		table, err := convertor.ConvertToTable(context.Background(), cm, &metav1.TableOptions{NoHeaders: true})
		if err != nil {
			t.Fatal(err)
		}
		if table.ColumnDefinitions != nil {
			t.Errorf("%T: NoHeaders still returned %d columns", convertor, len(table.ColumnDefinitions))
		}
		if len(table.Rows) != 1 || table.Rows[0].Cells[0] != "settings" {
			t.Errorf("%T: rows = %#v", convertor, table.Rows)
		}
	}
}

func TestListMetadataCopied(t *testing.T) {
	list := &corev1.ConfigMapList{
		ListMeta: metav1.ListMeta{ResourceVersion: "42", Continue: "token", RemainingItemCount: ptr(int64(9))},
		Items:    []corev1.ConfigMap{{ObjectMeta: objectMeta("a")}},
	}
	for _, convertor := range []TableConvertor{For(schema.GroupResource{Resource: "configmaps"}), Default} {
		table, err := convertor.ConvertToTable(context.Background(), list, nil)
		if err != nil {
			t.Fatal(err)
		}
		if table.ResourceVersion != "42" || table.Continue != "token" || table.RemainingItemCount == nil || *table.RemainingItemCount != 9 {
			t.Errorf("%T: list meta = %+v", convertor, table.ListMeta)
		}
	}
}

func TestEmptyListHasNoRowsButColumns(t *testing.T) {
	table := convert(t, schema.GroupResource{Resource: "pods"}, &corev1.PodList{})
	if table.Rows == nil || len(table.Rows) != 0 {
		t.Errorf("rows = %#v, want empty non-nil", table.Rows)
	}
	if len(table.ColumnDefinitions) != len(podColumns) {
		t.Errorf("got %d columns", len(table.ColumnDefinitions))
	}
}

// A list of pointers (as some storage layers build) prints like a list of values.
type podPointerList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata"`
	Items           []*corev1.Pod `json:"items"`
}

func (l *podPointerList) DeepCopyObject() runtime.Object { c := *l; return &c }

func TestListOfPointers(t *testing.T) {
	a := &corev1.Pod{ObjectMeta: objectMeta("a"), Status: corev1.PodStatus{Phase: corev1.PodPending}}
	b := &corev1.Pod{ObjectMeta: objectMeta("b"), Status: corev1.PodStatus{Phase: corev1.PodPending}}
	table := convert(t, schema.GroupResource{Resource: "pods"}, &podPointerList{Items: []*corev1.Pod{a, b}})
	if len(table.Rows) != 2 || table.Rows[0].Object.Object != a || table.Rows[1].Object.Object != b {
		t.Fatalf("rows = %#v", table.Rows)
	}
	wantCells(t, table, 1, map[string]interface{}{"Name": "b", "Status": "Pending"})
}

func TestWrongTypeIsAnError(t *testing.T) {
	_, err := For(schema.GroupResource{Resource: "pods"}).ConvertToTable(context.Background(), &corev1.ConfigMap{}, nil)
	if err == nil {
		t.Fatal("printing a ConfigMap as a pod should fail")
	}
}

func TestDefaultCells(t *testing.T) {
	created := metav1.NewTime(time.Date(2024, 3, 1, 12, 30, 0, 0, time.FixedZone("CET", 3600)))
	role := &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: "reader", CreationTimestamp: created}}
	table := convert(t, schema.GroupResource{Group: "rbac.authorization.k8s.io", Resource: "roles"}, role)
	wantCells(t, table, 0, map[string]interface{}{"Name": "reader", "Created At": "2024-03-01T11:30:00Z"})
	if table.ColumnDefinitions[0].Format != "name" || table.ColumnDefinitions[1].Type != "date" {
		t.Errorf("columns = %+v", table.ColumnDefinitions)
	}
}

func BenchmarkConfigMapList2000(b *testing.B) {
	list := &corev1.ConfigMapList{Items: make([]corev1.ConfigMap, 2000)}
	for i := range list.Items {
		list.Items[i] = corev1.ConfigMap{ObjectMeta: objectMeta(fmt.Sprintf("cm-%d", i)), Data: map[string]string{"k": "v"}}
	}
	convertor := For(schema.GroupResource{Resource: "configmaps"})
	b.ReportAllocs()
	for b.Loop() {
		table, err := convertor.ConvertToTable(context.Background(), list, nil)
		if err != nil || len(table.Rows) != 2000 {
			b.Fatalf("rows=%d err=%v", len(table.Rows), err)
		}
	}
}

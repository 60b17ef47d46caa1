// Package builtin is the catalogue of the built-in Kubernetes API that
// devplane serves from k8s.io/api types: for each kind, how it is named and
// stored, and its defaulting, validation and selectable fields.
package builtin

import (
	"strings"

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
	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	networkingv1 "k8s.io/api/networking/v1"
	nodev1 "k8s.io/api/node/v1"
	policyv1 "k8s.io/api/policy/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	resourcev1 "k8s.io/api/resource/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	storagev1 "k8s.io/api/storage/v1"
	storagemigrationv1 "k8s.io/api/storagemigration/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// Kind describes one built-in resource as devplane serves it.
type Kind struct {
	GroupVersion       schema.GroupVersion
	Kind, ListKind     string
	Resource, Singular string // "deployments", "deployment"
	ShortNames         []string
	Categories         []string
	Namespaced         bool
	HasStatus          bool   // served with a status subresource
	Scale              *Scale // non-nil when served with a scale subresource
	New, NewList       func() runtime.Object

	// Default fills kube's defaults in place. Called on create and update,
	// before validation. Objects that need generated values (Job selectors)
	// read metadata.uid, so the caller sets it before Default on create.
	Default func(obj runtime.Object)
	// Validate and ValidateUpdate return field errors, metadata included.
	// They never panic, whatever the input.
	Validate       func(obj runtime.Object) field.ErrorList
	ValidateUpdate func(obj, old runtime.Object) field.ErrorList
	// Fields returns the selectable fields beyond metadata.name and
	// metadata.namespace (GetAttrs adds those two).
	Fields func(obj runtime.Object) fields.Set

	// GenerationOnCreate and GenerationChanged are how the kind keeps
	// metadata.generation, as kube's registry strategy for it does: set to
	// 1 on create, bumped by an update for which GenerationChanged(obj,
	// old) is true (nil: never). Kinds with neither keep no generation.
	GenerationOnCreate bool
	GenerationChanged  func(obj, old runtime.Object) bool

	// StoragePrefix is the etcd key prefix, without trailing slash:
	// "/registry/<resource>" for the core group and
	// "/registry/<group>/<resource>" for the others.
	StoragePrefix string

	// StoredAs, when set, is the version of this kind that is stored: this
	// one is served from its storage through ToStored and FromStored
	// (autoscaling/v1 HPAs are autoscaling/v2 HPAs, events.k8s.io Events
	// are core Events, as in kube). A server
	// without that version's storage stores this one apart, under
	// "/registry/<group>/<version>/<resource>".
	StoredAs *schema.GroupVersionResource
	// ToStored converts an object of this version to StoredAs; current is
	// the stored object it replaces (nil on create), whose fields this
	// version cannot express are kept.
	ToStored func(served, current runtime.Object) (runtime.Object, error)
	// FromStored converts a StoredAs object to this version.
	FromStored func(stored runtime.Object) (runtime.Object, error)
}

// Scale is the autoscaling/v1 Scale view of a scalable kind.
type Scale struct {
	// Get reports spec.replicas, status.replicas and status.selector (the
	// label selector in string form).
	Get func(obj runtime.Object) *autoscalingv1.Scale
	// Set writes spec.replicas.
	Set func(obj runtime.Object, replicas int32)
}

// Kinds returns every built-in kind in a stable order (by group as kube
// lists them, then by resource as written below).
func Kinds() []Kind {
	out := make([]Kind, len(catalogue))
	copy(out, catalogue)
	return out
}

// Lookup finds a kind by group, version and plural resource name.
func Lookup(gvr schema.GroupVersionResource) (Kind, bool) {
	i, ok := byResource[gvr]
	if !ok {
		return Kind{}, false
	}
	return catalogue[i], true
}

// GetAttrs returns the labels and selectable fields of objects of kind k:
// metadata.name, metadata.namespace (for cluster-scoped kinds too, empty, as
// kube does) plus k.Fields.
func GetAttrs(k Kind) func(obj runtime.Object) (labels.Set, fields.Set, error) {
	return func(obj runtime.Object) (labels.Set, fields.Set, error) {
		meta, err := metaOf(obj)
		if err != nil {
			return nil, nil, err
		}
		set := fields.Set{
			"metadata.name":      meta.GetName(),
			"metadata.namespace": meta.GetNamespace(),
		}
		if k.Fields != nil {
			for f, v := range k.Fields(obj) {
				set[f] = v
			}
		}
		return labels.Set(meta.GetLabels()), set, nil
	}
}

var (
	coreV1          = corev1.SchemeGroupVersion
	appsV1          = appsv1.SchemeGroupVersion
	batchV1         = batchv1.SchemeGroupVersion
	autoscalingV1   = autoscalingv1.SchemeGroupVersion
	autoscalingV2   = autoscalingv2.SchemeGroupVersion
	coordinationV1  = coordinationv1.SchemeGroupVersion
	eventsV1        = eventsv1.SchemeGroupVersion
	discoveryV1     = discoveryv1.SchemeGroupVersion
	networkingV1    = networkingv1.SchemeGroupVersion
	policyV1        = policyv1.SchemeGroupVersion
	rbacV1          = rbacv1.SchemeGroupVersion
	storageV1       = storagev1.SchemeGroupVersion
	schedulingV1    = schedulingv1.SchemeGroupVersion
	nodeV1          = nodev1.SchemeGroupVersion
	admissionRegV1  = admissionregistrationv1.SchemeGroupVersion
	certificatesV1  = certificatesv1.SchemeGroupVersion
	categoryAll     = []string{"all"}
	categoryAPIExts = []string{"api-extensions"}
)

// spec is the hand-written part of a catalogue entry; everything derivable
// (ListKind, Singular, StoragePrefix, behaviour funcs) is filled in by init.
type spec struct {
	gv         schema.GroupVersion
	resource   string
	shortNames []string
	categories []string
	namespaced bool
	hasStatus  bool
	scale      *Scale
	// storageVersionTag marks the non-preferred version of a kind served in
	// two versions, giving it its own storage prefix.
	storageVersionTag bool
	newObj, newList   func() runtime.Object
}

func specs() []spec {
	return []spec{
		// core/v1
		{gv: coreV1, resource: "namespaces", shortNames: []string{"ns"}, hasStatus: true,
			newObj: func() runtime.Object { return &corev1.Namespace{} }, newList: func() runtime.Object { return &corev1.NamespaceList{} }},
		{gv: coreV1, resource: "configmaps", shortNames: []string{"cm"}, namespaced: true,
			newObj: func() runtime.Object { return &corev1.ConfigMap{} }, newList: func() runtime.Object { return &corev1.ConfigMapList{} }},
		{gv: coreV1, resource: "secrets", namespaced: true,
			newObj: func() runtime.Object { return &corev1.Secret{} }, newList: func() runtime.Object { return &corev1.SecretList{} }},
		{gv: coreV1, resource: "services", shortNames: []string{"svc"}, categories: categoryAll, namespaced: true, hasStatus: true,
			newObj: func() runtime.Object { return &corev1.Service{} }, newList: func() runtime.Object { return &corev1.ServiceList{} }},
		{gv: coreV1, resource: "serviceaccounts", shortNames: []string{"sa"}, namespaced: true,
			newObj: func() runtime.Object { return &corev1.ServiceAccount{} }, newList: func() runtime.Object { return &corev1.ServiceAccountList{} }},
		{gv: coreV1, resource: "pods", shortNames: []string{"po"}, categories: categoryAll, namespaced: true, hasStatus: true,
			newObj: func() runtime.Object { return &corev1.Pod{} }, newList: func() runtime.Object { return &corev1.PodList{} }},
		{gv: coreV1, resource: "podtemplates", namespaced: true,
			newObj: func() runtime.Object { return &corev1.PodTemplate{} }, newList: func() runtime.Object { return &corev1.PodTemplateList{} }},
		{gv: coreV1, resource: "events", shortNames: []string{"ev"}, namespaced: true,
			newObj: func() runtime.Object { return &corev1.Event{} }, newList: func() runtime.Object { return &corev1.EventList{} }},
		{gv: coreV1, resource: "endpoints", shortNames: []string{"ep"}, namespaced: true,
			newObj: func() runtime.Object { return &corev1.Endpoints{} }, newList: func() runtime.Object { return &corev1.EndpointsList{} }},
		{gv: coreV1, resource: "nodes", shortNames: []string{"no"}, hasStatus: true,
			newObj: func() runtime.Object { return &corev1.Node{} }, newList: func() runtime.Object { return &corev1.NodeList{} }},
		{gv: coreV1, resource: "persistentvolumes", shortNames: []string{"pv"}, hasStatus: true,
			newObj: func() runtime.Object { return &corev1.PersistentVolume{} }, newList: func() runtime.Object { return &corev1.PersistentVolumeList{} }},
		{gv: coreV1, resource: "persistentvolumeclaims", shortNames: []string{"pvc"}, namespaced: true, hasStatus: true,
			newObj: func() runtime.Object { return &corev1.PersistentVolumeClaim{} }, newList: func() runtime.Object { return &corev1.PersistentVolumeClaimList{} }},
		{gv: coreV1, resource: "limitranges", shortNames: []string{"limits"}, namespaced: true,
			newObj: func() runtime.Object { return &corev1.LimitRange{} }, newList: func() runtime.Object { return &corev1.LimitRangeList{} }},
		{gv: coreV1, resource: "resourcequotas", shortNames: []string{"quota"}, namespaced: true, hasStatus: true,
			newObj: func() runtime.Object { return &corev1.ResourceQuota{} }, newList: func() runtime.Object { return &corev1.ResourceQuotaList{} }},
		{gv: coreV1, resource: "replicationcontrollers", shortNames: []string{"rc"}, categories: categoryAll, namespaced: true, hasStatus: true, scale: replicationControllerScale,
			newObj: func() runtime.Object { return &corev1.ReplicationController{} }, newList: func() runtime.Object { return &corev1.ReplicationControllerList{} }},

		// apps/v1
		{gv: appsV1, resource: "deployments", shortNames: []string{"deploy"}, categories: categoryAll, namespaced: true, hasStatus: true, scale: deploymentScale,
			newObj: func() runtime.Object { return &appsv1.Deployment{} }, newList: func() runtime.Object { return &appsv1.DeploymentList{} }},
		{gv: appsV1, resource: "replicasets", shortNames: []string{"rs"}, categories: categoryAll, namespaced: true, hasStatus: true, scale: replicaSetScale,
			newObj: func() runtime.Object { return &appsv1.ReplicaSet{} }, newList: func() runtime.Object { return &appsv1.ReplicaSetList{} }},
		{gv: appsV1, resource: "statefulsets", shortNames: []string{"sts"}, categories: categoryAll, namespaced: true, hasStatus: true, scale: statefulSetScale,
			newObj: func() runtime.Object { return &appsv1.StatefulSet{} }, newList: func() runtime.Object { return &appsv1.StatefulSetList{} }},
		{gv: appsV1, resource: "daemonsets", shortNames: []string{"ds"}, categories: categoryAll, namespaced: true, hasStatus: true,
			newObj: func() runtime.Object { return &appsv1.DaemonSet{} }, newList: func() runtime.Object { return &appsv1.DaemonSetList{} }},
		{gv: appsV1, resource: "controllerrevisions", namespaced: true,
			newObj: func() runtime.Object { return &appsv1.ControllerRevision{} }, newList: func() runtime.Object { return &appsv1.ControllerRevisionList{} }},

		// batch/v1
		{gv: batchV1, resource: "jobs", categories: categoryAll, namespaced: true, hasStatus: true,
			newObj: func() runtime.Object { return &batchv1.Job{} }, newList: func() runtime.Object { return &batchv1.JobList{} }},
		{gv: batchV1, resource: "cronjobs", shortNames: []string{"cj"}, categories: categoryAll, namespaced: true, hasStatus: true,
			newObj: func() runtime.Object { return &batchv1.CronJob{} }, newList: func() runtime.Object { return &batchv1.CronJobList{} }},

		// autoscaling: v2 is the preferred and stored version; v1 is served
		// from it (StoredAs).
		{gv: autoscalingV2, resource: "horizontalpodautoscalers", shortNames: []string{"hpa"}, categories: categoryAll, namespaced: true, hasStatus: true,
			newObj: func() runtime.Object { return &autoscalingv2.HorizontalPodAutoscaler{} }, newList: func() runtime.Object { return &autoscalingv2.HorizontalPodAutoscalerList{} }},
		{gv: autoscalingV1, resource: "horizontalpodautoscalers", shortNames: []string{"hpa"}, categories: categoryAll, namespaced: true, hasStatus: true, storageVersionTag: true,
			newObj: func() runtime.Object { return &autoscalingv1.HorizontalPodAutoscaler{} }, newList: func() runtime.Object { return &autoscalingv1.HorizontalPodAutoscalerList{} }},

		{gv: coordinationV1, resource: "leases", namespaced: true,
			newObj: func() runtime.Object { return &coordinationv1.Lease{} }, newList: func() runtime.Object { return &coordinationv1.LeaseList{} }},
		{gv: eventsV1, resource: "events", shortNames: []string{"ev"}, namespaced: true,
			newObj: func() runtime.Object { return &eventsv1.Event{} }, newList: func() runtime.Object { return &eventsv1.EventList{} }},
		{gv: discoveryV1, resource: "endpointslices", namespaced: true,
			newObj: func() runtime.Object { return &discoveryv1.EndpointSlice{} }, newList: func() runtime.Object { return &discoveryv1.EndpointSliceList{} }},

		// networking.k8s.io/v1
		{gv: networkingV1, resource: "ingresses", shortNames: []string{"ing"}, namespaced: true, hasStatus: true,
			newObj: func() runtime.Object { return &networkingv1.Ingress{} }, newList: func() runtime.Object { return &networkingv1.IngressList{} }},
		{gv: networkingV1, resource: "ingressclasses",
			newObj: func() runtime.Object { return &networkingv1.IngressClass{} }, newList: func() runtime.Object { return &networkingv1.IngressClassList{} }},
		{gv: networkingV1, resource: "networkpolicies", shortNames: []string{"netpol"}, namespaced: true,
			newObj: func() runtime.Object { return &networkingv1.NetworkPolicy{} }, newList: func() runtime.Object { return &networkingv1.NetworkPolicyList{} }},

		{gv: policyV1, resource: "poddisruptionbudgets", shortNames: []string{"pdb"}, namespaced: true, hasStatus: true,
			newObj: func() runtime.Object { return &policyv1.PodDisruptionBudget{} }, newList: func() runtime.Object { return &policyv1.PodDisruptionBudgetList{} }},

		// rbac.authorization.k8s.io/v1
		{gv: rbacV1, resource: "roles", namespaced: true,
			newObj: func() runtime.Object { return &rbacv1.Role{} }, newList: func() runtime.Object { return &rbacv1.RoleList{} }},
		{gv: rbacV1, resource: "rolebindings", namespaced: true,
			newObj: func() runtime.Object { return &rbacv1.RoleBinding{} }, newList: func() runtime.Object { return &rbacv1.RoleBindingList{} }},
		{gv: rbacV1, resource: "clusterroles",
			newObj: func() runtime.Object { return &rbacv1.ClusterRole{} }, newList: func() runtime.Object { return &rbacv1.ClusterRoleList{} }},
		{gv: rbacV1, resource: "clusterrolebindings",
			newObj: func() runtime.Object { return &rbacv1.ClusterRoleBinding{} }, newList: func() runtime.Object { return &rbacv1.ClusterRoleBindingList{} }},

		// storage.k8s.io/v1
		{gv: storageV1, resource: "storageclasses", shortNames: []string{"sc"},
			newObj: func() runtime.Object { return &storagev1.StorageClass{} }, newList: func() runtime.Object { return &storagev1.StorageClassList{} }},
		{gv: storageV1, resource: "csidrivers",
			newObj: func() runtime.Object { return &storagev1.CSIDriver{} }, newList: func() runtime.Object { return &storagev1.CSIDriverList{} }},
		{gv: storageV1, resource: "csinodes", hasStatus: true,
			newObj: func() runtime.Object { return &storagev1.CSINode{} }, newList: func() runtime.Object { return &storagev1.CSINodeList{} }},
		{gv: storageV1, resource: "volumeattachments", hasStatus: true,
			newObj: func() runtime.Object { return &storagev1.VolumeAttachment{} }, newList: func() runtime.Object { return &storagev1.VolumeAttachmentList{} }},

		{gv: schedulingV1, resource: "priorityclasses", shortNames: []string{"pc"},
			newObj: func() runtime.Object { return &schedulingv1.PriorityClass{} }, newList: func() runtime.Object { return &schedulingv1.PriorityClassList{} }},
		{gv: nodeV1, resource: "runtimeclasses",
			newObj: func() runtime.Object { return &nodev1.RuntimeClass{} }, newList: func() runtime.Object { return &nodev1.RuntimeClassList{} }},

		// admissionregistration.k8s.io/v1
		{gv: admissionRegV1, resource: "mutatingwebhookconfigurations", categories: categoryAPIExts,
			newObj:  func() runtime.Object { return &admissionregistrationv1.MutatingWebhookConfiguration{} },
			newList: func() runtime.Object { return &admissionregistrationv1.MutatingWebhookConfigurationList{} }},
		{gv: admissionRegV1, resource: "validatingwebhookconfigurations", categories: categoryAPIExts,
			newObj:  func() runtime.Object { return &admissionregistrationv1.ValidatingWebhookConfiguration{} },
			newList: func() runtime.Object { return &admissionregistrationv1.ValidatingWebhookConfigurationList{} }},
		{gv: admissionRegV1, resource: "validatingadmissionpolicies", categories: categoryAPIExts, hasStatus: true,
			newObj:  func() runtime.Object { return &admissionregistrationv1.ValidatingAdmissionPolicy{} },
			newList: func() runtime.Object { return &admissionregistrationv1.ValidatingAdmissionPolicyList{} }},
		{gv: admissionRegV1, resource: "validatingadmissionpolicybindings", categories: categoryAPIExts,
			newObj:  func() runtime.Object { return &admissionregistrationv1.ValidatingAdmissionPolicyBinding{} },
			newList: func() runtime.Object { return &admissionregistrationv1.ValidatingAdmissionPolicyBindingList{} }},

		// Approval (the /approval subresource) also writes status; serving it
		// is the REST layer's choice.
		{gv: certificatesV1, resource: "certificatesigningrequests", shortNames: []string{"csr"}, hasStatus: true,
			newObj: func() runtime.Object { return &certificatesv1.CertificateSigningRequest{} }, newList: func() runtime.Object { return &certificatesv1.CertificateSigningRequestList{} }},

		// resource.k8s.io/v1: Dynamic Resource Allocation.
		{gv: resourcev1.SchemeGroupVersion, resource: "deviceclasses",
			newObj: func() runtime.Object { return &resourcev1.DeviceClass{} }, newList: func() runtime.Object { return &resourcev1.DeviceClassList{} }},
		{gv: resourcev1.SchemeGroupVersion, resource: "resourceclaims", namespaced: true, hasStatus: true,
			newObj: func() runtime.Object { return &resourcev1.ResourceClaim{} }, newList: func() runtime.Object { return &resourcev1.ResourceClaimList{} }},
		{gv: resourcev1.SchemeGroupVersion, resource: "resourceclaimtemplates", namespaced: true,
			newObj: func() runtime.Object { return &resourcev1.ResourceClaimTemplate{} }, newList: func() runtime.Object { return &resourcev1.ResourceClaimTemplateList{} }},
		{gv: resourcev1.SchemeGroupVersion, resource: "resourceslices",
			newObj: func() runtime.Object { return &resourcev1.ResourceSlice{} }, newList: func() runtime.Object { return &resourcev1.ResourceSliceList{} }},

		{gv: storageV1, resource: "csistoragecapacities", namespaced: true,
			newObj: func() runtime.Object { return &storagev1.CSIStorageCapacity{} }, newList: func() runtime.Object { return &storagev1.CSIStorageCapacityList{} }},
		{gv: storageV1, resource: "volumeattributesclasses", shortNames: []string{"vac"},
			newObj: func() runtime.Object { return &storagev1.VolumeAttributesClass{} }, newList: func() runtime.Object { return &storagev1.VolumeAttributesClassList{} }},

		{gv: flowcontrolv1.SchemeGroupVersion, resource: "flowschemas", hasStatus: true,
			newObj: func() runtime.Object { return &flowcontrolv1.FlowSchema{} }, newList: func() runtime.Object { return &flowcontrolv1.FlowSchemaList{} }},
		{gv: flowcontrolv1.SchemeGroupVersion, resource: "prioritylevelconfigurations", hasStatus: true,
			newObj:  func() runtime.Object { return &flowcontrolv1.PriorityLevelConfiguration{} },
			newList: func() runtime.Object { return &flowcontrolv1.PriorityLevelConfigurationList{} }},

		{gv: networkingV1, resource: "ipaddresses", shortNames: []string{"ip"},
			newObj: func() runtime.Object { return &networkingv1.IPAddress{} }, newList: func() runtime.Object { return &networkingv1.IPAddressList{} }},
		{gv: networkingV1, resource: "servicecidrs", hasStatus: true,
			newObj: func() runtime.Object { return &networkingv1.ServiceCIDR{} }, newList: func() runtime.Object { return &networkingv1.ServiceCIDRList{} }},

		{gv: admissionRegV1, resource: "mutatingadmissionpolicies", categories: categoryAPIExts,
			newObj:  func() runtime.Object { return &admissionregistrationv1.MutatingAdmissionPolicy{} },
			newList: func() runtime.Object { return &admissionregistrationv1.MutatingAdmissionPolicyList{} }},
		{gv: admissionRegV1, resource: "mutatingadmissionpolicybindings", categories: categoryAPIExts,
			newObj:  func() runtime.Object { return &admissionregistrationv1.MutatingAdmissionPolicyBinding{} },
			newList: func() runtime.Object { return &admissionregistrationv1.MutatingAdmissionPolicyBindingList{} }},

		// Served by default since kube 1.37.
		{gv: certificatesV1, resource: "clustertrustbundles",
			newObj: func() runtime.Object { return &certificatesv1.ClusterTrustBundle{} }, newList: func() runtime.Object { return &certificatesv1.ClusterTrustBundleList{} }},
		{gv: certificatesV1, resource: "podcertificaterequests", namespaced: true, hasStatus: true,
			newObj: func() runtime.Object { return &certificatesv1.PodCertificateRequest{} }, newList: func() runtime.Object { return &certificatesv1.PodCertificateRequestList{} }},
		{gv: resourcev1.SchemeGroupVersion, resource: "devicetaintrules", hasStatus: true,
			newObj: func() runtime.Object { return &resourcev1.DeviceTaintRule{} }, newList: func() runtime.Object { return &resourcev1.DeviceTaintRuleList{} }},
		{gv: storagemigrationv1.SchemeGroupVersion, resource: "storageversionmigrations", hasStatus: true,
			newObj:  func() runtime.Object { return &storagemigrationv1.StorageVersionMigration{} },
			newList: func() runtime.Object { return &storagemigrationv1.StorageVersionMigrationList{} }},
	}
}

var (
	catalogue  []Kind
	byResource = map[schema.GroupVersionResource]int{}
)

func init() {
	for _, s := range specs() {
		gvks, _, err := Scheme.ObjectKinds(s.newObj())
		if err != nil || len(gvks) == 0 {
			panic("builtin: type for " + s.resource + " not registered: " + errString(err))
		}
		kindName := ""
		for _, gvk := range gvks {
			if gvk.GroupVersion() == s.gv {
				kindName = gvk.Kind
			}
		}
		if kindName == "" {
			panic("builtin: " + s.resource + " not registered in " + s.gv.String())
		}
		k := Kind{
			GroupVersion:  s.gv,
			Kind:          kindName,
			ListKind:      kindName + "List",
			Resource:      s.resource,
			Singular:      strings.ToLower(kindName),
			ShortNames:    s.shortNames,
			Categories:    s.categories,
			Namespaced:    s.namespaced,
			HasStatus:     s.hasStatus,
			Scale:         s.scale,
			New:           s.newObj,
			NewList:       s.newList,
			Default:       defaultObject,
			StoragePrefix: storagePrefix(s),
		}
		k.Validate = validatorFor(k)
		k.ValidateUpdate = updateValidatorFor(k)
		k.Fields = objectFields
		gen := generationRules[s.gv.WithResource(s.resource).GroupResource()]
		k.GenerationOnCreate, k.GenerationChanged = gen.onCreate, gen.changed
		switch {
		case s.gv == autoscalingV1 && s.resource == "horizontalpodautoscalers":
			v2 := autoscalingV2.WithResource("horizontalpodautoscalers")
			k.StoredAs, k.ToStored, k.FromStored = &v2, hpaToV2, hpaFromV2
		case s.gv == eventsV1 && s.resource == "events":
			core := coreV1.WithResource("events")
			k.StoredAs, k.ToStored, k.FromStored = &core, eventToCore, eventFromCore
		}
		byResource[s.gv.WithResource(s.resource)] = len(catalogue)
		catalogue = append(catalogue, k)
	}
}

func storagePrefix(s spec) string {
	switch {
	case s.gv.Group == "":
		return "/registry/" + s.resource
	case s.storageVersionTag:
		return "/registry/" + s.gv.Group + "/" + s.gv.Version + "/" + s.resource
	default:
		return "/registry/" + s.gv.Group + "/" + s.resource
	}
}

func errString(err error) string {
	if err == nil {
		return "no kinds"
	}
	return err.Error()
}

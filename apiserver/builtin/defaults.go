package builtin

import (
	"strings"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	appsv1 "k8s.io/api/apps/v1"
	autoscalingv1 "k8s.io/api/autoscaling/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	batchv1 "k8s.io/api/batch/v1"
	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	networkingv1 "k8s.io/api/networking/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	resourcev1 "k8s.io/api/resource/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// defaultObject fills kube's defaults into obj in place, so objects read
// back look as they do from a real cluster. Values kube assigns elsewhere
// (cluster IPs, node ports, admission plugins) are not set here.
func defaultObject(obj runtime.Object) {
	if isNil(obj) {
		return
	}
	switch o := obj.(type) {
	case *corev1.Pod:
		defaultPod(o)
	case *corev1.PodTemplate:
		defaultPodTemplate(&o.Template, corev1.RestartPolicyAlways)
	case *corev1.ReplicationController:
		defaultReplicationController(o)
	case *corev1.Service:
		defaultService(o)
	case *corev1.Secret:
		if o.Type == "" {
			o.Type = corev1.SecretTypeOpaque
		}
		mergeStringData(o)
	case *corev1.Namespace:
		defaultNamespace(o)
	case *corev1.PersistentVolume:
		defaultPersistentVolume(o)
	case *corev1.PersistentVolumeClaim:
		defaultPersistentVolumeClaim(o)
	case *corev1.Endpoints:
		for i := range o.Subsets {
			for j := range o.Subsets[i].Ports {
				defaultProtocol(&o.Subsets[i].Ports[j].Protocol)
			}
		}
	case *corev1.Node:
		// The kubelet reports both; a node registered with capacity only
		// has everything allocatable.
		if o.Status.Allocatable == nil && o.Status.Capacity != nil {
			o.Status.Allocatable = o.Status.Capacity.DeepCopy()
		}
	case *flowcontrolv1.FlowSchema:
		defaultFlowSchema(o)
	case *flowcontrolv1.PriorityLevelConfiguration:
		defaultPriorityLevel(o)
	case *admissionregistrationv1.MutatingAdmissionPolicy:
		defaultMutatingAdmissionPolicy(o)
	case *certificatesv1.PodCertificateRequest:
		defaultPodCertificateRequest(o)
	case *resourcev1.DeviceTaintRule:
		defaultDeviceTaintRule(o)
	case *appsv1.Deployment:
		defaultDeployment(o)
	case *appsv1.ReplicaSet:
		setIfNil(&o.Spec.Replicas, 1)
		defaultPodTemplate(&o.Spec.Template, corev1.RestartPolicyAlways)
	case *appsv1.StatefulSet:
		defaultStatefulSet(o)
	case *appsv1.DaemonSet:
		defaultDaemonSet(o)
	case *batchv1.Job:
		defaultJob(o)
	case *batchv1.CronJob:
		defaultCronJob(o)
	case *autoscalingv1.HorizontalPodAutoscaler:
		setIfNil(&o.Spec.MinReplicas, 1)
		// kube stores HPAs as v2, where no metrics means 80% CPU; reading
		// back as v1 shows that target.
		setIfNil(&o.Spec.TargetCPUUtilizationPercentage, 80)
	case *autoscalingv2.HorizontalPodAutoscaler:
		defaultHPAv2(o)
	case *discoveryv1.EndpointSlice:
		for i := range o.Ports {
			if o.Ports[i].Protocol == nil {
				tcp := corev1.ProtocolTCP
				o.Ports[i].Protocol = &tcp
			}
			setIfNil(&o.Ports[i].Name, "")
		}
	case *networkingv1.NetworkPolicy:
		defaultNetworkPolicy(o)
	case *rbacv1.RoleBinding:
		defaultRoleRef(&o.RoleRef)
		defaultSubjects(o.Subjects)
	case *rbacv1.ClusterRoleBinding:
		defaultRoleRef(&o.RoleRef)
		defaultSubjects(o.Subjects)
	case *admissionregistrationv1.MutatingWebhookConfiguration:
		for i := range o.Webhooks {
			defaultMutatingWebhook(&o.Webhooks[i])
		}
	case *admissionregistrationv1.ValidatingWebhookConfiguration:
		for i := range o.Webhooks {
			defaultValidatingWebhook(&o.Webhooks[i])
		}
	case *admissionregistrationv1.ValidatingAdmissionPolicy:
		setIfNil(&o.Spec.FailurePolicy, admissionregistrationv1.Fail)
		if mc := o.Spec.MatchConstraints; mc != nil {
			setIfNil(&mc.MatchPolicy, admissionregistrationv1.Equivalent)
			setIfNil(&mc.NamespaceSelector, metav1.LabelSelector{})
			setIfNil(&mc.ObjectSelector, metav1.LabelSelector{})
			for i := range mc.ResourceRules {
				setIfNil(&mc.ResourceRules[i].Scope, admissionregistrationv1.AllScopes)
			}
		}
	case *schedulingv1.PriorityClass:
		setIfNil(&o.PreemptionPolicy, corev1.PreemptLowerPriority)
	case *storagev1.StorageClass:
		setIfNil(&o.ReclaimPolicy, corev1.PersistentVolumeReclaimDelete)
		setIfNil(&o.VolumeBindingMode, storagev1.VolumeBindingImmediate)
	case *storagev1.CSIDriver:
		defaultCSIDriver(o)
	}
}

// setIfNil points *p at a copy of v when *p is nil.
func setIfNil[T any](p **T, v T) {
	if *p == nil {
		*p = &v
	}
}

func defaultProtocol(p *corev1.Protocol) {
	if *p == "" {
		*p = corev1.ProtocolTCP
	}
}

func defaultPod(pod *corev1.Pod) {
	defaultPodSpec(&pod.Spec, corev1.RestartPolicyAlways)
	// Requests default to limits, on pods only (templates keep what the
	// user wrote, as in kube).
	for _, containers := range [][]corev1.Container{pod.Spec.InitContainers, pod.Spec.Containers} {
		for i := range containers {
			copyLimitsToRequests(&containers[i].Resources)
		}
	}
	if pod.Status.Phase == "" {
		pod.Status.Phase = corev1.PodPending
	}
	if pod.Status.QOSClass == "" {
		pod.Status.QOSClass = podQOSClass(&pod.Spec)
	}
}

func copyLimitsToRequests(r *corev1.ResourceRequirements) {
	for name, limit := range r.Limits {
		if r.Requests == nil {
			r.Requests = corev1.ResourceList{}
		}
		if _, ok := r.Requests[name]; !ok {
			r.Requests[name] = limit.DeepCopy()
		}
	}
}

// podQOSClass is kube's QoS rule for cpu and memory: nothing requested is
// BestEffort, every container with equal requests and limits for both is
// Guaranteed, anything else Burstable.
func podQOSClass(spec *corev1.PodSpec) corev1.PodQOSClass {
	any, guaranteed := false, true
	for _, containers := range [][]corev1.Container{spec.InitContainers, spec.Containers} {
		for _, c := range containers {
			for _, name := range []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory} {
				req, hasReq := c.Resources.Requests[name]
				limit, hasLimit := c.Resources.Limits[name]
				if hasReq || hasLimit {
					any = true
				}
				if !hasLimit || (hasReq && req.Cmp(limit) != 0) {
					guaranteed = false
				}
			}
		}
	}
	switch {
	case !any:
		return corev1.PodQOSBestEffort
	case guaranteed:
		return corev1.PodQOSGuaranteed
	default:
		return corev1.PodQOSBurstable
	}
}

// defaultPodTemplate defaults a template's pod spec. restartPolicy is the
// default for the owning kind; "" leaves it unset (Jobs must choose).
func defaultPodTemplate(t *corev1.PodTemplateSpec, restartPolicy corev1.RestartPolicy) {
	defaultPodSpec(&t.Spec, restartPolicy)
}

func defaultPodSpec(spec *corev1.PodSpec, restartPolicy corev1.RestartPolicy) {
	if spec.RestartPolicy == "" {
		spec.RestartPolicy = restartPolicy
	}
	if spec.DNSPolicy == "" {
		spec.DNSPolicy = corev1.DNSClusterFirst
	}
	if spec.SchedulerName == "" {
		spec.SchedulerName = corev1.DefaultSchedulerName
	}
	setIfNil(&spec.TerminationGracePeriodSeconds, corev1.DefaultTerminationGracePeriodSeconds)
	setIfNil(&spec.SecurityContext, corev1.PodSecurityContext{})
	setIfNil(&spec.EnableServiceLinks, corev1.DefaultEnableServiceLinks)
	// The deprecated field mirrors the current one, as kube's v1 conversion does.
	if spec.DeprecatedServiceAccount == "" {
		spec.DeprecatedServiceAccount = spec.ServiceAccountName
	}
	for i := range spec.InitContainers {
		defaultContainer(&spec.InitContainers[i], spec.HostNetwork)
	}
	for i := range spec.Containers {
		defaultContainer(&spec.Containers[i], spec.HostNetwork)
	}
	for i := range spec.Volumes {
		defaultVolume(&spec.Volumes[i])
	}
}

func defaultContainer(c *corev1.Container, hostNetwork bool) {
	if c.ImagePullPolicy == "" {
		c.ImagePullPolicy = imagePullPolicyFor(c.Image)
	}
	if c.TerminationMessagePath == "" {
		c.TerminationMessagePath = corev1.TerminationMessagePathDefault
	}
	if c.TerminationMessagePolicy == "" {
		c.TerminationMessagePolicy = corev1.TerminationMessageReadFile
	}
	for i := range c.Ports {
		defaultProtocol(&c.Ports[i].Protocol)
		// Host networking shares the node's ports.
		if hostNetwork && c.Ports[i].HostPort == 0 {
			c.Ports[i].HostPort = c.Ports[i].ContainerPort
		}
	}
	for i := range c.Env {
		if ref := c.Env[i].ValueFrom; ref != nil && ref.FieldRef != nil && ref.FieldRef.APIVersion == "" {
			ref.FieldRef.APIVersion = "v1"
		}
	}
	for _, p := range []*corev1.Probe{c.LivenessProbe, c.ReadinessProbe, c.StartupProbe} {
		defaultProbe(p)
	}
	if c.Lifecycle != nil {
		for _, h := range []*corev1.LifecycleHandler{c.Lifecycle.PostStart, c.Lifecycle.PreStop} {
			if h != nil {
				defaultHTTPGet(h.HTTPGet)
			}
		}
	}
}

// imagePullPolicyFor is Always for ":latest" or untagged images, else
// IfNotPresent (an image pinned by digest only counts as tagged).
func imagePullPolicyFor(image string) corev1.PullPolicy {
	name := image
	if at := strings.Index(name, "@"); at >= 0 {
		name = name[:at]
		if !strings.Contains(name[strings.LastIndex(name, "/")+1:], ":") {
			return corev1.PullIfNotPresent
		}
	}
	lastSegment := name[strings.LastIndex(name, "/")+1:]
	colon := strings.LastIndex(lastSegment, ":")
	if colon < 0 || lastSegment[colon+1:] == "latest" {
		return corev1.PullAlways
	}
	return corev1.PullIfNotPresent
}

func defaultProbe(p *corev1.Probe) {
	if p == nil {
		return
	}
	if p.TimeoutSeconds == 0 {
		p.TimeoutSeconds = 1
	}
	if p.PeriodSeconds == 0 {
		p.PeriodSeconds = 10
	}
	if p.SuccessThreshold == 0 {
		p.SuccessThreshold = 1
	}
	if p.FailureThreshold == 0 {
		p.FailureThreshold = 3
	}
	defaultHTTPGet(p.HTTPGet)
	if p.GRPC != nil {
		setIfNil(&p.GRPC.Service, "")
	}
}

func defaultHTTPGet(h *corev1.HTTPGetAction) {
	if h == nil {
		return
	}
	if h.Path == "" {
		h.Path = "/"
	}
	if h.Scheme == "" {
		h.Scheme = corev1.URISchemeHTTP
	}
}

func defaultVolume(v *corev1.Volume) {
	s := &v.VolumeSource
	if *s == (corev1.VolumeSource{}) {
		s.EmptyDir = &corev1.EmptyDirVolumeSource{}
	}
	if s.Secret != nil {
		setIfNil(&s.Secret.DefaultMode, corev1.SecretVolumeSourceDefaultMode)
	}
	if s.ConfigMap != nil {
		setIfNil(&s.ConfigMap.DefaultMode, corev1.ConfigMapVolumeSourceDefaultMode)
	}
	if s.DownwardAPI != nil {
		setIfNil(&s.DownwardAPI.DefaultMode, corev1.DownwardAPIVolumeSourceDefaultMode)
		for i := range s.DownwardAPI.Items {
			if ref := s.DownwardAPI.Items[i].FieldRef; ref != nil && ref.APIVersion == "" {
				ref.APIVersion = "v1"
			}
		}
	}
	if s.Projected != nil {
		setIfNil(&s.Projected.DefaultMode, corev1.ProjectedVolumeSourceDefaultMode)
		for i := range s.Projected.Sources {
			if sat := s.Projected.Sources[i].ServiceAccountToken; sat != nil {
				setIfNil(&sat.ExpirationSeconds, 3600)
			}
			if dapi := s.Projected.Sources[i].DownwardAPI; dapi != nil {
				for j := range dapi.Items {
					if ref := dapi.Items[j].FieldRef; ref != nil && ref.APIVersion == "" {
						ref.APIVersion = "v1"
					}
				}
			}
		}
	}
	if s.HostPath != nil {
		setIfNil(&s.HostPath.Type, corev1.HostPathUnset)
	}
}

func defaultReplicationController(rc *corev1.ReplicationController) {
	setIfNil(&rc.Spec.Replicas, 1)
	if rc.Spec.Template == nil {
		return
	}
	defaultPodTemplate(rc.Spec.Template, corev1.RestartPolicyAlways)
	templateLabels := rc.Spec.Template.Labels
	if len(templateLabels) == 0 {
		return
	}
	if len(rc.Spec.Selector) == 0 {
		rc.Spec.Selector = copyLabels(templateLabels)
	}
	if len(rc.Labels) == 0 {
		rc.Labels = copyLabels(templateLabels)
	}
}

func copyLabels(in map[string]string) map[string]string {
	out := make(map[string]string, len(in))
	for k, v := range in {
		out[k] = v
	}
	return out
}

func defaultService(svc *corev1.Service) {
	spec := &svc.Spec
	if spec.Type == "" {
		spec.Type = corev1.ServiceTypeClusterIP
	}
	if spec.SessionAffinity == "" {
		spec.SessionAffinity = corev1.ServiceAffinityNone
	}
	if spec.SessionAffinity == corev1.ServiceAffinityClientIP && spec.SessionAffinityConfig == nil {
		timeout := corev1.DefaultClientIPServiceAffinitySeconds
		spec.SessionAffinityConfig = &corev1.SessionAffinityConfig{ClientIP: &corev1.ClientIPConfig{TimeoutSeconds: &timeout}}
	}
	for i := range spec.Ports {
		p := &spec.Ports[i]
		defaultProtocol(&p.Protocol)
		if p.TargetPort == (intstr.IntOrString{}) {
			p.TargetPort = intstr.FromInt32(p.Port)
		}
	}
	if spec.Type == corev1.ServiceTypeExternalName {
		return
	}
	if (spec.Type == corev1.ServiceTypeNodePort || spec.Type == corev1.ServiceTypeLoadBalancer) && spec.ExternalTrafficPolicy == "" {
		spec.ExternalTrafficPolicy = corev1.ServiceExternalTrafficPolicyCluster
	}
	if spec.Type == corev1.ServiceTypeLoadBalancer {
		setIfNil(&spec.AllocateLoadBalancerNodePorts, true)
	}
	setIfNil(&spec.InternalTrafficPolicy, corev1.ServiceInternalTrafficPolicyCluster)
	if spec.ClusterIP != "" && len(spec.ClusterIPs) == 0 {
		spec.ClusterIPs = []string{spec.ClusterIP}
	}
	// devplane is a single-stack IPv4 cluster. As in kube, headless
	// services without a selector ask for every family the cluster has.
	headlessWithoutSelector := spec.ClusterIP == corev1.ClusterIPNone && len(spec.Selector) == 0
	if spec.IPFamilyPolicy == nil {
		policy := corev1.IPFamilyPolicySingleStack
		if headlessWithoutSelector {
			policy = corev1.IPFamilyPolicyRequireDualStack
		}
		spec.IPFamilyPolicy = &policy
	}
	if len(spec.IPFamilies) == 0 {
		spec.IPFamilies = []corev1.IPFamily{corev1.IPv4Protocol}
	}
}

func defaultNamespace(ns *corev1.Namespace) {
	if ns.Status.Phase == "" {
		ns.Status.Phase = corev1.NamespaceActive
	}
	// The finalizer is added at creation; never put it back on a namespace
	// being deleted (its controller removes it to finish the deletion).
	if ns.DeletionTimestamp == nil && ns.Status.Phase == corev1.NamespaceActive && len(ns.Spec.Finalizers) == 0 {
		ns.Spec.Finalizers = []corev1.FinalizerName{corev1.FinalizerKubernetes}
	}
	if ns.Name != "" {
		if ns.Labels == nil {
			ns.Labels = map[string]string{}
		}
		ns.Labels[corev1.LabelMetadataName] = ns.Name
	}
}

func defaultPersistentVolume(pv *corev1.PersistentVolume) {
	if pv.Spec.PersistentVolumeReclaimPolicy == "" {
		pv.Spec.PersistentVolumeReclaimPolicy = corev1.PersistentVolumeReclaimRetain
	}
	setIfNil(&pv.Spec.VolumeMode, corev1.PersistentVolumeFilesystem)
	if pv.Status.Phase == "" {
		pv.Status.Phase = corev1.VolumePending
	}
}

func defaultPersistentVolumeClaim(pvc *corev1.PersistentVolumeClaim) {
	setIfNil(&pvc.Spec.VolumeMode, corev1.PersistentVolumeFilesystem)
	if pvc.Status.Phase == "" {
		pvc.Status.Phase = corev1.ClaimPending
	}
}

func defaultDeployment(d *appsv1.Deployment) {
	setIfNil(&d.Spec.Replicas, 1)
	if d.Spec.Strategy.Type == "" {
		d.Spec.Strategy.Type = appsv1.RollingUpdateDeploymentStrategyType
	}
	if d.Spec.Strategy.Type == appsv1.RollingUpdateDeploymentStrategyType {
		setIfNil(&d.Spec.Strategy.RollingUpdate, appsv1.RollingUpdateDeployment{})
		quarter := intstr.FromString("25%")
		setIfNil(&d.Spec.Strategy.RollingUpdate.MaxUnavailable, quarter)
		setIfNil(&d.Spec.Strategy.RollingUpdate.MaxSurge, quarter)
	}
	setIfNil(&d.Spec.RevisionHistoryLimit, 10)
	setIfNil(&d.Spec.ProgressDeadlineSeconds, 600)
	defaultPodTemplate(&d.Spec.Template, corev1.RestartPolicyAlways)
}

func defaultStatefulSet(s *appsv1.StatefulSet) {
	setIfNil(&s.Spec.Replicas, 1)
	if s.Spec.PodManagementPolicy == "" {
		s.Spec.PodManagementPolicy = appsv1.OrderedReadyPodManagement
	}
	if s.Spec.UpdateStrategy.Type == "" {
		s.Spec.UpdateStrategy.Type = appsv1.RollingUpdateStatefulSetStrategyType
	}
	if s.Spec.UpdateStrategy.Type == appsv1.RollingUpdateStatefulSetStrategyType {
		setIfNil(&s.Spec.UpdateStrategy.RollingUpdate, appsv1.RollingUpdateStatefulSetStrategy{})
		setIfNil(&s.Spec.UpdateStrategy.RollingUpdate.Partition, 0)
	}
	setIfNil(&s.Spec.RevisionHistoryLimit, 10)
	setIfNil(&s.Spec.PersistentVolumeClaimRetentionPolicy, appsv1.StatefulSetPersistentVolumeClaimRetentionPolicy{})
	retention := s.Spec.PersistentVolumeClaimRetentionPolicy
	if retention.WhenDeleted == "" {
		retention.WhenDeleted = appsv1.RetainPersistentVolumeClaimRetentionPolicyType
	}
	if retention.WhenScaled == "" {
		retention.WhenScaled = appsv1.RetainPersistentVolumeClaimRetentionPolicyType
	}
	for i := range s.Spec.VolumeClaimTemplates {
		defaultPersistentVolumeClaim(&s.Spec.VolumeClaimTemplates[i])
	}
	defaultPodTemplate(&s.Spec.Template, corev1.RestartPolicyAlways)
}

func defaultDaemonSet(ds *appsv1.DaemonSet) {
	if ds.Spec.UpdateStrategy.Type == "" {
		ds.Spec.UpdateStrategy.Type = appsv1.RollingUpdateDaemonSetStrategyType
	}
	if ds.Spec.UpdateStrategy.Type == appsv1.RollingUpdateDaemonSetStrategyType {
		setIfNil(&ds.Spec.UpdateStrategy.RollingUpdate, appsv1.RollingUpdateDaemonSet{})
		setIfNil(&ds.Spec.UpdateStrategy.RollingUpdate.MaxUnavailable, intstr.FromInt32(1))
		setIfNil(&ds.Spec.UpdateStrategy.RollingUpdate.MaxSurge, intstr.FromInt32(0))
	}
	setIfNil(&ds.Spec.RevisionHistoryLimit, 10)
	defaultPodTemplate(&ds.Spec.Template, corev1.RestartPolicyAlways)
}

// Labels the Job controller finds its pods by.
const (
	jobControllerUIDLabel       = "batch.kubernetes.io/controller-uid"
	jobNameLabel                = "batch.kubernetes.io/job-name"
	legacyJobControllerUIDLabel = "controller-uid"
	legacyJobNameLabel          = "job-name"
)

func defaultJob(job *batchv1.Job) {
	spec := &job.Spec
	if spec.Completions == nil && spec.Parallelism == nil {
		spec.Completions = ptrTo[int32](1)
	}
	setIfNil(&spec.Parallelism, 1)
	setIfNil(&spec.BackoffLimit, 6)
	setIfNil(&spec.CompletionMode, batchv1.NonIndexedCompletion)
	setIfNil(&spec.Suspend, false)
	if spec.PodReplacementPolicy == nil {
		policy := batchv1.TerminatingOrFailed
		if spec.PodFailurePolicy != nil {
			policy = batchv1.Failed
		}
		spec.PodReplacementPolicy = &policy
	}
	generateJobSelector(job)
	// kube copies the template's labels (generated ones included) to a Job
	// that has none.
	if len(job.Labels) == 0 && len(spec.Template.Labels) > 0 {
		job.Labels = copyLabels(spec.Template.Labels)
	}
	defaultPodTemplate(&spec.Template, "")
}

// generateJobSelector gives a Job without manualSelector a selector on its
// uid and labels its template to match. It needs metadata.uid, so it does
// nothing before the uid is set, nor when a selector exists (updates keep
// theirs).
func generateJobSelector(job *batchv1.Job) {
	if job.Spec.ManualSelector != nil && *job.Spec.ManualSelector {
		return
	}
	if job.Spec.Selector != nil || job.UID == "" {
		return
	}
	uid := string(job.UID)
	job.Spec.Selector = &metav1.LabelSelector{MatchLabels: map[string]string{jobControllerUIDLabel: uid}}
	if job.Spec.Template.Labels == nil {
		job.Spec.Template.Labels = map[string]string{}
	}
	for k, v := range map[string]string{
		jobControllerUIDLabel:       uid,
		jobNameLabel:                job.Name,
		legacyJobControllerUIDLabel: uid,
		legacyJobNameLabel:          job.Name,
	} {
		if _, set := job.Spec.Template.Labels[k]; !set {
			job.Spec.Template.Labels[k] = v
		}
	}
}

func defaultCronJob(cj *batchv1.CronJob) {
	if cj.Spec.ConcurrencyPolicy == "" {
		cj.Spec.ConcurrencyPolicy = batchv1.AllowConcurrent
	}
	setIfNil(&cj.Spec.Suspend, false)
	setIfNil(&cj.Spec.SuccessfulJobsHistoryLimit, 3)
	setIfNil(&cj.Spec.FailedJobsHistoryLimit, 1)
	// As in kube, only the pod template inside the job template is
	// defaulted; the Job's own defaults apply when a Job is created.
	defaultPodTemplate(&cj.Spec.JobTemplate.Spec.Template, "")
}

func defaultHPAv2(hpa *autoscalingv2.HorizontalPodAutoscaler) {
	setIfNil(&hpa.Spec.MinReplicas, 1)
	if len(hpa.Spec.Metrics) == 0 {
		hpa.Spec.Metrics = []autoscalingv2.MetricSpec{{
			Type: autoscalingv2.ResourceMetricSourceType,
			Resource: &autoscalingv2.ResourceMetricSource{
				Name:   corev1.ResourceCPU,
				Target: autoscalingv2.MetricTarget{Type: autoscalingv2.UtilizationMetricType, AverageUtilization: ptrTo[int32](80)},
			},
		}}
	}
	// Behavior is only completed when given, as in kube.
	if b := hpa.Spec.Behavior; b != nil {
		b.ScaleUp = completeScalingRules(b.ScaleUp, 0, []autoscalingv2.HPAScalingPolicy{
			{Type: autoscalingv2.PodsScalingPolicy, Value: 4, PeriodSeconds: 15},
			{Type: autoscalingv2.PercentScalingPolicy, Value: 100, PeriodSeconds: 15},
		})
		b.ScaleDown = completeScalingRules(b.ScaleDown, 300, []autoscalingv2.HPAScalingPolicy{
			{Type: autoscalingv2.PercentScalingPolicy, Value: 100, PeriodSeconds: 15},
		})
	}
}

func completeScalingRules(rules *autoscalingv2.HPAScalingRules, window int32, policies []autoscalingv2.HPAScalingPolicy) *autoscalingv2.HPAScalingRules {
	if rules == nil {
		rules = &autoscalingv2.HPAScalingRules{}
	}
	setIfNil(&rules.StabilizationWindowSeconds, window)
	setIfNil(&rules.SelectPolicy, autoscalingv2.MaxChangePolicySelect)
	if len(rules.Policies) == 0 {
		rules.Policies = policies
	}
	return rules
}

func defaultNetworkPolicy(np *networkingv1.NetworkPolicy) {
	for i := range np.Spec.Ingress {
		for j := range np.Spec.Ingress[i].Ports {
			setIfNil(&np.Spec.Ingress[i].Ports[j].Protocol, corev1.ProtocolTCP)
		}
	}
	for i := range np.Spec.Egress {
		for j := range np.Spec.Egress[i].Ports {
			setIfNil(&np.Spec.Egress[i].Ports[j].Protocol, corev1.ProtocolTCP)
		}
	}
	if len(np.Spec.PolicyTypes) == 0 {
		np.Spec.PolicyTypes = []networkingv1.PolicyType{networkingv1.PolicyTypeIngress}
		if len(np.Spec.Egress) > 0 {
			np.Spec.PolicyTypes = append(np.Spec.PolicyTypes, networkingv1.PolicyTypeEgress)
		}
	}
}

// defaultRoleRef names the RBAC group when a binding's roleRef leaves it
// out: roles only come from there.
func defaultRoleRef(ref *rbacv1.RoleRef) {
	if ref.APIGroup == "" {
		ref.APIGroup = rbacv1.GroupName
	}
}

func defaultSubjects(subjects []rbacv1.Subject) {
	for i := range subjects {
		s := &subjects[i]
		if s.APIGroup == "" && (s.Kind == rbacv1.UserKind || s.Kind == rbacv1.GroupKind) {
			s.APIGroup = rbacv1.GroupName
		}
	}
}

func defaultMutatingWebhook(w *admissionregistrationv1.MutatingWebhook) {
	defaultWebhookCommon(&w.FailurePolicy, &w.MatchPolicy, &w.NamespaceSelector, &w.ObjectSelector, &w.TimeoutSeconds, &w.ClientConfig, w.Rules)
	setIfNil(&w.ReinvocationPolicy, admissionregistrationv1.NeverReinvocationPolicy)
}

func defaultValidatingWebhook(w *admissionregistrationv1.ValidatingWebhook) {
	defaultWebhookCommon(&w.FailurePolicy, &w.MatchPolicy, &w.NamespaceSelector, &w.ObjectSelector, &w.TimeoutSeconds, &w.ClientConfig, w.Rules)
}

func defaultWebhookCommon(failure **admissionregistrationv1.FailurePolicyType, match **admissionregistrationv1.MatchPolicyType,
	nsSelector, objSelector **metav1.LabelSelector, timeout **int32,
	client *admissionregistrationv1.WebhookClientConfig, rules []admissionregistrationv1.RuleWithOperations) {
	setIfNil(failure, admissionregistrationv1.Fail)
	setIfNil(match, admissionregistrationv1.Equivalent)
	setIfNil(nsSelector, metav1.LabelSelector{})
	setIfNil(objSelector, metav1.LabelSelector{})
	setIfNil(timeout, 10)
	if client.Service != nil {
		setIfNil(&client.Service.Port, 443)
	}
	for i := range rules {
		setIfNil(&rules[i].Scope, admissionregistrationv1.AllScopes)
	}
}

func defaultCSIDriver(d *storagev1.CSIDriver) {
	setIfNil(&d.Spec.AttachRequired, true)
	setIfNil(&d.Spec.PodInfoOnMount, false)
	setIfNil(&d.Spec.StorageCapacity, false)
	setIfNil(&d.Spec.RequiresRepublish, false)
	setIfNil(&d.Spec.SELinuxMount, false)
	setIfNil(&d.Spec.FSGroupPolicy, storagev1.ReadWriteOnceWithFSTypeFSGroupPolicy)
	if len(d.Spec.VolumeLifecycleModes) == 0 {
		d.Spec.VolumeLifecycleModes = []storagev1.VolumeLifecycleMode{storagev1.VolumeLifecyclePersistent}
	}
}

func ptrTo[T any](v T) *T { return &v }

// mergeStringData does what kube's conversion does: stringData is a
// write-only convenience, merged into data (winning on conflicts) and never
// stored or returned.
func mergeStringData(s *corev1.Secret) {
	if len(s.StringData) == 0 {
		s.StringData = nil
		return
	}
	if s.Data == nil {
		s.Data = map[string][]byte{}
	}
	for k, v := range s.StringData {
		s.Data[k] = []byte(v)
	}
	s.StringData = nil
}

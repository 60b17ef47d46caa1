package builtin

import (
	"fmt"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/intstr"
	utilvalidation "k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// Restart policies allowed per owner: any for bare pods, Always for
// long-running controllers, OnFailure/Never for jobs.
var (
	podRestartPolicies        = []corev1.RestartPolicy{corev1.RestartPolicyAlways, corev1.RestartPolicyOnFailure, corev1.RestartPolicyNever}
	controllerRestartPolicies = []corev1.RestartPolicy{corev1.RestartPolicyAlways}
	jobRestartPolicies        = []corev1.RestartPolicy{corev1.RestartPolicyOnFailure, corev1.RestartPolicyNever}
)

var (
	supportedPortProtocols = []corev1.Protocol{corev1.ProtocolSCTP, corev1.ProtocolTCP, corev1.ProtocolUDP}
	supportedDNSPolicies   = []corev1.DNSPolicy{corev1.DNSClusterFirstWithHostNet, corev1.DNSClusterFirst, corev1.DNSDefault, corev1.DNSNone}
	supportedPullPolicies  = []corev1.PullPolicy{corev1.PullAlways, corev1.PullIfNotPresent, corev1.PullNever}
)

// kubePodSpecChecks are kube's own checks of a pod spec's volume sources,
// container resources and sysctls (rules many and intricate), from
// apiserver/kubevalidation. builtin does not import that package: kube's
// API packages it brings add kube's defaulting and conversions to
// k8s.io/api's scheme builders as they initialize, which Scheme must be
// built without, so builtin initializes before them.
var kubePodSpecChecks func(spec *corev1.PodSpec, fldPath *field.Path) field.ErrorList

// kubePodUpdateChecks is kube's whole validation of a pod update (what may
// change, and how), from apiserver/kubevalidation; without it (builtin's
// own tests) a pod update gets the generic checks only.
var kubePodUpdateChecks func(pod, old *corev1.Pod) field.ErrorList

// SetKubePodSpecChecks installs kube's pod spec checks and its pod update
// validation; call it from an init function, before any validation runs.
func SetKubePodSpecChecks(checks func(spec *corev1.PodSpec, fldPath *field.Path) field.ErrorList, update func(pod, old *corev1.Pod) field.ErrorList) {
	kubePodSpecChecks, kubePodUpdateChecks = checks, update
}

// validatePodTemplate checks a controller's pod template. claimVolumes are
// volume names the controller adds itself (a StatefulSet's claim templates),
// which mounts may name though the template does not list them.
func validatePodTemplate(t *corev1.PodTemplateSpec, fldPath *field.Path, restartPolicies []corev1.RestartPolicy, claimVolumes ...string) field.ErrorList {
	errs := metav1validation.ValidateLabels(t.Labels, fldPath.Child("metadata", "labels"))
	errs = append(errs, apivalidation.ValidateAnnotations(t.Annotations, fldPath.Child("metadata", "annotations"))...)
	return append(errs, validatePodSpec(&t.Spec, fldPath.Child("spec"), restartPolicies, claimVolumes...)...)
}

func validatePodSpec(spec *corev1.PodSpec, fldPath *field.Path, restartPolicies []corev1.RestartPolicy, claimVolumes ...string) field.ErrorList {
	var errs field.ErrorList
	if kubePodSpecChecks != nil {
		errs = kubePodSpecChecks(spec, fldPath)
	}
	volumes := volumeNames(spec.Volumes)
	for _, name := range claimVolumes {
		volumes[name] = true
	}
	if len(spec.Containers) == 0 {
		errs = append(errs, field.Required(fldPath.Child("containers"), ""))
	}
	// Container names are unique across init and regular containers.
	names := map[string]bool{}
	errs = append(errs, validateContainers(spec.InitContainers, fldPath.Child("initContainers"), names, volumes)...)
	errs = append(errs, validateContainers(spec.Containers, fldPath.Child("containers"), names, volumes)...)
	errs = append(errs, validateRestartPolicy(spec.RestartPolicy, fldPath.Child("restartPolicy"), restartPolicies)...)
	if spec.DNSPolicy != "" && !containsValue(supportedDNSPolicies, spec.DNSPolicy) {
		errs = append(errs, field.NotSupported(fldPath.Child("dnsPolicy"), spec.DNSPolicy, supportedDNSPolicies))
	}
	if spec.TerminationGracePeriodSeconds != nil && *spec.TerminationGracePeriodSeconds < 0 {
		errs = append(errs, field.Invalid(fldPath.Child("terminationGracePeriodSeconds"), *spec.TerminationGracePeriodSeconds, "must be >= 0"))
	}
	if spec.ServiceAccountName != "" {
		for _, msg := range apivalidation.NameIsDNSSubdomain(spec.ServiceAccountName, false) {
			errs = append(errs, field.Invalid(fldPath.Child("serviceAccountName"), spec.ServiceAccountName, msg))
		}
	}
	return append(errs, metav1validation.ValidateLabels(spec.NodeSelector, fldPath.Child("nodeSelector"))...)
}

func validateRestartPolicy(policy corev1.RestartPolicy, fldPath *field.Path, allowed []corev1.RestartPolicy) field.ErrorList {
	if containsValue(allowed, policy) {
		return nil
	}
	if policy == "" {
		quoted := make([]string, len(allowed))
		for i, p := range allowed {
			quoted[i] = fmt.Sprintf("%q", p)
		}
		return field.ErrorList{field.Required(fldPath, "valid values: "+strings.Join(quoted, ", "))}
	}
	return field.ErrorList{field.NotSupported(fldPath, policy, allowed)}
}

// volumeNames is the set of the volumes' names, which mounts may name.
func volumeNames(volumes []corev1.Volume) map[string]bool {
	names := make(map[string]bool, len(volumes))
	for _, v := range volumes {
		names[v.Name] = true
	}
	return names
}

func validateContainers(containers []corev1.Container, fldPath *field.Path, names, volumes map[string]bool) field.ErrorList {
	var errs field.ErrorList
	for i := range containers {
		c := &containers[i]
		cPath := fldPath.Index(i)
		switch {
		case c.Name == "":
			errs = append(errs, field.Required(cPath.Child("name"), ""))
		case names[c.Name]:
			errs = append(errs, field.Duplicate(cPath.Child("name"), c.Name))
		default:
			for _, msg := range utilvalidation.IsDNS1123Label(c.Name) {
				errs = append(errs, field.Invalid(cPath.Child("name"), c.Name, msg))
			}
		}
		names[c.Name] = true
		if strings.TrimSpace(c.Image) == "" {
			errs = append(errs, field.Required(cPath.Child("image"), ""))
		} else if c.Image != strings.TrimSpace(c.Image) {
			errs = append(errs, field.Invalid(cPath.Child("image"), c.Image, "must not have leading or trailing whitespace"))
		}
		if c.ImagePullPolicy != "" && !containsValue(supportedPullPolicies, c.ImagePullPolicy) {
			errs = append(errs, field.NotSupported(cPath.Child("imagePullPolicy"), c.ImagePullPolicy, supportedPullPolicies))
		}
		errs = append(errs, validateContainerPorts(c.Ports, cPath.Child("ports"))...)
		for j, env := range c.Env {
			if env.Name == "" {
				errs = append(errs, field.Required(cPath.Child("env").Index(j).Child("name"), ""))
			}
		}
		for j, m := range c.VolumeMounts {
			mPath := cPath.Child("volumeMounts").Index(j)
			if m.Name == "" {
				errs = append(errs, field.Required(mPath.Child("name"), ""))
			} else if !volumes[m.Name] {
				errs = append(errs, field.NotFound(mPath.Child("name"), m.Name))
			}
			if m.MountPath == "" {
				errs = append(errs, field.Required(mPath.Child("mountPath"), ""))
			}
		}
		for _, probe := range []struct {
			name  string
			probe *corev1.Probe
		}{{"livenessProbe", c.LivenessProbe}, {"readinessProbe", c.ReadinessProbe}, {"startupProbe", c.StartupProbe}} {
			errs = append(errs, validateProbe(probe.probe, cPath.Child(probe.name))...)
		}
	}
	return errs
}

func validateContainerPorts(ports []corev1.ContainerPort, fldPath *field.Path) field.ErrorList {
	var errs field.ErrorList
	names := map[string]bool{}
	for i, p := range ports {
		pPath := fldPath.Index(i)
		if p.Name != "" {
			for _, msg := range utilvalidation.IsValidPortName(p.Name) {
				errs = append(errs, field.Invalid(pPath.Child("name"), p.Name, msg))
			}
			if names[p.Name] {
				errs = append(errs, field.Duplicate(pPath.Child("name"), p.Name))
			}
			names[p.Name] = true
		}
		if p.ContainerPort == 0 {
			errs = append(errs, field.Required(pPath.Child("containerPort"), ""))
		} else {
			for _, msg := range utilvalidation.IsValidPortNum(int(p.ContainerPort)) {
				errs = append(errs, field.Invalid(pPath.Child("containerPort"), p.ContainerPort, msg))
			}
		}
		if p.HostPort != 0 {
			for _, msg := range utilvalidation.IsValidPortNum(int(p.HostPort)) {
				errs = append(errs, field.Invalid(pPath.Child("hostPort"), p.HostPort, msg))
			}
		}
		errs = append(errs, validateProtocol(p.Protocol, pPath.Child("protocol"))...)
	}
	return errs
}

func validateProtocol(protocol corev1.Protocol, fldPath *field.Path) field.ErrorList {
	if protocol == "" {
		return field.ErrorList{field.Required(fldPath, "")}
	}
	if !containsValue(supportedPortProtocols, protocol) {
		return field.ErrorList{field.NotSupported(fldPath, protocol, supportedPortProtocols)}
	}
	return nil
}

func validateProbe(p *corev1.Probe, fldPath *field.Path) field.ErrorList {
	if p == nil {
		return nil
	}
	var errs field.ErrorList
	handlers := 0
	for _, set := range []bool{p.Exec != nil, p.HTTPGet != nil, p.TCPSocket != nil, p.GRPC != nil} {
		if set {
			handlers++
		}
	}
	if handlers == 0 {
		errs = append(errs, field.Required(fldPath, "must specify a handler type"))
	} else if handlers > 1 {
		errs = append(errs, field.Forbidden(fldPath, "may not specify more than 1 handler type"))
	}
	if p.HTTPGet != nil {
		errs = append(errs, validateNamedPort(p.HTTPGet.Port, fldPath.Child("httpGet", "port"))...)
	}
	if p.TCPSocket != nil {
		errs = append(errs, validateNamedPort(p.TCPSocket.Port, fldPath.Child("tcpSocket", "port"))...)
	}
	for name, v := range map[string]int32{"initialDelaySeconds": p.InitialDelaySeconds, "timeoutSeconds": p.TimeoutSeconds, "periodSeconds": p.PeriodSeconds, "successThreshold": p.SuccessThreshold, "failureThreshold": p.FailureThreshold} {
		errs = append(errs, apivalidation.ValidateNonnegativeField(int64(v), fldPath.Child(name))...)
	}
	return errs
}

// validateNamedPort checks a port given by number or by name.
func validateNamedPort(port intstr.IntOrString, fldPath *field.Path) field.ErrorList {
	var errs field.ErrorList
	if port.Type == intstr.String {
		for _, msg := range utilvalidation.IsValidPortName(port.StrVal) {
			errs = append(errs, field.Invalid(fldPath, port.StrVal, msg))
		}
		return errs
	}
	for _, msg := range utilvalidation.IsValidPortNum(port.IntValue()) {
		errs = append(errs, field.Invalid(fldPath, port.IntValue(), msg))
	}
	return errs
}

// validateSelectorMatchesTemplate is the check every controller kind shares:
// a non-empty, valid selector that selects the template's own labels.
func validateSelectorMatchesTemplate(selector *metav1.LabelSelector, template *corev1.PodTemplateSpec, specPath *field.Path) field.ErrorList {
	selectorPath := specPath.Child("selector")
	if selector == nil {
		return field.ErrorList{field.Required(selectorPath, "")}
	}
	errs := metav1validation.ValidateLabelSelector(selector, metav1validation.LabelSelectorValidationOptions{}, selectorPath)
	if len(selector.MatchLabels)+len(selector.MatchExpressions) == 0 {
		errs = append(errs, field.Invalid(selectorPath, selector, "empty selector is invalid for deployment"))
	}
	parsed, err := metav1.LabelSelectorAsSelector(selector)
	if err != nil {
		return append(errs, field.Invalid(selectorPath, selector, "invalid label selector"))
	}
	if !parsed.Matches(labels.Set(template.Labels)) {
		errs = append(errs, field.Invalid(specPath.Child("template", "metadata", "labels"), template.Labels, "`selector` does not match template `labels`"))
	}
	return errs
}

func validateReplicas(replicas *int32, fldPath *field.Path) field.ErrorList {
	if replicas == nil {
		return nil
	}
	return apivalidation.ValidateNonnegativeField(int64(*replicas), fldPath)
}

func validateDeployment(d *appsv1.Deployment) field.ErrorList {
	s := &d.Spec
	errs := validateReplicas(s.Replicas, specPath.Child("replicas"))
	errs = append(errs, validateSelectorMatchesTemplate(s.Selector, &s.Template, specPath)...)
	errs = append(errs, validatePodTemplate(&s.Template, specPath.Child("template"), controllerRestartPolicies)...)
	if s.RevisionHistoryLimit != nil {
		errs = append(errs, apivalidation.ValidateNonnegativeField(int64(*s.RevisionHistoryLimit), specPath.Child("revisionHistoryLimit"))...)
	}
	errs = append(errs, apivalidation.ValidateNonnegativeField(int64(s.MinReadySeconds), specPath.Child("minReadySeconds"))...)
	if s.ProgressDeadlineSeconds != nil && *s.ProgressDeadlineSeconds <= s.MinReadySeconds {
		errs = append(errs, field.Invalid(specPath.Child("progressDeadlineSeconds"), *s.ProgressDeadlineSeconds, "must be greater than minReadySeconds"))
	}
	strategyPath := specPath.Child("strategy")
	switch s.Strategy.Type {
	case appsv1.RecreateDeploymentStrategyType:
		if s.Strategy.RollingUpdate != nil {
			errs = append(errs, field.Forbidden(strategyPath.Child("rollingUpdate"), "may not be specified when strategy `type` is 'Recreate'"))
		}
	case appsv1.RollingUpdateDeploymentStrategyType:
		if ru := s.Strategy.RollingUpdate; ru != nil {
			errs = append(errs, validateRollingUpdate(ru.MaxUnavailable, ru.MaxSurge, strategyPath.Child("rollingUpdate"))...)
		}
	default:
		errs = append(errs, field.NotSupported(strategyPath.Child("type"), s.Strategy.Type, []appsv1.DeploymentStrategyType{appsv1.RecreateDeploymentStrategyType, appsv1.RollingUpdateDeploymentStrategyType}))
	}
	return errs
}

// validateRollingUpdate checks maxUnavailable/maxSurge: counts or
// percentages, non-negative, and not both zero (nothing could progress).
func validateRollingUpdate(maxUnavailable, maxSurge *intstr.IntOrString, fldPath *field.Path) field.ErrorList {
	var errs field.ErrorList
	unavailablePath, surgePath := fldPath.Child("maxUnavailable"), fldPath.Child("maxSurge")
	errs = append(errs, validatePositiveIntOrPercent(maxUnavailable, unavailablePath)...)
	errs = append(errs, validatePositiveIntOrPercent(maxSurge, surgePath)...)
	if maxUnavailable != nil && maxUnavailable.Type == intstr.String && percentValue(*maxUnavailable) > 100 {
		errs = append(errs, field.Invalid(unavailablePath, maxUnavailable, "must not be greater than 100%"))
	}
	if isZero(maxUnavailable) && isZero(maxSurge) {
		errs = append(errs, field.Invalid(unavailablePath, maxUnavailable, "may not be 0 when `maxSurge` is 0"))
	}
	return errs
}

func validatePositiveIntOrPercent(v *intstr.IntOrString, fldPath *field.Path) field.ErrorList {
	if v == nil {
		return nil
	}
	if v.Type == intstr.String {
		var errs field.ErrorList
		for _, msg := range utilvalidation.IsValidPercent(v.StrVal) {
			errs = append(errs, field.Invalid(fldPath, v, msg))
		}
		return errs
	}
	return apivalidation.ValidateNonnegativeField(int64(v.IntValue()), fldPath)
}

func percentValue(v intstr.IntOrString) int {
	var n int
	if _, err := fmt.Sscanf(v.StrVal, "%d%%", &n); err != nil {
		return 0
	}
	return n
}

func isZero(v *intstr.IntOrString) bool {
	if v == nil {
		return false
	}
	if v.Type == intstr.String {
		return utilvalidation.IsValidPercent(v.StrVal) == nil && percentValue(*v) == 0
	}
	return v.IntVal == 0
}

func validateReplicaSet(rs *appsv1.ReplicaSet) field.ErrorList {
	errs := validateReplicas(rs.Spec.Replicas, specPath.Child("replicas"))
	errs = append(errs, validateSelectorMatchesTemplate(rs.Spec.Selector, &rs.Spec.Template, specPath)...)
	return append(errs, validatePodTemplate(&rs.Spec.Template, specPath.Child("template"), controllerRestartPolicies)...)
}

func validateReplicationController(rc *corev1.ReplicationController) field.ErrorList {
	errs := validateReplicas(rc.Spec.Replicas, specPath.Child("replicas"))
	if len(rc.Spec.Selector) == 0 {
		errs = append(errs, field.Required(specPath.Child("selector"), ""))
	} else {
		errs = append(errs, metav1validation.ValidateLabels(rc.Spec.Selector, specPath.Child("selector"))...)
	}
	if rc.Spec.Template == nil {
		return append(errs, field.Required(specPath.Child("template"), ""))
	}
	if !labels.SelectorFromSet(rc.Spec.Selector).Matches(labels.Set(rc.Spec.Template.Labels)) {
		errs = append(errs, field.Invalid(specPath.Child("template", "metadata", "labels"), rc.Spec.Template.Labels, "`selector` does not match template `labels`"))
	}
	return append(errs, validatePodTemplate(rc.Spec.Template, specPath.Child("template"), controllerRestartPolicies)...)
}

func validateStatefulSet(s *appsv1.StatefulSet) field.ErrorList {
	errs := validateReplicas(s.Spec.Replicas, specPath.Child("replicas"))
	errs = append(errs, validateSelectorMatchesTemplate(s.Spec.Selector, &s.Spec.Template, specPath)...)
	var claims []string
	for _, c := range s.Spec.VolumeClaimTemplates {
		claims = append(claims, c.Name)
	}
	errs = append(errs, validatePodTemplate(&s.Spec.Template, specPath.Child("template"), controllerRestartPolicies, claims...)...)
	policies := []appsv1.PodManagementPolicyType{appsv1.OrderedReadyPodManagement, appsv1.ParallelPodManagement}
	if s.Spec.PodManagementPolicy != "" && !containsValue(policies, s.Spec.PodManagementPolicy) {
		errs = append(errs, field.NotSupported(specPath.Child("podManagementPolicy"), s.Spec.PodManagementPolicy, policies))
	}
	strategies := []appsv1.StatefulSetUpdateStrategyType{appsv1.OnDeleteStatefulSetStrategyType, appsv1.RollingUpdateStatefulSetStrategyType}
	if t := s.Spec.UpdateStrategy.Type; t != "" && !containsValue(strategies, t) {
		errs = append(errs, field.NotSupported(specPath.Child("updateStrategy", "type"), t, strategies))
	}
	return errs
}

// validateStatefulSetUpdate allows only the spec fields kube lets change.
func validateStatefulSetUpdate(s, old *appsv1.StatefulSet) field.ErrorList {
	restOfNew := s.Spec.DeepCopy()
	restOfNew.Replicas = old.Spec.Replicas
	restOfNew.Ordinals = old.Spec.Ordinals
	restOfNew.Template = old.Spec.Template
	restOfNew.UpdateStrategy = old.Spec.UpdateStrategy
	restOfNew.PersistentVolumeClaimRetentionPolicy = old.Spec.PersistentVolumeClaimRetentionPolicy
	restOfNew.MinReadySeconds = old.Spec.MinReadySeconds
	if apiequality.Semantic.DeepEqual(*restOfNew, old.Spec) {
		return nil
	}
	return field.ErrorList{field.Forbidden(specPath, "updates to statefulset spec for fields other than 'replicas', 'ordinals', 'template', 'updateStrategy', 'persistentVolumeClaimRetentionPolicy' and 'minReadySeconds' are forbidden")}
}

func validateDaemonSet(ds *appsv1.DaemonSet) field.ErrorList {
	errs := validateSelectorMatchesTemplate(ds.Spec.Selector, &ds.Spec.Template, specPath)
	errs = append(errs, validatePodTemplate(&ds.Spec.Template, specPath.Child("template"), controllerRestartPolicies)...)
	strategyPath := specPath.Child("updateStrategy")
	switch ds.Spec.UpdateStrategy.Type {
	case appsv1.OnDeleteDaemonSetStrategyType:
	case appsv1.RollingUpdateDaemonSetStrategyType:
		if ru := ds.Spec.UpdateStrategy.RollingUpdate; ru != nil {
			errs = append(errs, validateRollingUpdate(ru.MaxUnavailable, ru.MaxSurge, strategyPath.Child("rollingUpdate"))...)
		}
	default:
		errs = append(errs, field.NotSupported(strategyPath.Child("type"), ds.Spec.UpdateStrategy.Type, []appsv1.DaemonSetUpdateStrategyType{appsv1.OnDeleteDaemonSetStrategyType, appsv1.RollingUpdateDaemonSetStrategyType}))
	}
	return errs
}

func validateJobSpec(s *batchv1.JobSpec, fldPath *field.Path) field.ErrorList {
	var errs field.ErrorList
	for name, v := range map[string]*int32{"parallelism": s.Parallelism, "completions": s.Completions, "backoffLimit": s.BackoffLimit} {
		if v != nil {
			errs = append(errs, apivalidation.ValidateNonnegativeField(int64(*v), fldPath.Child(name))...)
		}
	}
	if s.ActiveDeadlineSeconds != nil && *s.ActiveDeadlineSeconds <= 0 {
		errs = append(errs, field.Invalid(fldPath.Child("activeDeadlineSeconds"), *s.ActiveDeadlineSeconds, "must be greater than 0"))
	}
	modes := []batchv1.CompletionMode{batchv1.IndexedCompletion, batchv1.NonIndexedCompletion}
	if s.CompletionMode != nil && !containsValue(modes, *s.CompletionMode) {
		errs = append(errs, field.NotSupported(fldPath.Child("completionMode"), *s.CompletionMode, modes))
	}
	if s.CompletionMode != nil && *s.CompletionMode == batchv1.IndexedCompletion && s.Completions == nil {
		errs = append(errs, field.Required(fldPath.Child("completions"), fmt.Sprintf("when completion mode is %s", batchv1.IndexedCompletion)))
	}
	// The selector is generated unless manualSelector is true; either way
	// it has to select the template.
	manual := s.ManualSelector != nil && *s.ManualSelector
	if manual || s.Selector != nil {
		errs = append(errs, validateSelectorMatchesTemplate(s.Selector, &s.Template, fldPath)...)
	}
	return append(errs, validatePodTemplate(&s.Template, fldPath.Child("template"), jobRestartPolicies)...)
}

var concurrencyPolicies = []batchv1.ConcurrencyPolicy{batchv1.AllowConcurrent, batchv1.ForbidConcurrent, batchv1.ReplaceConcurrent}

func validateCronJob(cj *batchv1.CronJob) field.ErrorList {
	var errs field.ErrorList
	if strings.TrimSpace(cj.Spec.Schedule) == "" {
		errs = append(errs, field.Required(specPath.Child("schedule"), ""))
	}
	if p := cj.Spec.ConcurrencyPolicy; p != "" && !containsValue(concurrencyPolicies, p) {
		errs = append(errs, field.NotSupported(specPath.Child("concurrencyPolicy"), p, concurrencyPolicies))
	}
	for name, v := range map[string]*int32{"successfulJobsHistoryLimit": cj.Spec.SuccessfulJobsHistoryLimit, "failedJobsHistoryLimit": cj.Spec.FailedJobsHistoryLimit} {
		if v != nil {
			errs = append(errs, apivalidation.ValidateNonnegativeField(int64(*v), specPath.Child(name))...)
		}
	}
	// Job names get an 11-character suffix and must stay DNS labels.
	if len(cj.Name) > 52 {
		errs = append(errs, field.Invalid(metadataPath.Child("name"), cj.Name, "must be no more than 52 characters"))
	}
	jobSpecPath := specPath.Child("jobTemplate", "spec")
	errs = append(errs, metav1validation.ValidateLabels(cj.Spec.JobTemplate.Labels, specPath.Child("jobTemplate", "metadata", "labels"))...)
	return append(errs, validateJobSpec(&cj.Spec.JobTemplate.Spec, jobSpecPath)...)
}

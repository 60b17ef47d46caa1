package builtin

import (
	"fmt"
	"reflect"
	"regexp"
	"strings"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	appsv1 "k8s.io/api/apps/v1"
	autoscalingv1 "k8s.io/api/autoscaling/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	batchv1 "k8s.io/api/batch/v1"
	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	resourcev1 "k8s.io/api/resource/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	storagev1 "k8s.io/api/storage/v1"
	storagemigrationv1 "k8s.io/api/storagemigration/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/api/validation/path"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/runtime"
	utilvalidation "k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/devplane/devplane/apiserver/celcompile"
)

var (
	metadataPath = field.NewPath("metadata")
	specPath     = field.NewPath("spec")
)

// nameRuleFor is the metadata.name rule kube applies to kind k.
func nameRuleFor(k Kind) apivalidation.ValidateNameFunc {
	switch {
	case k.GroupVersion.Group == "" && k.Resource == "namespaces":
		return apivalidation.ValidateNamespaceName
	case k.GroupVersion.Group == "" && k.Resource == "services":
		// kube requires service names to start with a letter (DNS-1035),
		// since they become environment variable names.
		return apivalidation.NameIsDNS1035Label
	case k.GroupVersion.Group == certificatesv1.GroupName && k.Resource == "certificatesigningrequests":
		// kube does not mind what requests are called.
		return func(string, bool) []string { return nil }
	case k.GroupVersion.Group == networkingv1.GroupName && k.Resource == "ipaddresses":
		// An IP is its own name; validateIPAddress says what is wrong with it.
		return func(string, bool) []string { return nil }
	case k.GroupVersion.Group == rbacv1.GroupName,
		// Named after their signer ("example.com:signer:x"); the prefix rule
		// is checked with the content.
		k.GroupVersion.Group == certificatesv1.GroupName && k.Resource == "clustertrustbundles":
		return path.ValidatePathSegmentName
	default:
		return apivalidation.NameIsDNSSubdomain
	}
}

func validatorFor(k Kind) func(obj runtime.Object) field.ErrorList {
	nameRule := nameRuleFor(k)
	return func(obj runtime.Object) field.ErrorList {
		m, err := metaOf(obj)
		if err != nil {
			return field.ErrorList{field.InternalError(nil, err)}
		}
		errs := apivalidation.ValidateObjectMetaAccessor(m, k.Namespaced, nameRule, metadataPath)
		return append(errs, validateContent(obj)...)
	}
}

func updateValidatorFor(k Kind) func(obj, old runtime.Object) field.ErrorList {
	validate := updateValidatorWith(k, validateImmutable)
	if k.GroupVersion != corev1.SchemeGroupVersion || k.Kind != "Pod" {
		return validate
	}
	return func(obj, old runtime.Object) field.ErrorList {
		pod, isPod := obj.(*corev1.Pod)
		prev, wasPod := old.(*corev1.Pod)
		if kubePodUpdateChecks == nil || !isPod || !wasPod {
			return validate(obj, old)
		}
		// kube's whole ValidatePodUpdate: what may change, and how
		// (activeDeadlineSeconds only shortens, terminationGracePeriodSeconds
		// only from negative to 1, tolerations and scheduling gates), with
		// its diff in the message.
		return kubePodUpdateChecks(pod, prev)
	}
}

// updateValidatorWith is k's update validation with immutable as the
// checks of what an update may not change.
func updateValidatorWith(k Kind, immutable func(obj, old runtime.Object) field.ErrorList) func(obj, old runtime.Object) field.ErrorList {
	validate := validatorFor(k)
	return func(obj, old runtime.Object) field.ErrorList {
		newMeta, err := metaOf(obj)
		if err != nil {
			return field.ErrorList{field.InternalError(nil, err)}
		}
		oldMeta, err := metaOf(old)
		if err != nil {
			return field.ErrorList{field.InternalError(nil, err)}
		}
		if reflect.TypeOf(obj) != reflect.TypeOf(old) {
			return field.ErrorList{field.InternalError(nil, fmt.Errorf("cannot update %T from %T", old, obj))}
		}
		var errs field.ErrorList
		// resourceVersion preconditions belong to the REST layer, which
		// allows unconditional updates.
		for _, e := range apivalidation.ValidateObjectMetaAccessorUpdate(newMeta, oldMeta, metadataPath) {
			if e.Field != "metadata.resourceVersion" {
				errs = append(errs, e)
			}
		}
		errs = append(errs, keptMatchConditionsAccepted(obj, old, validate(obj))...)
		return append(errs, immutable(obj, old)...)
	}
}

// keptMatchConditionsAccepted drops the errors of match conditions an
// update leaves as they were (and, for policies, the paramKind they are
// compiled with), as kube does: one stored before its checks, or under a
// CEL environment since changed, must not block every later update.
func keptMatchConditionsAccepted(obj, old runtime.Object, errs field.ErrorList) field.ErrorList {
	if len(errs) == 0 || !sameMatchConditions(obj, old) {
		return errs
	}
	kept := errs[:0:0]
	for _, e := range errs {
		if !strings.Contains(e.Field, ".matchConditions") {
			kept = append(kept, e)
		}
	}
	return kept
}

func sameMatchConditions(obj, old runtime.Object) bool {
	var now, before []any
	switch o := obj.(type) {
	case *admissionregistrationv1.ValidatingWebhookConfiguration:
		for _, w := range o.Webhooks {
			now = append(now, w.MatchConditions)
		}
		for _, w := range old.(*admissionregistrationv1.ValidatingWebhookConfiguration).Webhooks {
			before = append(before, w.MatchConditions)
		}
	case *admissionregistrationv1.MutatingWebhookConfiguration:
		for _, w := range o.Webhooks {
			now = append(now, w.MatchConditions)
		}
		for _, w := range old.(*admissionregistrationv1.MutatingWebhookConfiguration).Webhooks {
			before = append(before, w.MatchConditions)
		}
	case *admissionregistrationv1.ValidatingAdmissionPolicy:
		prev := old.(*admissionregistrationv1.ValidatingAdmissionPolicy)
		now, before = []any{o.Spec.ParamKind, o.Spec.MatchConditions}, []any{prev.Spec.ParamKind, prev.Spec.MatchConditions}
	case *admissionregistrationv1.MutatingAdmissionPolicy:
		prev := old.(*admissionregistrationv1.MutatingAdmissionPolicy)
		now, before = []any{o.Spec.ParamKind, o.Spec.MatchConditions}, []any{prev.Spec.ParamKind, prev.Spec.MatchConditions}
	default:
		return false
	}
	return apiequality.Semantic.DeepEqual(now, before)
}

// validateContent checks everything but metadata, per type.
func validateContent(obj runtime.Object) field.ErrorList {
	switch o := obj.(type) {
	case *certificatesv1.CertificateSigningRequest:
		return validateCSR(o)
	case *corev1.Pod:
		return validatePodSpec(&o.Spec, specPath, podRestartPolicies)
	case *corev1.PodTemplate:
		return validatePodTemplate(&o.Template, field.NewPath("template"), podRestartPolicies)
	case *corev1.ReplicationController:
		return validateReplicationController(o)
	case *corev1.Service:
		return validateService(o)
	case *corev1.ConfigMap:
		return validateConfigMap(o)
	case *corev1.Secret:
		return validateSecret(o)
	case *corev1.ResourceQuota:
		return validateResourceQuota(o)
	case *appsv1.Deployment:
		return validateDeployment(o)
	case *appsv1.ReplicaSet:
		return validateReplicaSet(o)
	case *appsv1.StatefulSet:
		return validateStatefulSet(o)
	case *appsv1.DaemonSet:
		return validateDaemonSet(o)
	case *batchv1.Job:
		return validateJobSpec(&o.Spec, specPath)
	case *batchv1.CronJob:
		return validateCronJob(o)
	case *autoscalingv1.HorizontalPodAutoscaler:
		return validateHPAReplicas(o.Spec.ScaleTargetRef.Kind, o.Spec.ScaleTargetRef.Name, o.Spec.MinReplicas, o.Spec.MaxReplicas)
	case *autoscalingv2.HorizontalPodAutoscaler:
		return validateHPAReplicas(o.Spec.ScaleTargetRef.Kind, o.Spec.ScaleTargetRef.Name, o.Spec.MinReplicas, o.Spec.MaxReplicas)
	case *policyv1.PodDisruptionBudget:
		return validatePodDisruptionBudget(o)
	case *networkingv1.Ingress:
		return validateIngress(o)
	case *rbacv1.Role:
		return validatePolicyRules(o.Rules, true)
	case *rbacv1.ClusterRole:
		return validatePolicyRules(o.Rules, false)
	case *rbacv1.RoleBinding:
		return validateBinding(o.RoleRef, o.Subjects, true)
	case *rbacv1.ClusterRoleBinding:
		return validateBinding(o.RoleRef, o.Subjects, false)
	case *resourcev1.ResourceSlice:
		return validateResourceSlice(o)
	case *storagev1.VolumeAttributesClass:
		return validateVolumeAttributesClass(o)
	case *storagev1.CSIStorageCapacity:
		return validateCSIStorageCapacity(o)
	case *flowcontrolv1.FlowSchema:
		return validateFlowSchema(o)
	case *flowcontrolv1.PriorityLevelConfiguration:
		return validatePriorityLevel(o)
	case *networkingv1.IPAddress:
		return validateIPAddress(o)
	case *networkingv1.ServiceCIDR:
		return validateServiceCIDR(o)
	case *admissionregistrationv1.ValidatingAdmissionPolicy:
		return validateValidatingAdmissionPolicyExpressions(o)
	case *admissionregistrationv1.MutatingAdmissionPolicy:
		return validateMutatingAdmissionPolicy(o)
	case *admissionregistrationv1.MutatingAdmissionPolicyBinding:
		return validateMutatingAdmissionPolicyBinding(o)
	case *certificatesv1.ClusterTrustBundle:
		return validateClusterTrustBundle(o)
	case *certificatesv1.PodCertificateRequest:
		return validatePodCertificateRequest(o)
	case *resourcev1.DeviceTaintRule:
		return validateDeviceTaintRule(o)
	case *storagemigrationv1.StorageVersionMigration:
		return validateStorageVersionMigration(o)
	case *admissionregistrationv1.MutatingWebhookConfiguration:
		hooks := make([]webhookView, len(o.Webhooks))
		for i, w := range o.Webhooks {
			hooks[i] = webhookView{w.Name, w.SideEffects, w.AdmissionReviewVersions, w.ClientConfig, w.FailurePolicy, w.TimeoutSeconds, w.MatchConditions}
		}
		return validateWebhooks(hooks)
	case *admissionregistrationv1.ValidatingWebhookConfiguration:
		hooks := make([]webhookView, len(o.Webhooks))
		for i, w := range o.Webhooks {
			hooks[i] = webhookView{w.Name, w.SideEffects, w.AdmissionReviewVersions, w.ClientConfig, w.FailurePolicy, w.TimeoutSeconds, w.MatchConditions}
		}
		return validateWebhooks(hooks)
	}
	return nil
}

// validateImmutable checks the fields kube refuses to change on update.
func validateImmutable(obj, old runtime.Object) field.ErrorList {
	switch o := obj.(type) {
	case *certificatesv1.CertificateSigningRequest:
		return validateCSRUpdate(o, old.(*certificatesv1.CertificateSigningRequest), false)
	case *corev1.Service:
		return validateServiceUpdate(o, old.(*corev1.Service))
	case *corev1.ResourceQuota:
		return validateResourceQuotaUpdate(o, old.(*corev1.ResourceQuota))
	case *corev1.ConfigMap:
		prev := old.(*corev1.ConfigMap)
		return validateImmutableData(prev.Immutable, o.Immutable,
			dataChange{"data", !apiequality.Semantic.DeepEqual(o.Data, prev.Data)},
			dataChange{"binaryData", !apiequality.Semantic.DeepEqual(o.BinaryData, prev.BinaryData)})
	case *corev1.Secret:
		prev := old.(*corev1.Secret)
		errs := apivalidation.ValidateImmutableField(o.Type, prev.Type, field.NewPath("type"))
		return append(errs, validateImmutableData(prev.Immutable, o.Immutable,
			dataChange{"data", !apiequality.Semantic.DeepEqual(o.Data, prev.Data)})...)
	case *appsv1.Deployment:
		return apivalidation.ValidateImmutableField(o.Spec.Selector, old.(*appsv1.Deployment).Spec.Selector, specPath.Child("selector"))
	case *appsv1.ReplicaSet:
		return apivalidation.ValidateImmutableField(o.Spec.Selector, old.(*appsv1.ReplicaSet).Spec.Selector, specPath.Child("selector"))
	case *appsv1.DaemonSet:
		return apivalidation.ValidateImmutableField(o.Spec.Selector, old.(*appsv1.DaemonSet).Spec.Selector, specPath.Child("selector"))
	case *appsv1.StatefulSet:
		return validateStatefulSetUpdate(o, old.(*appsv1.StatefulSet))
	case *batchv1.Job:
		prev := old.(*batchv1.Job)
		errs := apivalidation.ValidateImmutableField(o.Spec.Selector, prev.Spec.Selector, specPath.Child("selector"))
		errs = append(errs, apivalidation.ValidateImmutableField(o.Spec.CompletionMode, prev.Spec.CompletionMode, specPath.Child("completionMode"))...)
		// kube lets suspended jobs change some scheduling fields; devplane
		// keeps the whole template immutable.
		return append(errs, apivalidation.ValidateImmutableField(o.Spec.Template, prev.Spec.Template, specPath.Child("template"))...)
	case *resourcev1.ResourceSlice:
		return validateResourceSliceUpdate(o, old.(*resourcev1.ResourceSlice))
	case *resourcev1.ResourceClaim:
		return validateResourceClaimUpdate(o, old.(*resourcev1.ResourceClaim))
	case *storagev1.VolumeAttributesClass:
		return validateVolumeAttributesClassUpdate(o, old.(*storagev1.VolumeAttributesClass))
	case *networkingv1.IPAddress:
		return validateIPAddressUpdate(o, old.(*networkingv1.IPAddress))
	case *networkingv1.ServiceCIDR:
		return validateServiceCIDRUpdate(o, old.(*networkingv1.ServiceCIDR))
	case *certificatesv1.ClusterTrustBundle:
		return validateClusterTrustBundleUpdate(o, old.(*certificatesv1.ClusterTrustBundle))
	case *certificatesv1.PodCertificateRequest:
		return validatePodCertificateRequestUpdate(o, old.(*certificatesv1.PodCertificateRequest))
	case *storagemigrationv1.StorageVersionMigration:
		return validateStorageVersionMigrationUpdate(o, old.(*storagemigrationv1.StorageVersionMigration))
	case *schedulingv1.PriorityClass:
		return validatePriorityClassUpdate(o, old.(*schedulingv1.PriorityClass))
	case *rbacv1.RoleBinding:
		return validateRoleRefUpdate(o.RoleRef, old.(*rbacv1.RoleBinding).RoleRef)
	case *rbacv1.ClusterRoleBinding:
		return validateRoleRefUpdate(o.RoleRef, old.(*rbacv1.ClusterRoleBinding).RoleRef)
	}
	return nil
}

const immutableWhenSet = "field is immutable when `immutable` is set"

type dataChange struct {
	field   string
	changed bool
}

// validateImmutableData enforces immutable ConfigMaps and Secrets: once
// immutable is true, neither the data nor the flag may change.
func validateImmutableData(oldImmutable, newImmutable *bool, changes ...dataChange) field.ErrorList {
	if oldImmutable == nil || !*oldImmutable {
		return nil
	}
	var errs field.ErrorList
	if newImmutable == nil || !*newImmutable {
		errs = append(errs, field.Forbidden(field.NewPath("immutable"), immutableWhenSet))
	}
	for _, c := range changes {
		if c.changed {
			errs = append(errs, field.Forbidden(field.NewPath(c.field), immutableWhenSet))
		}
	}
	return errs
}

func validateConfigMap(cm *corev1.ConfigMap) field.ErrorList {
	var errs field.ErrorList
	total := 0
	for key, value := range cm.Data {
		errs = append(errs, validateDataKey(field.NewPath("data"), key)...)
		total += len(value)
	}
	for key, value := range cm.BinaryData {
		errs = append(errs, validateDataKey(field.NewPath("binaryData"), key)...)
		if _, dup := cm.Data[key]; dup {
			errs = append(errs, field.Invalid(field.NewPath("binaryData").Key(key), key, "duplicate of key present in data"))
		}
		total += len(value)
	}
	if total > corev1.MaxSecretSize {
		errs = append(errs, field.TooLong(field.NewPath(""), "", corev1.MaxSecretSize))
	}
	return errs
}

func validateDataKey(fldPath *field.Path, key string) field.ErrorList {
	var errs field.ErrorList
	for _, msg := range utilvalidation.IsConfigMapKey(key) {
		errs = append(errs, field.Invalid(fldPath.Key(key), key, msg))
	}
	return errs
}

// Keys each typed Secret must carry.
var requiredSecretKeys = map[corev1.SecretType][]string{
	corev1.SecretTypeDockercfg:        {corev1.DockerConfigKey},
	corev1.SecretTypeDockerConfigJson: {corev1.DockerConfigJsonKey},
	corev1.SecretTypeTLS:              {corev1.TLSCertKey, corev1.TLSPrivateKeyKey},
	corev1.SecretTypeSSHAuth:          {corev1.SSHAuthPrivateKey},
}

func validateSecret(s *corev1.Secret) field.ErrorList {
	var errs field.ErrorList
	dataPath := field.NewPath("data")
	total := 0
	for key, value := range s.Data {
		errs = append(errs, validateDataKey(dataPath, key)...)
		total += len(value)
	}
	for key, value := range s.StringData {
		errs = append(errs, validateDataKey(field.NewPath("stringData"), key)...)
		total += len(value)
	}
	if total > corev1.MaxSecretSize {
		errs = append(errs, field.TooLong(dataPath, "", corev1.MaxSecretSize))
	}
	for _, key := range requiredSecretKeys[s.Type] {
		if _, ok := s.Data[key]; !ok {
			if _, ok := s.StringData[key]; !ok {
				errs = append(errs, field.Required(dataPath.Key(key), ""))
			}
		}
	}
	if s.Type == corev1.SecretTypeServiceAccountToken && s.Annotations[corev1.ServiceAccountNameKey] == "" {
		errs = append(errs, field.Required(metadataPath.Child("annotations").Key(corev1.ServiceAccountNameKey), ""))
	}
	if s.Type == corev1.SecretTypeBasicAuth {
		_, user := s.Data[corev1.BasicAuthUsernameKey]
		_, password := s.Data[corev1.BasicAuthPasswordKey]
		if !user && !password {
			errs = append(errs, field.Required(dataPath.Key(corev1.BasicAuthUsernameKey), ""))
			errs = append(errs, field.Required(dataPath.Key(corev1.BasicAuthPasswordKey), ""))
		}
	}
	return errs
}

func validateHPAReplicas(targetKind, targetName string, minReplicas *int32, maxReplicas int32) field.ErrorList {
	var errs field.ErrorList
	ref := specPath.Child("scaleTargetRef")
	if targetKind == "" {
		errs = append(errs, field.Required(ref.Child("kind"), ""))
	}
	if targetName == "" {
		errs = append(errs, field.Required(ref.Child("name"), ""))
	}
	if minReplicas != nil && *minReplicas < 1 {
		errs = append(errs, field.Invalid(specPath.Child("minReplicas"), *minReplicas, "must be greater than or equal to 1"))
	}
	if maxReplicas < 1 {
		errs = append(errs, field.Invalid(specPath.Child("maxReplicas"), maxReplicas, "must be greater than or equal to 1"))
	} else if minReplicas != nil && maxReplicas < *minReplicas {
		errs = append(errs, field.Invalid(specPath.Child("maxReplicas"), maxReplicas, "must be greater than or equal to `minReplicas`"))
	}
	return errs
}

func validatePodDisruptionBudget(pdb *policyv1.PodDisruptionBudget) field.ErrorList {
	var errs field.ErrorList
	if pdb.Spec.MinAvailable != nil && pdb.Spec.MaxUnavailable != nil {
		errs = append(errs, field.Invalid(specPath, pdb.Spec, "minAvailable and maxUnavailable cannot be both set"))
	}
	if pdb.Spec.Selector != nil {
		errs = append(errs, metav1validation.ValidateLabelSelector(pdb.Spec.Selector, metav1validation.LabelSelectorValidationOptions{}, specPath.Child("selector"))...)
	}
	return errs
}

var supportedPathTypes = []networkingv1.PathType{networkingv1.PathTypeExact, networkingv1.PathTypeImplementationSpecific, networkingv1.PathTypePrefix}

func validateIngress(ing *networkingv1.Ingress) field.ErrorList {
	var errs field.ErrorList
	if ing.Spec.DefaultBackend == nil && len(ing.Spec.Rules) == 0 {
		errs = append(errs, field.Invalid(specPath.Child("rules"), ing.Spec.Rules, "either `defaultBackend` or `rules` must be specified"))
	}
	for i, rule := range ing.Spec.Rules {
		rulePath := specPath.Child("rules").Index(i)
		if rule.Host != "" {
			hostRule := utilvalidation.IsDNS1123Subdomain
			if strings.HasPrefix(rule.Host, "*.") {
				hostRule = utilvalidation.IsWildcardDNS1123Subdomain
			}
			for _, msg := range hostRule(rule.Host) {
				errs = append(errs, field.Invalid(rulePath.Child("host"), rule.Host, msg))
			}
		}
		if rule.HTTP == nil {
			continue
		}
		pathsPath := rulePath.Child("http", "paths")
		if len(rule.HTTP.Paths) == 0 {
			errs = append(errs, field.Required(pathsPath, ""))
		}
		for j, p := range rule.HTTP.Paths {
			pathPath := pathsPath.Index(j)
			switch {
			case p.PathType == nil:
				errs = append(errs, field.Required(pathPath.Child("pathType"), "pathType must be specified"))
			case !containsValue(supportedPathTypes, *p.PathType):
				errs = append(errs, field.NotSupported(pathPath.Child("pathType"), *p.PathType, supportedPathTypes))
			case *p.PathType != networkingv1.PathTypeImplementationSpecific && !strings.HasPrefix(p.Path, "/"):
				errs = append(errs, field.Invalid(pathPath.Child("path"), p.Path, "must be an absolute path"))
			}
			if p.Backend.Service == nil && p.Backend.Resource == nil {
				errs = append(errs, field.Invalid(pathPath.Child("backend"), p.Backend, "one backend must be specified"))
			}
		}
	}
	return errs
}

func containsValue[T comparable](values []T, v T) bool {
	for _, candidate := range values {
		if candidate == v {
			return true
		}
	}
	return false
}

func validatePolicyRules(rules []rbacv1.PolicyRule, namespaced bool) field.ErrorList {
	var errs field.ErrorList
	for i, rule := range rules {
		rulePath := field.NewPath("rules").Index(i)
		if len(rule.Verbs) == 0 {
			errs = append(errs, field.Required(rulePath.Child("verbs"), "verbs must contain at least one value"))
		}
		if len(rule.NonResourceURLs) > 0 {
			if namespaced {
				errs = append(errs, field.Invalid(rulePath.Child("nonResourceURLs"), rule.NonResourceURLs, "namespaced rules cannot apply to non-resource URLs"))
			}
			if len(rule.APIGroups) > 0 || len(rule.Resources) > 0 {
				errs = append(errs, field.Invalid(rulePath.Child("nonResourceURLs"), rule.NonResourceURLs, "rules cannot apply to both regular resources and non-resource URLs"))
			}
			continue
		}
		if len(rule.APIGroups) == 0 {
			errs = append(errs, field.Required(rulePath.Child("apiGroups"), "resource rules must supply at least one api group"))
		}
		if len(rule.Resources) == 0 {
			errs = append(errs, field.Required(rulePath.Child("resources"), "resource rules must supply at least one resource"))
		}
	}
	return errs
}

func validateBinding(ref rbacv1.RoleRef, subjects []rbacv1.Subject, namespaced bool) field.ErrorList {
	var errs field.ErrorList
	refPath := field.NewPath("roleRef")
	if ref.APIGroup != rbacv1.GroupName {
		errs = append(errs, field.NotSupported(refPath.Child("apiGroup"), ref.APIGroup, []string{rbacv1.GroupName}))
	}
	allowedKinds := []string{"ClusterRole"}
	if namespaced {
		allowedKinds = []string{"Role", "ClusterRole"}
	}
	if !containsValue(allowedKinds, ref.Kind) {
		errs = append(errs, field.NotSupported(refPath.Child("kind"), ref.Kind, allowedKinds))
	}
	if ref.Name == "" {
		errs = append(errs, field.Required(refPath.Child("name"), ""))
	} else {
		for _, msg := range path.ValidatePathSegmentName(ref.Name, false) {
			errs = append(errs, field.Invalid(refPath.Child("name"), ref.Name, msg))
		}
	}
	subjectKinds := []string{rbacv1.ServiceAccountKind, rbacv1.UserKind, rbacv1.GroupKind}
	for i, s := range subjects {
		sPath := field.NewPath("subjects").Index(i)
		if s.Name == "" {
			errs = append(errs, field.Required(sPath.Child("name"), ""))
		}
		switch s.Kind {
		case rbacv1.ServiceAccountKind:
			if s.APIGroup != "" {
				errs = append(errs, field.NotSupported(sPath.Child("apiGroup"), s.APIGroup, []string{""}))
			}
			if !namespaced && s.Namespace == "" {
				errs = append(errs, field.Required(sPath.Child("namespace"), ""))
			}
		case rbacv1.UserKind, rbacv1.GroupKind:
			if s.APIGroup != rbacv1.GroupName {
				errs = append(errs, field.NotSupported(sPath.Child("apiGroup"), s.APIGroup, []string{rbacv1.GroupName}))
			}
		default:
			errs = append(errs, field.NotSupported(sPath.Child("kind"), s.Kind, subjectKinds))
		}
	}
	return errs
}

// validatePriorityClassUpdate keeps a class's value and preemption policy:
// pods admitted under it already carry both.
func validatePriorityClassUpdate(pc, old *schedulingv1.PriorityClass) field.ErrorList {
	var errs field.ErrorList
	if pc.Value != old.Value {
		errs = append(errs, field.Forbidden(field.NewPath("value"), "may not be changed in an update."))
	}
	return append(errs, apivalidation.ValidateImmutableField(pc.PreemptionPolicy, old.PreemptionPolicy, field.NewPath("preemptionPolicy"))...)
}

func validateRoleRefUpdate(ref, old rbacv1.RoleRef) field.ErrorList {
	if ref != old {
		return field.ErrorList{field.Invalid(field.NewPath("roleRef"), ref, "cannot change roleRef")}
	}
	return nil
}

// webhookView is what mutating and validating webhooks share for validation.
type webhookView struct {
	name                    string
	sideEffects             *admissionregistrationv1.SideEffectClass
	admissionReviewVersions []string
	clientConfig            admissionregistrationv1.WebhookClientConfig
	failurePolicy           *admissionregistrationv1.FailurePolicyType
	timeoutSeconds          *int32
	matchConditions         []admissionregistrationv1.MatchCondition
}

var (
	noSideEffectClasses             = []string{string(admissionregistrationv1.SideEffectClassNone), string(admissionregistrationv1.SideEffectClassNoneOnDryRun)}
	acceptedAdmissionReviewVersions = []string{"v1", "v1beta1"}
	supportedFailurePolicies        = []string{string(admissionregistrationv1.Fail), string(admissionregistrationv1.Ignore)}
)

func validateWebhooks(hooks []webhookView) field.ErrorList {
	var errs field.ErrorList
	seen := map[string]bool{}
	for i, h := range hooks {
		hookPath := field.NewPath("webhooks").Index(i)
		errs = append(errs, utilvalidation.IsFullyQualifiedName(hookPath.Child("name"), h.name)...)
		if seen[h.name] {
			errs = append(errs, field.Duplicate(hookPath.Child("name"), h.name))
		}
		seen[h.name] = true
		if h.sideEffects == nil {
			errs = append(errs, field.Required(hookPath.Child("sideEffects"), "must specify one of "+strings.Join(noSideEffectClasses, ", ")))
		} else if !containsValue(noSideEffectClasses, string(*h.sideEffects)) {
			errs = append(errs, field.NotSupported(hookPath.Child("sideEffects"), *h.sideEffects, noSideEffectClasses))
		}
		errs = append(errs, validateAdmissionReviewVersions(h.admissionReviewVersions, hookPath.Child("admissionReviewVersions"))...)
		cc := h.clientConfig
		switch {
		case (cc.URL == nil) == (cc.Service == nil):
			errs = append(errs, field.Required(hookPath.Child("clientConfig"), "exactly one of url or service is required"))
		case cc.Service != nil:
			svcPath := hookPath.Child("clientConfig", "service")
			if cc.Service.Name == "" {
				errs = append(errs, field.Required(svcPath.Child("name"), "service name is required"))
			}
			if cc.Service.Namespace == "" {
				errs = append(errs, field.Required(svcPath.Child("namespace"), "service namespace is required"))
			}
		case !strings.HasPrefix(*cc.URL, "https://"):
			errs = append(errs, field.Invalid(hookPath.Child("clientConfig", "url"), *cc.URL, "'https' is the only allowed URL scheme"))
		}
		if h.failurePolicy != nil && !containsValue(supportedFailurePolicies, string(*h.failurePolicy)) {
			errs = append(errs, field.NotSupported(hookPath.Child("failurePolicy"), *h.failurePolicy, supportedFailurePolicies))
		}
		if h.timeoutSeconds != nil && (*h.timeoutSeconds < 1 || *h.timeoutSeconds > 30) {
			errs = append(errs, field.Invalid(hookPath.Child("timeoutSeconds"), *h.timeoutSeconds, "the timeout value must be between 1 and 30 seconds"))
		}
		errs = append(errs, validateMatchConditions(h.matchConditions, false, hookPath.Child("matchConditions"))...)
	}
	return errs
}

// maxMatchConditions is how many match conditions kube lets one webhook
// or policy have.
const maxMatchConditions = 64

// validateMatchConditions checks named CEL conditions, each compiled as
// kube compiles it (params declared only for policies that have them).
func validateMatchConditions(conditions []admissionregistrationv1.MatchCondition, hasParams bool, fldPath *field.Path) field.ErrorList {
	var errs field.ErrorList
	if len(conditions) > maxMatchConditions {
		errs = append(errs, field.TooMany(fldPath, len(conditions), maxMatchConditions))
	}
	names := map[string]bool{}
	for i, c := range conditions {
		cPath := fldPath.Index(i)
		if expr := strings.TrimSpace(c.Expression); expr == "" {
			errs = append(errs, field.Required(cPath.Child("expression"), ""))
		} else if err := celcompile.Condition(expr, hasParams, cPath.Child("expression")); err != nil {
			errs = append(errs, err)
		}
		namePath := cPath.Child("name")
		if c.Name == "" {
			errs = append(errs, field.Required(namePath, ""))
			continue
		}
		for _, msg := range utilvalidation.IsQualifiedName(c.Name) {
			errs = append(errs, field.Invalid(namePath, c.Name, msg))
		}
		if names[c.Name] {
			errs = append(errs, field.Duplicate(namePath, c.Name))
		}
		names[c.Name] = true
	}
	return errs
}

func validateAdmissionReviewVersions(versions []string, fldPath *field.Path) field.ErrorList {
	if len(versions) == 0 {
		return field.ErrorList{field.Required(fldPath, "must specify one of "+strings.Join(acceptedAdmissionReviewVersions, ", "))}
	}
	for _, v := range versions {
		if containsValue(acceptedAdmissionReviewVersions, v) {
			return nil
		}
	}
	return field.ErrorList{field.Invalid(fldPath, versions, "must include at least one of "+strings.Join(acceptedAdmissionReviewVersions, ", "))}
}

// validateValidatingAdmissionPolicyExpressions compiles a policy's CEL as
// kube's validation does: match conditions on their own, then variables,
// which validations may name.
func validateValidatingAdmissionPolicyExpressions(p *admissionregistrationv1.ValidatingAdmissionPolicy) field.ErrorList {
	hasParams := p.Spec.ParamKind != nil
	errs := validateMatchConditions(p.Spec.MatchConditions, hasParams, specPath.Child("matchConditions"))
	policy := celcompile.NewPolicy(hasParams, len(p.Spec.Variables) > 0)
	errs = append(errs, validatePolicyVariables(policy, p.Spec.Variables)...)
	for i, v := range p.Spec.Validations {
		vPath := specPath.Child("validations").Index(i)
		if strings.TrimSpace(v.Expression) == "" {
			errs = append(errs, field.Required(vPath.Child("expression"), "expression is not specified"))
		} else if err := policy.Condition(v.Expression, vPath.Child("expression")); err != nil {
			errs = append(errs, err)
		}
		if v.MessageExpression != "" && strings.TrimSpace(v.MessageExpression) == "" {
			errs = append(errs, field.Invalid(vPath.Child("messageExpression"), v.MessageExpression, "must be non-empty if specified"))
		} else if strings.TrimSpace(v.MessageExpression) != "" {
			if err := policy.Message(v.MessageExpression, vPath.Child("messageExpression")); err != nil {
				errs = append(errs, err)
			}
		}
	}
	return errs
}

// validatePolicyVariables checks a policy's variables in order, each
// declared for the expressions after it.
func validatePolicyVariables(policy *celcompile.Policy, variables []admissionregistrationv1.Variable) field.ErrorList {
	var errs field.ErrorList
	for i, v := range variables {
		vPath := specPath.Child("variables").Index(i)
		if strings.TrimSpace(v.Name) == "" {
			errs = append(errs, field.Required(vPath.Child("name"), "name is not specified"))
		} else if !celIdentifier.MatchString(v.Name) || celReserved[v.Name] {
			errs = append(errs, field.Invalid(vPath.Child("name"), v.Name, "must be a valid CEL identifier"))
		}
		if strings.TrimSpace(v.Expression) == "" {
			errs = append(errs, field.Required(vPath.Child("expression"), "expression is not specified"))
		} else if err := policy.Variable(v.Name, v.Expression, vPath.Child("expression")); err != nil {
			errs = append(errs, err)
		}
	}
	return errs
}

// A variable's name is a CEL identifier, and not one of CEL's reserved
// words.
var (
	celIdentifier = regexp.MustCompile("^[_a-zA-Z][_a-zA-Z0-9]*$")
	celReserved   = map[string]bool{"true": true, "false": true, "null": true, "in": true, "as": true, "break": true, "const": true,
		"continue": true, "else": true, "for": true, "function": true, "if": true, "import": true, "let": true, "loop": true,
		"package": true, "namespace": true, "return": true, "var": true, "void": true, "while": true}
)

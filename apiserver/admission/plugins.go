package admission

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"sort"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"

	corev1 "k8s.io/api/core/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	psapi "k8s.io/pod-security-admission/api"
	pspolicy "k8s.io/pod-security-admission/policy"

	"github.com/devplane/devplane/apiserver/audit"
)

var (
	podsGVR            = schema.GroupVersionResource{Version: "v1", Resource: "pods"}
	pvcsGVR            = schema.GroupVersionResource{Version: "v1", Resource: "persistentvolumeclaims"}
	pvsGVR             = schema.GroupVersionResource{Version: "v1", Resource: "persistentvolumes"}
	serviceAccountsGVR = schema.GroupVersionResource{Version: "v1", Resource: "serviceaccounts"}
	limitRangesGVR     = schema.GroupVersionResource{Version: "v1", Resource: "limitranges"}
	priorityClassesGVR = schedulingv1.SchemeGroupVersion.WithResource("priorityclasses")
	storageClassesGVR  = storagev1.SchemeGroupVersion.WithResource("storageclasses")
)

// podCreate returns the pod of a pod CREATE (no subresource), else nil.
func podCreate(a *Attributes) *corev1.Pod {
	if a.Operation != Create || a.Resource != podsGVR || a.Subresource != "" {
		return nil
	}
	pod, _ := a.Object.(*corev1.Pod)
	return pod
}

const (
	saMountPath    = "/var/run/secrets/kubernetes.io/serviceaccount"
	saVolumePrefix = "kube-api-access-"
	volumeChars    = "bcdfghjklmnpqrstvwxz2456789"
)

// ServiceAccount gives pods the default service account and kube's
// projected API access volume (token, kube-root-ca.crt, namespace).
func ServiceAccount(src Source) Interface {
	return Func{MutateFunc: func(ctx context.Context, a *Attributes) error {
		pod := podCreate(a)
		if pod == nil {
			return nil
		}
		if pod.Spec.ServiceAccountName == "" {
			pod.Spec.ServiceAccountName = "default"
		}
		automount := true
		if obj, err := src.Get(ctx, serviceAccountsGVR, a.Namespace, pod.Spec.ServiceAccountName); err == nil {
			if sa := obj.(*corev1.ServiceAccount); sa.AutomountServiceAccountToken != nil {
				automount = *sa.AutomountServiceAccountToken
			}
		}
		if pod.Spec.AutomountServiceAccountToken != nil {
			automount = *pod.Spec.AutomountServiceAccountToken
		}
		if !automount {
			return nil
		}
		name := ""
		for _, v := range pod.Spec.Volumes {
			if v.Projected != nil && len(v.Name) == len(saVolumePrefix)+5 && v.Name[:len(saVolumePrefix)] == saVolumePrefix {
				name = v.Name
			}
		}
		if name == "" {
			b := make([]byte, 5)
			for i := range b {
				b[i] = volumeChars[rand.IntN(len(volumeChars))]
			}
			name = saVolumePrefix + string(b)
			expiry, mode := int64(3607), int32(0o644)
			pod.Spec.Volumes = append(pod.Spec.Volumes, corev1.Volume{Name: name, VolumeSource: corev1.VolumeSource{
				Projected: &corev1.ProjectedVolumeSource{DefaultMode: &mode, Sources: []corev1.VolumeProjection{
					{ServiceAccountToken: &corev1.ServiceAccountTokenProjection{ExpirationSeconds: &expiry, Path: "token"}},
					{ConfigMap: &corev1.ConfigMapProjection{LocalObjectReference: corev1.LocalObjectReference{Name: "kube-root-ca.crt"},
						Items: []corev1.KeyToPath{{Key: "ca.crt", Path: "ca.crt"}}}},
					{DownwardAPI: &corev1.DownwardAPIProjection{Items: []corev1.DownwardAPIVolumeFile{{Path: "namespace",
						FieldRef: &corev1.ObjectFieldSelector{APIVersion: "v1", FieldPath: "metadata.namespace"}}}}},
				}}}})
		}
		mount := func(cs []corev1.Container) {
			for i := range cs {
				has := false
				for _, m := range cs[i].VolumeMounts {
					if m.MountPath == saMountPath {
						has = true
					}
				}
				if !has {
					cs[i].VolumeMounts = append(cs[i].VolumeMounts, corev1.VolumeMount{Name: name, ReadOnly: true, MountPath: saMountPath})
				}
			}
		}
		mount(pod.Spec.InitContainers)
		mount(pod.Spec.Containers)
		return nil
	}}
}

// DefaultTolerationSeconds tolerates not-ready and unreachable nodes for
// 300 seconds unless the pod says otherwise.
func DefaultTolerationSeconds() Interface {
	return Func{MutateFunc: func(_ context.Context, a *Attributes) error {
		// Updates too, as kube's plugin: an update that replaces the
		// tolerations keeps these two, which kube's pod update validation
		// then finds unchanged.
		if (a.Operation != Create && a.Operation != Update) || a.Resource != podsGVR || a.Subresource != "" {
			return nil
		}
		pod, _ := a.Object.(*corev1.Pod)
		if pod == nil {
			return nil
		}
		for _, key := range []string{corev1.TaintNodeNotReady, corev1.TaintNodeUnreachable} {
			found := false
			for _, t := range pod.Spec.Tolerations {
				if (t.Key == key || (t.Key == "" && t.Operator == corev1.TolerationOpExists)) &&
					(t.Effect == "" || t.Effect == corev1.TaintEffectNoExecute) {
					found = true
				}
			}
			if !found {
				secs := int64(300)
				pod.Spec.Tolerations = append(pod.Spec.Tolerations, corev1.Toleration{Key: key,
					Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute, TolerationSeconds: &secs})
			}
		}
		return nil
	}}
}

// builtinPriorities are the system classes kube-apiserver creates.
var builtinPriorities = map[string]int32{"system-node-critical": 2000001000, "system-cluster-critical": 2000000000}

// Priority resolves priorityClassName into priority (the global default
// class, or 0, when none is named).
func Priority(src Source) Interface {
	return Func{MutateFunc: func(ctx context.Context, a *Attributes) error {
		pod := podCreate(a)
		if pod == nil {
			return nil
		}
		var value int32
		var policy *corev1.PreemptionPolicy
		name := pod.Spec.PriorityClassName
		if name == "" {
			objs, err := src.List(ctx, priorityClassesGVR, "", false)
			if err != nil {
				return err
			}
			for _, o := range objs {
				if pc := o.(*schedulingv1.PriorityClass); pc.GlobalDefault {
					name, value, policy = pc.Name, pc.Value, pc.PreemptionPolicy
				}
			}
			pod.Spec.PriorityClassName = name
		} else {
			obj, err := src.Get(ctx, priorityClassesGVR, "", name)
			switch {
			case err == nil:
				pc := obj.(*schedulingv1.PriorityClass)
				value, policy = pc.Value, pc.PreemptionPolicy
			case apierrors.IsNotFound(err):
				v, ok := builtinPriorities[name]
				if !ok {
					return apierrors.NewForbidden(a.Resource.GroupResource(), a.Name,
						fmt.Errorf("no PriorityClass with name %v was found", name))
				}
				value = v
			default:
				return err
			}
		}
		if pod.Spec.Priority != nil && *pod.Spec.Priority != value {
			return apierrors.NewForbidden(a.Resource.GroupResource(), a.Name,
				fmt.Errorf("the integer value of priority (%d) must not be provided in pod spec; priority admission controller computed %d from the given PriorityClass name", *pod.Spec.Priority, value))
		}
		pod.Spec.Priority = &value
		if policy != nil && pod.Spec.PreemptionPolicy == nil {
			pod.Spec.PreemptionPolicy = policy
		}
		return nil
	}}
}

// DefaultStorageClass gives claims without a class the default one.
func DefaultStorageClass(src Source) Interface {
	return Func{MutateFunc: func(ctx context.Context, a *Attributes) error {
		if a.Operation != Create || a.Resource != pvcsGVR || a.Subresource != "" {
			return nil
		}
		pvc, ok := a.Object.(*corev1.PersistentVolumeClaim)
		if !ok || pvc.Spec.StorageClassName != nil {
			return nil
		}
		objs, err := src.List(ctx, storageClassesGVR, "", false)
		if err != nil {
			return err
		}
		var defaults []*storagev1.StorageClass
		for _, o := range objs {
			sc := o.(*storagev1.StorageClass)
			if sc.Annotations["storageclass.kubernetes.io/is-default-class"] == "true" ||
				sc.Annotations["storageclass.beta.kubernetes.io/is-default-class"] == "true" {
				defaults = append(defaults, sc)
			}
		}
		if len(defaults) == 0 {
			return nil
		}
		// The newest default wins, as in kube.
		sort.Slice(defaults, func(i, j int) bool {
			ti, tj := defaults[i].CreationTimestamp, defaults[j].CreationTimestamp
			if ti.Equal(&tj) {
				return defaults[i].Name < defaults[j].Name
			}
			return tj.Before(&ti)
		})
		name := defaults[0].Name
		pvc.Spec.StorageClassName = &name
		return nil
	}}
}

// Finalizers StorageObjectInUseProtection puts on new claims and volumes;
// kube's pvc-protection and pv-protection controllers take them off once
// no pod uses the claim, and once the volume is no longer bound.
const (
	PVCProtectionFinalizer = "kubernetes.io/pvc-protection"
	PVProtectionFinalizer  = "kubernetes.io/pv-protection"
)

// StorageObjectInUseProtection keeps a claim a pod uses, and a bound
// volume, from going while they do: their deletion waits on a finalizer.
func StorageObjectInUseProtection() Interface {
	return Func{MutateFunc: func(_ context.Context, a *Attributes) error {
		if a.Operation != Create || a.Subresource != "" {
			return nil
		}
		var finalizer string
		switch a.Resource {
		case pvcsGVR:
			finalizer = PVCProtectionFinalizer
		case pvsGVR:
			finalizer = PVProtectionFinalizer
		default:
			return nil
		}
		obj, ok := a.Object.(metav1.Object)
		if !ok || slices.Contains(obj.GetFinalizers(), finalizer) {
			return nil
		}
		obj.SetFinalizers(append(obj.GetFinalizers(), finalizer))
		return nil
	}}
}

// PodSecurity enforces the Pod Security Standards a namespace selects by
// its pod-security.kubernetes.io labels, with kube's messages.
func PodSecurity(src Source) (Interface, error) {
	eval, err := pspolicy.NewEvaluator(pspolicy.DefaultChecks(), nil)
	if err != nil {
		return nil, err
	}
	return Func{ValidateFunc: func(ctx context.Context, a *Attributes) error {
		if a.Subresource != "" || (a.Operation != Create && a.Operation != Update) || a.Namespace == "" {
			return nil
		}
		if a.Resource != podsGVR {
			return warnPodController(ctx, src, eval, a)
		}
		pod, ok := a.Object.(*corev1.Pod)
		if !ok || a.Namespace == "" {
			return nil
		}
		if a.Operation == Update {
			// Only changes to the pod spec's images matter, as in kube.
			if old, ok := a.OldObject.(*corev1.Pod); ok && sameImages(pod, old) {
				return nil
			}
		}
		ns, err := namespaceOf(ctx, src, a.Namespace)
		if err != nil || ns == nil {
			return err
		}
		policy, errs := psapi.PolicyToEvaluate(ns.Labels, psapi.Policy{
			Enforce: psapi.LevelVersion{Level: psapi.LevelPrivileged, Version: psapi.LatestVersion()},
			Warn:    psapi.LevelVersion{Level: psapi.LevelPrivileged, Version: psapi.LatestVersion()},
			Audit:   psapi.LevelVersion{Level: psapi.LevelPrivileged, Version: psapi.LatestVersion()},
		})
		if len(errs) > 0 {
			return nil
		}
		audit.AddAnnotation(ctx, "pod-security.kubernetes.io/enforce-policy", policy.Enforce.String())
		if policy.Audit.Level != psapi.LevelPrivileged {
			if res := pspolicy.AggregateCheckResults(eval.EvaluatePod(policy.Audit, &pod.ObjectMeta, &pod.Spec)); !res.Allowed {
				audit.AddAnnotation(ctx, "pod-security.kubernetes.io/audit-violations",
					fmt.Sprintf("would violate PodSecurity %q: %s", policy.Audit.String(), res.ForbiddenDetail()))
			}
		}
		if policy.Enforce.Level != psapi.LevelPrivileged {
			res := pspolicy.AggregateCheckResults(eval.EvaluatePod(policy.Enforce, &pod.ObjectMeta, &pod.Spec))
			if !res.Allowed {
				return apierrors.NewForbidden(a.Resource.GroupResource(), a.Name,
					fmt.Errorf("violates PodSecurity %q: %s", policy.Enforce.String(), res.ForbiddenDetail()))
			}
		}
		if policy.Warn.Level != psapi.LevelPrivileged {
			res := pspolicy.AggregateCheckResults(eval.EvaluatePod(policy.Warn, &pod.ObjectMeta, &pod.Spec))
			if !res.Allowed {
				AddWarning(ctx, fmt.Sprintf("would violate PodSecurity %q: %s", policy.Warn.String(), res.ForbiddenDetail()))
			}
		}
		return nil
	}}, nil
}

// podTemplateOf is the pod a workload object creates, or nil.
func podTemplateOf(obj runtime.Object) *corev1.PodTemplateSpec {
	switch o := obj.(type) {
	case *appsv1.Deployment:
		return &o.Spec.Template
	case *appsv1.ReplicaSet:
		return &o.Spec.Template
	case *appsv1.StatefulSet:
		return &o.Spec.Template
	case *appsv1.DaemonSet:
		return &o.Spec.Template
	case *batchv1.Job:
		return &o.Spec.Template
	case *batchv1.CronJob:
		return &o.Spec.JobTemplate.Spec.Template
	case *corev1.ReplicationController:
		return o.Spec.Template
	case *corev1.PodTemplate:
		return &o.Template
	}
	return nil
}

// warnPodController checks a workload's pod template as kube's PodSecurity
// does: never denied (its pods will be), but warned about against both the
// enforce and the warn level, so the author hears before pods fail.
func warnPodController(ctx context.Context, src Source, eval pspolicy.Evaluator, a *Attributes) error {
	tmpl := podTemplateOf(a.Object)
	if tmpl == nil {
		return nil
	}
	if a.Operation == Update {
		if old := podTemplateOf(a.OldObject); old != nil && equality.Semantic.DeepEqual(old, tmpl) {
			return nil
		}
	}
	ns, err := namespaceOf(ctx, src, a.Namespace)
	if err != nil || ns == nil {
		return err
	}
	privileged := psapi.LevelVersion{Level: psapi.LevelPrivileged, Version: psapi.LatestVersion()}
	policy, errs := psapi.PolicyToEvaluate(ns.Labels, psapi.Policy{Enforce: privileged, Warn: privileged, Audit: privileged})
	if len(errs) > 0 {
		return nil
	}
	levels := []psapi.LevelVersion{policy.Enforce}
	if policy.Warn != policy.Enforce {
		levels = append(levels, policy.Warn)
	}
	for _, level := range levels {
		if level.Level == psapi.LevelPrivileged {
			continue
		}
		if res := pspolicy.AggregateCheckResults(eval.EvaluatePod(level, &tmpl.ObjectMeta, &tmpl.Spec)); !res.Allowed {
			AddWarning(ctx, fmt.Sprintf("would violate PodSecurity %q: %s", level.String(), res.ForbiddenDetail()))
		}
	}
	return nil
}

func sameImages(a, b *corev1.Pod) bool {
	images := func(p *corev1.Pod) []string {
		var out []string
		for _, c := range p.Spec.InitContainers {
			out = append(out, c.Image)
		}
		for _, c := range p.Spec.Containers {
			out = append(out, c.Image)
		}
		return out
	}
	x, y := images(a), images(b)
	if len(x) != len(y) {
		return false
	}
	for i := range x {
		if x[i] != y[i] {
			return false
		}
	}
	return true
}

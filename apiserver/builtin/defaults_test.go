package builtin

import (
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

func testPodSpec() corev1.PodSpec {
	return corev1.PodSpec{
		Containers: []corev1.Container{{
			Name:           "app",
			Image:          "nginx",
			Ports:          []corev1.ContainerPort{{ContainerPort: 80}},
			LivenessProbe:  &corev1.Probe{ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Port: intstr.FromInt32(80)}}},
			Env:            []corev1.EnvVar{{Name: "NODE", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "spec.nodeName"}}}},
			Resources:      corev1.ResourceRequirements{Limits: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m")}},
			ReadinessProbe: nil,
		}},
		InitContainers: []corev1.Container{{Name: "init", Image: "busybox:1.36"}},
		Volumes: []corev1.Volume{
			{Name: "cfg", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{}}},
			{Name: "scratch"},
		},
	}
}

func TestDefaultPod(t *testing.T) {
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "default"}, Spec: testPodSpec()}
	defaultObject(pod)
	s := pod.Spec
	if s.RestartPolicy != corev1.RestartPolicyAlways || s.DNSPolicy != corev1.DNSClusterFirst || s.SchedulerName != "default-scheduler" {
		t.Errorf("pod spec: restartPolicy=%q dnsPolicy=%q schedulerName=%q", s.RestartPolicy, s.DNSPolicy, s.SchedulerName)
	}
	if s.TerminationGracePeriodSeconds == nil || *s.TerminationGracePeriodSeconds != 30 || s.SecurityContext == nil || s.EnableServiceLinks == nil || !*s.EnableServiceLinks {
		t.Errorf("pod spec: grace=%v securityContext=%v enableServiceLinks=%v", s.TerminationGracePeriodSeconds, s.SecurityContext, s.EnableServiceLinks)
	}
	c := s.Containers[0]
	if c.ImagePullPolicy != corev1.PullAlways || s.InitContainers[0].ImagePullPolicy != corev1.PullIfNotPresent {
		t.Errorf("imagePullPolicy: %q (untagged), %q (tagged)", c.ImagePullPolicy, s.InitContainers[0].ImagePullPolicy)
	}
	if c.TerminationMessagePath != "/dev/termination-log" || c.TerminationMessagePolicy != corev1.TerminationMessageReadFile {
		t.Errorf("termination message: %q %q", c.TerminationMessagePath, c.TerminationMessagePolicy)
	}
	if c.Ports[0].Protocol != corev1.ProtocolTCP {
		t.Errorf("port protocol %q", c.Ports[0].Protocol)
	}
	p := c.LivenessProbe
	if p.TimeoutSeconds != 1 || p.PeriodSeconds != 10 || p.SuccessThreshold != 1 || p.FailureThreshold != 3 || p.HTTPGet.Scheme != corev1.URISchemeHTTP || p.HTTPGet.Path != "/" {
		t.Errorf("probe defaults: %+v", p)
	}
	if c.Env[0].ValueFrom.FieldRef.APIVersion != "v1" {
		t.Errorf("fieldRef apiVersion %q", c.Env[0].ValueFrom.FieldRef.APIVersion)
	}
	if got := c.Resources.Requests[corev1.ResourceCPU]; got.String() != "100m" {
		t.Errorf("requests should default to limits, got %v", c.Resources.Requests)
	}
	if m := s.Volumes[0].ConfigMap.DefaultMode; m == nil || *m != 420 {
		t.Errorf("configMap defaultMode %v", m)
	}
	if s.Volumes[1].EmptyDir == nil {
		t.Error("a volume without source should become emptyDir")
	}
	if pod.Status.Phase != corev1.PodPending || pod.Status.QOSClass != corev1.PodQOSBurstable {
		t.Errorf("status phase=%q qos=%q", pod.Status.Phase, pod.Status.QOSClass)
	}
}

func TestImagePullPolicy(t *testing.T) {
	for image, want := range map[string]corev1.PullPolicy{
		"nginx":                          corev1.PullAlways,
		"nginx:latest":                   corev1.PullAlways,
		"nginx:1.27":                     corev1.PullIfNotPresent,
		"localhost:5000/app":             corev1.PullAlways,
		"localhost:5000/app:v2":          corev1.PullIfNotPresent,
		"nginx@sha256:abcdef":            corev1.PullIfNotPresent,
		"registry.io/x/nginx:latest@sha": corev1.PullAlways,
	} {
		if got := imagePullPolicyFor(image); got != want {
			t.Errorf("imagePullPolicyFor(%q) = %q, want %q", image, got, want)
		}
	}
}

func TestDefaultDeployment(t *testing.T) {
	d := &appsv1.Deployment{Spec: appsv1.DeploymentSpec{Template: corev1.PodTemplateSpec{Spec: testPodSpec()}}}
	defaultObject(d)
	if *d.Spec.Replicas != 1 || *d.Spec.RevisionHistoryLimit != 10 || *d.Spec.ProgressDeadlineSeconds != 600 {
		t.Errorf("replicas=%d revisionHistoryLimit=%d progressDeadlineSeconds=%d", *d.Spec.Replicas, *d.Spec.RevisionHistoryLimit, *d.Spec.ProgressDeadlineSeconds)
	}
	ru := d.Spec.Strategy.RollingUpdate
	if d.Spec.Strategy.Type != appsv1.RollingUpdateDeploymentStrategyType || ru.MaxUnavailable.String() != "25%" || ru.MaxSurge.String() != "25%" {
		t.Errorf("strategy %+v", d.Spec.Strategy)
	}
	if d.Spec.Template.Spec.RestartPolicy != corev1.RestartPolicyAlways || d.Spec.Template.Spec.Containers[0].TerminationMessagePath == "" {
		t.Error("pod template not defaulted")
	}
	if len(d.Spec.Template.Spec.Containers[0].Resources.Requests) != 0 {
		t.Error("templates must keep limits without copying them to requests")
	}
	recreate := &appsv1.Deployment{Spec: appsv1.DeploymentSpec{Strategy: appsv1.DeploymentStrategy{Type: appsv1.RecreateDeploymentStrategyType}}}
	defaultObject(recreate)
	if recreate.Spec.Strategy.RollingUpdate != nil {
		t.Error("Recreate strategy must not get rollingUpdate")
	}
}

func TestDefaultService(t *testing.T) {
	svc := &corev1.Service{Spec: corev1.ServiceSpec{Selector: map[string]string{"app": "x"}, Ports: []corev1.ServicePort{{Port: 80}}}}
	defaultObject(svc)
	s := svc.Spec
	if s.Type != corev1.ServiceTypeClusterIP || s.SessionAffinity != corev1.ServiceAffinityNone {
		t.Errorf("type=%q sessionAffinity=%q", s.Type, s.SessionAffinity)
	}
	if s.Ports[0].Protocol != corev1.ProtocolTCP || s.Ports[0].TargetPort != intstr.FromInt32(80) {
		t.Errorf("port %+v", s.Ports[0])
	}
	if *s.InternalTrafficPolicy != corev1.ServiceInternalTrafficPolicyCluster || *s.IPFamilyPolicy != corev1.IPFamilyPolicySingleStack || len(s.IPFamilies) != 1 || s.IPFamilies[0] != corev1.IPv4Protocol {
		t.Errorf("internalTrafficPolicy=%v ipFamilyPolicy=%v ipFamilies=%v", *s.InternalTrafficPolicy, *s.IPFamilyPolicy, s.IPFamilies)
	}
	if s.ExternalTrafficPolicy != "" || s.AllocateLoadBalancerNodePorts != nil {
		t.Error("ClusterIP services get no externalTrafficPolicy / allocateLoadBalancerNodePorts")
	}

	lb := &corev1.Service{Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeLoadBalancer, Ports: []corev1.ServicePort{{Port: 443, TargetPort: intstr.FromString("https")}}}}
	defaultObject(lb)
	if lb.Spec.ExternalTrafficPolicy != corev1.ServiceExternalTrafficPolicyCluster || lb.Spec.AllocateLoadBalancerNodePorts == nil || !*lb.Spec.AllocateLoadBalancerNodePorts {
		t.Errorf("LoadBalancer: externalTrafficPolicy=%q allocate=%v", lb.Spec.ExternalTrafficPolicy, lb.Spec.AllocateLoadBalancerNodePorts)
	}
	if lb.Spec.Ports[0].TargetPort.StrVal != "https" {
		t.Error("a named targetPort must be kept")
	}

	ext := &corev1.Service{Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeExternalName, ExternalName: "example.com"}}
	defaultObject(ext)
	if ext.Spec.IPFamilyPolicy != nil || ext.Spec.InternalTrafficPolicy != nil {
		t.Error("ExternalName services get no IP family or traffic policy")
	}
}

func TestDefaultJob(t *testing.T) {
	job := &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{Name: "pi", Namespace: "default", UID: "1234"},
		Spec:       batchv1.JobSpec{Template: corev1.PodTemplateSpec{Spec: testPodSpec()}},
	}
	defaultObject(job)
	s := job.Spec
	if *s.Parallelism != 1 || *s.Completions != 1 || *s.BackoffLimit != 6 || *s.CompletionMode != batchv1.NonIndexedCompletion || *s.Suspend || *s.PodReplacementPolicy != batchv1.TerminatingOrFailed {
		t.Errorf("job spec defaults wrong: %+v", s)
	}
	if s.ManualSelector != nil {
		t.Error("manualSelector must stay unset")
	}
	if s.Selector == nil || s.Selector.MatchLabels["batch.kubernetes.io/controller-uid"] != "1234" {
		t.Errorf("generated selector %v", s.Selector)
	}
	for k, v := range map[string]string{"batch.kubernetes.io/controller-uid": "1234", "batch.kubernetes.io/job-name": "pi", "controller-uid": "1234", "job-name": "pi"} {
		if s.Template.Labels[k] != v || job.Labels[k] != v {
			t.Errorf("label %s: template %q, job %q, want %q", k, s.Template.Labels[k], job.Labels[k], v)
		}
	}
	if s.Template.Spec.RestartPolicy != "" {
		t.Errorf("Job templates get no restartPolicy default, got %q", s.Template.Spec.RestartPolicy)
	}

	onlyCompletions := &batchv1.Job{Spec: batchv1.JobSpec{Completions: ptrTo[int32](5)}}
	defaultObject(onlyCompletions)
	if *onlyCompletions.Spec.Completions != 5 || *onlyCompletions.Spec.Parallelism != 1 || onlyCompletions.Spec.Selector != nil {
		t.Errorf("completions=%d parallelism=%d selector=%v (no uid: no selector)", *onlyCompletions.Spec.Completions, *onlyCompletions.Spec.Parallelism, onlyCompletions.Spec.Selector)
	}
}

func TestDefaultCronJob(t *testing.T) {
	cj := &batchv1.CronJob{Spec: batchv1.CronJobSpec{Schedule: "* * * * *", JobTemplate: batchv1.JobTemplateSpec{Spec: batchv1.JobSpec{Template: corev1.PodTemplateSpec{Spec: testPodSpec()}}}}}
	defaultObject(cj)
	s := cj.Spec
	if s.ConcurrencyPolicy != batchv1.AllowConcurrent || *s.Suspend || *s.SuccessfulJobsHistoryLimit != 3 || *s.FailedJobsHistoryLimit != 1 {
		t.Errorf("cronjob defaults: %+v", s)
	}
	if s.JobTemplate.Spec.Template.Spec.DNSPolicy != corev1.DNSClusterFirst {
		t.Error("job template's pod spec not defaulted")
	}
}

func TestDefaultSecretAndNamespace(t *testing.T) {
	secret := &corev1.Secret{}
	defaultObject(secret)
	if secret.Type != corev1.SecretTypeOpaque {
		t.Errorf("secret type %q", secret.Type)
	}
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "team-a"}}
	defaultObject(ns)
	if ns.Status.Phase != corev1.NamespaceActive || len(ns.Spec.Finalizers) != 1 || ns.Spec.Finalizers[0] != "kubernetes" || ns.Labels["kubernetes.io/metadata.name"] != "team-a" {
		t.Errorf("namespace: phase=%q finalizers=%v labels=%v", ns.Status.Phase, ns.Spec.Finalizers, ns.Labels)
	}
	terminating := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "gone"}, Status: corev1.NamespaceStatus{Phase: corev1.NamespaceTerminating}}
	defaultObject(terminating)
	if len(terminating.Spec.Finalizers) != 0 {
		t.Error("a terminating namespace must not get its finalizer back")
	}
}

func TestDefaultStatefulSetAndDaemonSet(t *testing.T) {
	sts := &appsv1.StatefulSet{}
	defaultObject(sts)
	s := sts.Spec
	if *s.Replicas != 1 || s.PodManagementPolicy != appsv1.OrderedReadyPodManagement || s.UpdateStrategy.Type != appsv1.RollingUpdateStatefulSetStrategyType ||
		*s.UpdateStrategy.RollingUpdate.Partition != 0 || *s.RevisionHistoryLimit != 10 ||
		s.PersistentVolumeClaimRetentionPolicy.WhenDeleted != appsv1.RetainPersistentVolumeClaimRetentionPolicyType ||
		s.PersistentVolumeClaimRetentionPolicy.WhenScaled != appsv1.RetainPersistentVolumeClaimRetentionPolicyType {
		t.Errorf("statefulset defaults: %+v", s)
	}
	ds := &appsv1.DaemonSet{}
	defaultObject(ds)
	ru := ds.Spec.UpdateStrategy.RollingUpdate
	if ds.Spec.UpdateStrategy.Type != appsv1.RollingUpdateDaemonSetStrategyType || ru.MaxUnavailable.IntValue() != 1 || ru.MaxSurge.IntValue() != 0 || *ds.Spec.RevisionHistoryLimit != 10 {
		t.Errorf("daemonset defaults: %+v", ds.Spec.UpdateStrategy)
	}
}

func TestDefaultReplicationController(t *testing.T) {
	rc := &corev1.ReplicationController{Spec: corev1.ReplicationControllerSpec{Template: &corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "web"}}}}}
	defaultObject(rc)
	if *rc.Spec.Replicas != 1 || rc.Spec.Selector["app"] != "web" || rc.Labels["app"] != "web" {
		t.Errorf("rc: replicas=%d selector=%v labels=%v", *rc.Spec.Replicas, rc.Spec.Selector, rc.Labels)
	}
}

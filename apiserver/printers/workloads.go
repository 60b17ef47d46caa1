package printers

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	autoscalingv1 "k8s.io/api/autoscaling/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/duration"
)

// nodeUnreachablePodReason is the status.reason the node lifecycle controller
// sets on pods of a lost node; such pods print as Unknown, not Terminating.
const nodeUnreachablePodReason = "NodeLost"

var podColumns = []metav1.TableColumnDefinition{
	nameColumn,
	column("Ready", "string", "Ready containers out of all containers."),
	column("Status", "string", "Summary of the pod and container states."),
	column("Restarts", "string", "Container restarts, and how long ago the latest one was."),
	ageColumn,
	wideColumn("IP", "string", "The pod's primary IP address."),
	wideColumn("Node", "string", "Node the pod is bound to."),
	wideColumn("Nominated Node", "string", "Node the scheduler nominated for preemption."),
	wideColumn("Readiness Gates", "string", "Readiness gates that are true, out of all gates."),
}

func podCells(pod *corev1.Pod) []interface{} {
	ready, status, restarts := podReadyStatusRestarts(pod)
	podIP := pod.Status.PodIP
	if len(pod.Status.PodIPs) > 0 {
		podIP = pod.Status.PodIPs[0].IP
	}
	return []interface{}{
		pod.Name, ready, status, restarts, age(pod),
		orNone(podIP), orNone(pod.Spec.NodeName), orNone(pod.Status.NominatedNodeName), readinessGates(pod),
	}
}

// podReadyStatusRestarts derives the READY, STATUS and RESTARTS cells the way
// kubectl users know them: init progress first, then the most telling
// container state, then deletion.
func podReadyStatusRestarts(pod *corev1.Pod) (ready, status, restarts string) {
	totalContainers := len(pod.Spec.Containers)
	readyContainers := 0
	restartCount, sidecarRestartCount := 0, 0
	var lastRestart, lastSidecarRestart time.Time

	status = string(pod.Status.Phase)
	if pod.Status.Reason != "" {
		status = pod.Status.Reason
	}
	for _, condition := range pod.Status.Conditions {
		if condition.Type == corev1.PodScheduled && condition.Reason == corev1.PodReasonSchedulingGated {
			status = corev1.PodReasonSchedulingGated
		}
	}

	// Sidecars (restartable init containers) count as regular containers.
	sidecars := map[string]bool{}
	for _, c := range pod.Spec.InitContainers {
		if isSidecar(c) {
			sidecars[c.Name] = true
			totalContainers++
		}
	}

	initializing := false
	for i, cs := range pod.Status.InitContainerStatuses {
		restartCount += int(cs.RestartCount)
		lastRestart = latestTermination(lastRestart, cs)
		if sidecars[cs.Name] {
			sidecarRestartCount += int(cs.RestartCount)
			lastSidecarRestart = latestTermination(lastSidecarRestart, cs)
		}
		switch {
		case cs.State.Terminated != nil && cs.State.Terminated.ExitCode == 0:
			continue
		case sidecars[cs.Name] && cs.Started != nil && *cs.Started:
			if cs.Ready {
				readyContainers++
			}
			continue
		case cs.State.Terminated != nil:
			switch {
			case cs.State.Terminated.Reason != "":
				status = "Init:" + cs.State.Terminated.Reason
			case cs.State.Terminated.Signal != 0:
				status = fmt.Sprintf("Init:Signal:%d", cs.State.Terminated.Signal)
			default:
				status = fmt.Sprintf("Init:ExitCode:%d", cs.State.Terminated.ExitCode)
			}
		case cs.State.Waiting != nil && cs.State.Waiting.Reason != "" && cs.State.Waiting.Reason != "PodInitializing":
			status = "Init:" + cs.State.Waiting.Reason
		default:
			status = fmt.Sprintf("Init:%d/%d", i, len(pod.Spec.InitContainers))
		}
		initializing = true
		break
	}

	if !initializing || podConditionTrue(pod, corev1.PodInitialized) {
		// Once initialised, only sidecar restarts still matter among init containers.
		restartCount, lastRestart = sidecarRestartCount, lastSidecarRestart
		hasRunning := false
		for i := len(pod.Status.ContainerStatuses) - 1; i >= 0; i-- {
			cs := pod.Status.ContainerStatuses[i]
			restartCount += int(cs.RestartCount)
			lastRestart = latestTermination(lastRestart, cs)
			switch {
			case cs.State.Waiting != nil && cs.State.Waiting.Reason != "":
				status = cs.State.Waiting.Reason
			case cs.State.Terminated != nil && cs.State.Terminated.Reason != "":
				status = cs.State.Terminated.Reason
			case cs.State.Terminated != nil && cs.State.Terminated.Signal != 0:
				status = fmt.Sprintf("Signal:%d", cs.State.Terminated.Signal)
			case cs.State.Terminated != nil:
				status = fmt.Sprintf("ExitCode:%d", cs.State.Terminated.ExitCode)
			case cs.Ready && cs.State.Running != nil:
				hasRunning = true
				readyContainers++
			}
		}
		// A pod whose other containers still run is not "Completed".
		if status == "Completed" && hasRunning {
			if podConditionTrue(pod, corev1.PodReady) {
				status = "Running"
			} else {
				status = "NotReady"
			}
		}
	}

	if pod.DeletionTimestamp != nil {
		if pod.Status.Reason == nodeUnreachablePodReason {
			status = "Unknown"
		} else if pod.Status.Phase != corev1.PodSucceeded && pod.Status.Phase != corev1.PodFailed {
			status = "Terminating"
		}
	}

	restarts = strconv.Itoa(restartCount)
	if restartCount != 0 && !lastRestart.IsZero() {
		restarts = fmt.Sprintf("%d (%s ago)", restartCount, duration.HumanDuration(time.Since(lastRestart)))
	}
	return fmt.Sprintf("%d/%d", readyContainers, totalContainers), status, restarts
}

func isSidecar(c corev1.Container) bool {
	return c.RestartPolicy != nil && *c.RestartPolicy == corev1.ContainerRestartPolicyAlways
}

func latestTermination(latest time.Time, cs corev1.ContainerStatus) time.Time {
	if t := cs.LastTerminationState.Terminated; t != nil && t.FinishedAt.After(latest) {
		return t.FinishedAt.Time
	}
	return latest
}

func podConditionTrue(pod *corev1.Pod, conditionType corev1.PodConditionType) bool {
	for _, c := range pod.Status.Conditions {
		if c.Type == conditionType {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

func readinessGates(pod *corev1.Pod) string {
	if len(pod.Spec.ReadinessGates) == 0 {
		return "<none>"
	}
	trueGates := 0
	for _, gate := range pod.Spec.ReadinessGates {
		if podConditionTrue(pod, gate.ConditionType) {
			trueGates++
		}
	}
	return fmt.Sprintf("%d/%d", trueGates, len(pod.Spec.ReadinessGates))
}

var podTemplateColumns = []metav1.TableColumnDefinition{
	nameColumn,
	column("Containers", "string", "Names of the containers in the template."),
	column("Images", "string", "Images of the containers in the template."),
	column("Pod Labels", "string", "Labels of pods created from the template."),
}

func podTemplateCells(t *corev1.PodTemplate) []interface{} {
	names, images := containerCells(t.Template.Spec.Containers)
	return []interface{}{t.Name, names, images, labels.FormatLabels(t.Template.Labels)}
}

var deploymentColumns = []metav1.TableColumnDefinition{
	nameColumn,
	column("Ready", "string", "Ready replicas out of desired replicas."),
	column("Up-to-date", "string", "Replicas running the latest pod template."),
	column("Available", "string", "Replicas available to serve."),
	ageColumn,
	containersColumn,
	imagesColumn,
	wideColumn("Selector", "string", "Label selector of the deployment's pods."),
}

func deploymentCells(d *appsv1.Deployment) []interface{} {
	names, images := containerCells(d.Spec.Template.Spec.Containers)
	selector := "<invalid>"
	if s, err := metav1.LabelSelectorAsSelector(d.Spec.Selector); err == nil {
		selector = s.String()
	}
	return []interface{}{
		d.Name, fmt.Sprintf("%d/%d", d.Status.ReadyReplicas, replicas(d.Spec.Replicas)),
		int64(d.Status.UpdatedReplicas), int64(d.Status.AvailableReplicas), age(d),
		names, images, selector,
	}
}

var replicaSetColumns = []metav1.TableColumnDefinition{
	nameColumn,
	column("Desired", "integer", "Number of replicas wanted."),
	column("Current", "integer", "Number of replicas created."),
	column("Ready", "integer", "Number of ready replicas."),
	ageColumn,
	containersColumn,
	imagesColumn,
	wideColumn("Selector", "string", "Label selector of the managed pods."),
}

func replicaSetCells(rs *appsv1.ReplicaSet) []interface{} {
	names, images := containerCells(rs.Spec.Template.Spec.Containers)
	return []interface{}{
		rs.Name, int64(replicas(rs.Spec.Replicas)), int64(rs.Status.Replicas), int64(rs.Status.ReadyReplicas), age(rs),
		names, images, metav1.FormatLabelSelector(rs.Spec.Selector),
	}
}

func replicationControllerCells(rc *corev1.ReplicationController) []interface{} {
	var containers []corev1.Container
	if rc.Spec.Template != nil {
		containers = rc.Spec.Template.Spec.Containers
	}
	names, images := containerCells(containers)
	return []interface{}{
		rc.Name, int64(replicas(rc.Spec.Replicas)), int64(rc.Status.Replicas), int64(rc.Status.ReadyReplicas), age(rc),
		names, images, labels.FormatLabels(rc.Spec.Selector),
	}
}

var statefulSetColumns = []metav1.TableColumnDefinition{
	nameColumn,
	column("Ready", "string", "Ready replicas out of desired replicas."),
	ageColumn,
	containersColumn,
	imagesColumn,
}

func statefulSetCells(s *appsv1.StatefulSet) []interface{} {
	names, images := containerCells(s.Spec.Template.Spec.Containers)
	return []interface{}{s.Name, fmt.Sprintf("%d/%d", s.Status.ReadyReplicas, replicas(s.Spec.Replicas)), age(s), names, images}
}

var daemonSetColumns = []metav1.TableColumnDefinition{
	nameColumn,
	column("Desired", "integer", "Nodes that should run the daemon pod."),
	column("Current", "integer", "Nodes running at least one daemon pod."),
	column("Ready", "integer", "Nodes with a ready daemon pod."),
	column("Up-to-date", "integer", "Nodes running the latest daemon pod template."),
	column("Available", "integer", "Nodes with an available daemon pod."),
	column("Node Selector", "string", "Node selector of the pod template."),
	ageColumn,
	containersColumn,
	imagesColumn,
	wideColumn("Selector", "string", "Label selector of the daemon pods."),
}

func daemonSetCells(ds *appsv1.DaemonSet) []interface{} {
	names, images := containerCells(ds.Spec.Template.Spec.Containers)
	s := ds.Status
	return []interface{}{
		ds.Name, int64(s.DesiredNumberScheduled), int64(s.CurrentNumberScheduled), int64(s.NumberReady),
		int64(s.UpdatedNumberScheduled), int64(s.NumberAvailable), labels.FormatLabels(ds.Spec.Template.Spec.NodeSelector), age(ds),
		names, images, metav1.FormatLabelSelector(ds.Spec.Selector),
	}
}

var jobColumns = []metav1.TableColumnDefinition{
	nameColumn,
	column("Status", "string", "Summary of the job's conditions."),
	column("Completions", "string", "Succeeded pods out of required completions."),
	column("Duration", "string", "How long the job ran, or has been running."),
	ageColumn,
	containersColumn,
	imagesColumn,
	wideColumn("Selector", "string", "Label selector of the job's pods."),
}

func jobCells(job *batchv1.Job) []interface{} {
	var completions string
	switch {
	case job.Spec.Completions != nil:
		completions = fmt.Sprintf("%d/%d", job.Status.Succeeded, *job.Spec.Completions)
	case job.Spec.Parallelism != nil && *job.Spec.Parallelism > 1:
		completions = fmt.Sprintf("%d/1 of %d", job.Status.Succeeded, *job.Spec.Parallelism)
	default:
		completions = fmt.Sprintf("%d/1", job.Status.Succeeded)
	}
	var jobDuration string
	switch {
	case job.Status.StartTime == nil:
	case job.Status.CompletionTime == nil:
		jobDuration = duration.HumanDuration(time.Since(job.Status.StartTime.Time))
	default:
		jobDuration = duration.HumanDuration(job.Status.CompletionTime.Sub(job.Status.StartTime.Time))
	}
	names, images := containerCells(job.Spec.Template.Spec.Containers)
	return []interface{}{
		job.Name, jobStatus(job), completions, jobDuration, age(job),
		names, images, metav1.FormatLabelSelector(job.Spec.Selector),
	}
}

func jobStatus(job *batchv1.Job) string {
	switch {
	case jobConditionTrue(job, batchv1.JobComplete):
		return "Complete"
	case jobConditionTrue(job, batchv1.JobFailed):
		return "Failed"
	case job.DeletionTimestamp != nil:
		return "Terminating"
	case jobConditionTrue(job, batchv1.JobSuspended):
		return "Suspended"
	case jobConditionTrue(job, batchv1.JobFailureTarget):
		return "FailureTarget"
	case jobConditionTrue(job, batchv1.JobSuccessCriteriaMet):
		return "SuccessCriteriaMet"
	}
	return "Running"
}

func jobConditionTrue(job *batchv1.Job, conditionType batchv1.JobConditionType) bool {
	for _, c := range job.Status.Conditions {
		if c.Type == conditionType {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

var cronJobColumns = []metav1.TableColumnDefinition{
	nameColumn,
	column("Schedule", "string", "Cron schedule of the job."),
	column("Timezone", "string", "Time zone the schedule is interpreted in."),
	column("Suspend", "boolean", "Whether new runs are suspended."),
	column("Active", "integer", "Number of running jobs."),
	column("Last Schedule", "string", "Time since the job was last scheduled."),
	ageColumn,
	containersColumn,
	imagesColumn,
	wideColumn("Selector", "string", "Label selector of the jobs' pods."),
}

func cronJobCells(cj *batchv1.CronJob) []interface{} {
	lastSchedule := "<none>"
	if cj.Status.LastScheduleTime != nil {
		lastSchedule = since(*cj.Status.LastScheduleTime)
	}
	timeZone := "<none>"
	if cj.Spec.TimeZone != nil {
		timeZone = *cj.Spec.TimeZone
	}
	podSpec := cj.Spec.JobTemplate.Spec.Template.Spec
	names, images := containerCells(podSpec.Containers)
	return []interface{}{
		cj.Name, cj.Spec.Schedule, timeZone, boolPtr(cj.Spec.Suspend), int64(len(cj.Status.Active)), lastSchedule, age(cj),
		names, images, metav1.FormatLabelSelector(cj.Spec.JobTemplate.Spec.Selector),
	}
}

var controllerRevisionColumns = []metav1.TableColumnDefinition{
	nameColumn,
	column("Controller", "string", "Object that owns this revision."),
	column("Revision", "string", "Revision number."),
	ageColumn,
}

func controllerRevisionCells(cr *appsv1.ControllerRevision) []interface{} {
	controller := "<none>"
	if ref := metav1.GetControllerOf(cr); ref != nil {
		controller = ref.Name
		if gv, err := schema.ParseGroupVersion(ref.APIVersion); err == nil {
			if gk := gv.WithKind(ref.Kind).GroupKind(); !gk.Empty() {
				controller = strings.ToLower(gk.String()) + "/" + ref.Name
			}
		}
	}
	return []interface{}{cr.Name, controller, cr.Revision, age(cr)}
}

var horizontalPodAutoscalerColumns = []metav1.TableColumnDefinition{
	nameColumn,
	column("Reference", "string", "Kind and name of the scaled object."),
	column("Targets", "string", "Current and target metric values."),
	column("MinPods", "string", "Lower replica bound."),
	column("MaxPods", "string", "Upper replica bound."),
	column("Replicas", "string", "Current number of replicas."),
	ageColumn,
}

func hpaV2Cells(hpa *autoscalingv2.HorizontalPodAutoscaler) []interface{} {
	return hpaCells(hpa, hpa.Spec.ScaleTargetRef.Kind, hpa.Spec.ScaleTargetRef.Name,
		formatHPAMetrics(hpa.Spec.Metrics, hpa.Status.CurrentMetrics), hpa.Spec.MinReplicas, hpa.Spec.MaxReplicas, hpa.Status.CurrentReplicas)
}

// defaultCPUUtilization is the target autoscaling/v1 applies when none is set.
const defaultCPUUtilization = 80

func hpaV1Cells(hpa *autoscalingv1.HorizontalPodAutoscaler) []interface{} {
	target := int32(defaultCPUUtilization)
	if hpa.Spec.TargetCPUUtilizationPercentage != nil {
		target = *hpa.Spec.TargetCPUUtilizationPercentage
	}
	current := "<unknown>"
	if hpa.Status.CurrentCPUUtilizationPercentage != nil {
		current = fmt.Sprintf("%d%%", *hpa.Status.CurrentCPUUtilizationPercentage)
	}
	targets := fmt.Sprintf("cpu: %s/%d%%", current, target)
	return hpaCells(hpa, hpa.Spec.ScaleTargetRef.Kind, hpa.Spec.ScaleTargetRef.Name,
		targets, hpa.Spec.MinReplicas, hpa.Spec.MaxReplicas, hpa.Status.CurrentReplicas)
}

func hpaCells(m metav1.Object, kind, name, targets string, minReplicas *int32, maxReplicas, current int32) []interface{} {
	minPods := "<unset>"
	if minReplicas != nil {
		minPods = strconv.Itoa(int(*minReplicas))
	}
	return []interface{}{m.GetName(), kind + "/" + name, targets, minPods, int64(maxReplicas), int64(current), age(m)}
}

// formatHPAMetrics renders up to two "current/target" pairs.
func formatHPAMetrics(specs []autoscalingv2.MetricSpec, statuses []autoscalingv2.MetricStatus) string {
	if len(specs) == 0 {
		return "<none>"
	}
	const shown = 2
	var list []string
	for i, spec := range specs {
		var status *autoscalingv2.MetricStatus
		if i < len(statuses) {
			status = &statuses[i]
		}
		list = append(list, formatHPAMetric(spec, status))
	}
	if len(list) > shown {
		return fmt.Sprintf("%s + %d more...", strings.Join(list[:shown], ", "), len(list)-shown)
	}
	return strings.Join(list, ", ")
}

func formatHPAMetric(spec autoscalingv2.MetricSpec, status *autoscalingv2.MetricStatus) string {
	const unknown = "<unknown>"
	switch spec.Type {
	case autoscalingv2.ExternalMetricSourceType:
		if spec.External == nil {
			break
		}
		var current *autoscalingv2.MetricValueStatus
		if status != nil && status.External != nil {
			current = &status.External.Current
		}
		return formatValueTarget(spec.External.Target, current)
	case autoscalingv2.ObjectMetricSourceType:
		if spec.Object == nil {
			break
		}
		var current *autoscalingv2.MetricValueStatus
		if status != nil && status.Object != nil {
			current = &status.Object.Current
		}
		return formatValueTarget(spec.Object.Target, current)
	case autoscalingv2.PodsMetricSourceType:
		if spec.Pods == nil {
			break
		}
		cur := unknown
		if status != nil && status.Pods != nil && status.Pods.Current.AverageValue != nil {
			cur = status.Pods.Current.AverageValue.String()
		}
		return fmt.Sprintf("%s/%s", cur, quantityString(spec.Pods.Target.AverageValue))
	case autoscalingv2.ResourceMetricSourceType:
		if spec.Resource == nil {
			break
		}
		var current *autoscalingv2.MetricValueStatus
		if status != nil && status.Resource != nil {
			current = &status.Resource.Current
		}
		return spec.Resource.Name.String() + ": " + formatUtilizationTarget(spec.Resource.Target, current)
	case autoscalingv2.ContainerResourceMetricSourceType:
		if spec.ContainerResource == nil {
			break
		}
		var current *autoscalingv2.MetricValueStatus
		if status != nil && status.ContainerResource != nil {
			current = &status.ContainerResource.Current
		}
		return spec.ContainerResource.Name.String() + ": " + formatUtilizationTarget(spec.ContainerResource.Target, current)
	}
	return "<unknown type>"
}

// formatValueTarget prints object and external metrics: averaged targets get an "(avg)" suffix.
func formatValueTarget(target autoscalingv2.MetricTarget, current *autoscalingv2.MetricValueStatus) string {
	cur := "<unknown>"
	if target.AverageValue != nil {
		if current != nil && current.AverageValue != nil {
			cur = current.AverageValue.String()
		}
		return fmt.Sprintf("%s/%s (avg)", cur, target.AverageValue.String())
	}
	if current != nil && current.Value != nil {
		cur = current.Value.String()
	}
	return fmt.Sprintf("%s/%s", cur, quantityString(target.Value))
}

// formatUtilizationTarget prints resource metrics, by value or by percentage.
func formatUtilizationTarget(target autoscalingv2.MetricTarget, current *autoscalingv2.MetricValueStatus) string {
	cur := "<unknown>"
	if target.AverageValue != nil {
		if current != nil && current.AverageValue != nil {
			cur = current.AverageValue.String()
		}
		return fmt.Sprintf("%s/%s", cur, target.AverageValue.String())
	}
	if current != nil && current.AverageUtilization != nil {
		cur = fmt.Sprintf("%d%%", *current.AverageUtilization)
	}
	goal := "<auto>"
	if target.AverageUtilization != nil {
		goal = fmt.Sprintf("%d%%", *target.AverageUtilization)
	}
	return fmt.Sprintf("%s/%s", cur, goal)
}

var podDisruptionBudgetColumns = []metav1.TableColumnDefinition{
	nameColumn,
	column("Min Available", "string", "Pods that must stay available."),
	column("Max Unavailable", "string", "Pods that may be unavailable."),
	column("Allowed Disruptions", "integer", "Pods that may be disrupted right now."),
	ageColumn,
}

func podDisruptionBudgetCells(pdb *policyv1.PodDisruptionBudget) []interface{} {
	minAvailable, maxUnavailable := "N/A", "N/A"
	if pdb.Spec.MinAvailable != nil {
		minAvailable = pdb.Spec.MinAvailable.String()
	}
	if pdb.Spec.MaxUnavailable != nil {
		maxUnavailable = pdb.Spec.MaxUnavailable.String()
	}
	return []interface{}{pdb.Name, minAvailable, maxUnavailable, int64(pdb.Status.DisruptionsAllowed), age(pdb)}
}

// containerCells lists container names and images, comma separated.
func containerCells(containers []corev1.Container) (names, images string) {
	n := make([]string, len(containers))
	im := make([]string, len(containers))
	for i, c := range containers {
		n[i], im[i] = c.Name, c.Image
	}
	return strings.Join(n, ","), strings.Join(im, ",")
}

// replicas reads an optional replica count (defaulting normally fills it in).
func replicas(r *int32) int32 {
	if r == nil {
		return 0
	}
	return *r
}

// quantityString prints a quantity pointer like kube does, "<nil>" when unset.
func quantityString(q *resource.Quantity) string {
	if q == nil {
		return "<nil>"
	}
	return q.String()
}

func boolPtr(b *bool) string {
	if b == nil {
		return "<unset>"
	}
	if *b {
		return "True"
	}
	return "False"
}

func orNone(s string) string {
	if s == "" {
		return "<none>"
	}
	return s
}

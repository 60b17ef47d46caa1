package workloads

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/utils/ptr"

	"github.com/devplane/devplane/apiserver/workloads/sandbox"
)

// Annotations a pod can carry to direct the simulated kubelet.
const (
	// AnnotationExitAfter makes containers the sandbox does not run exit
	// after this long (a Go duration, e.g. "30s"); without it, those with
	// a command or args in pods whose restartPolicy is Never or OnFailure
	// exit after DefaultRunTime, and the others run until deleted.
	AnnotationExitAfter = "devplane.dev/exit-after"
	// AnnotationExitCode is the exit code they exit with (default 0). A
	// non-zero code fails the pod (Never) or restarts the container with
	// kube's crash-loop back-off states (OnFailure, Always).
	AnnotationExitCode = "devplane.dev/exit-code"
	// AnnotationStartAfter delays each container's start (image pull and
	// creation) by this long; default none.
	AnnotationStartAfter = "devplane.dev/start-after"
)

// Simulated timings: short, so that workloads progress at a developer's
// pace rather than a real cluster's.
var (
	// DefaultRunTime is how long a container of a run-to-completion pod
	// (restartPolicy Never/OnFailure, Jobs) runs when the sandbox does not
	// interpret its command.
	DefaultRunTime = time.Second
	// initContainerRunTime is how long each init container runs.
	initContainerRunTime = 100 * time.Millisecond
	// shutdownTime is how long a deleted pod's containers take to stop
	// (capped by the pod's grace period, never the full 30s).
	shutdownTime = 100 * time.Millisecond
	// crashLoopBaseBackOff doubles per restart up to crashLoopMaxBackOff
	// (kube's kubelet: 10s and 5m).
	crashLoopBaseBackOff = time.Second
	crashLoopMaxBackOff  = time.Minute
)

// kubelet simulates the kubelets of every simulated node: it watches the
// pods bound to them and moves each through kube's pod lifecycle, writing
// status as the pod's node. Nothing runs: the states are computed from
// the pod's spec, its annotations and the time.
type kubelet struct {
	m       *Machinery
	nodes   map[string]*simNode
	pods    cache.SharedIndexInformer
	queue   workqueue.TypedRateLimitingInterface[string]
	workers int
	// handlerSynced: every pod of the initial list has been seen, so the
	// addresses pods already have are reserved before any is handed out.
	handlerSynced func() bool

	mu sync.Mutex
	// started remembers, to the nanosecond, when each container started
	// (status times have second precision): key uid/container/restarts.
	started map[string]time.Time
	// deleting remembers when a pod's deletion was first seen.
	deleting map[string]time.Time

	// api reads what interpreted containers need (configMaps, secrets,
	// services) and requests their service account tokens.
	api      kubernetes.Interface
	runtimes runtimes

	// images says which images cannot be pulled; pulls are the failed
	// pulls of each pod's images, by uid_image (under mu).
	images *ImagePolicy
	pulls  map[string]*imagePull
	// mounted are the pods not run by the sandbox whose volumes were
	// found mountable; certificates are the pod certificates requested
	// (by podCertificateKey). Both under mu.
	mounted      map[types.UID]struct{}
	certificates map[string]*podCertificate
	// mountErrors are each pod's last FailedMount message; killed, when
	// container runs (by startKey) were killed for a failed probe; told,
	// the probe failures (by probeKey under the pod's UID) told in an
	// event. All under mu.
	mountErrors map[types.UID]string
	killed      map[string]time.Time
	told        map[string]struct{}
	// postStarts are the container runs' postStart hooks (by startKey);
	// stopping, each deleted pod's preStop hooks. Both under mu.
	postStarts map[string]*hookRun
	stopping   map[types.UID]*stopping
}

func newKubelet(m *Machinery, nodes []*simNode, pods cache.SharedIndexInformer) (*kubelet, error) {
	k := &kubelet{
		m: m, nodes: map[string]*simNode{}, pods: pods, workers: 8,
		queue: workqueue.NewTypedRateLimitingQueueWithConfig(
			workqueue.NewTypedItemExponentialFailureRateLimiter[string](5*time.Millisecond, 5*time.Second),
			workqueue.TypedRateLimitingQueueConfig[string]{Name: "simulated-kubelet"}),
		started:  map[string]time.Time{},
		deleting: map[string]time.Time{},
		images:   m.images,
	}
	for _, n := range nodes {
		k.nodes[n.name] = n
	}
	reg, err := pods.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    k.enqueue,
		UpdateFunc: func(_, obj any) { k.enqueue(obj) },
		DeleteFunc: k.forget,
	})
	k.handlerSynced = func() bool { return reg != nil && reg.HasSynced() }
	return k, err
}

func (k *kubelet) ours(pod *corev1.Pod) *simNode {
	if pod == nil || pod.Spec.NodeName == "" {
		return nil
	}
	return k.nodes[pod.Spec.NodeName]
}

func (k *kubelet) enqueue(obj any) {
	pod, ok := obj.(*corev1.Pod)
	if !ok || k.ours(pod) == nil {
		return
	}
	// A pod that already has an address keeps it across restarts, and
	// one admitted before holds its host ports.
	if pod.Status.PodIP != "" && !pod.Spec.HostNetwork && !isTerminal(pod) {
		k.ours(pod).ips.reserve(net.ParseIP(pod.Status.PodIP), string(pod.UID))
	}
	if pod.Status.StartTime != nil && !isTerminal(pod) {
		k.ours(pod).ports.admit(pod)
	}
	k.queue.Add(pod.Namespace + "/" + pod.Name)
}

func (k *kubelet) forget(obj any) {
	if d, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = d.Obj
	}
	pod, ok := obj.(*corev1.Pod)
	if !ok {
		return
	}
	if n := k.ours(pod); n != nil {
		n.ips.release(string(pod.UID))
		n.ports.release(pod.UID)
	}
	k.mu.Lock()
	prefix := string(pod.UID) + "/"
	for _, m := range []map[string]time.Time{k.started, k.killed} {
		for key := range m {
			if strings.HasPrefix(key, prefix) {
				delete(m, key)
			}
		}
	}
	for key := range k.told {
		if strings.HasPrefix(key, prefix) {
			delete(k.told, key)
		}
	}
	for key := range k.postStarts {
		if strings.HasPrefix(key, prefix) {
			delete(k.postStarts, key)
		}
	}
	delete(k.stopping, pod.UID)
	delete(k.deleting, string(pod.UID))
	for key := range k.pulls {
		if strings.HasPrefix(key, string(pod.UID)+"_") {
			delete(k.pulls, key)
		}
	}
	for key := range k.certificates {
		if strings.HasPrefix(key, prefix) {
			delete(k.certificates, key)
		}
	}
	delete(k.mounted, pod.UID)
	delete(k.mountErrors, pod.UID)
	k.mu.Unlock()
	k.runtimes.remove(pod.UID)
}

func (k *kubelet) run(ctx context.Context) {
	if err := wait.PollUntilContextCancel(ctx, 5*time.Millisecond, true, func(context.Context) (bool, error) {
		return k.handlerSynced(), nil
	}); err != nil {
		k.queue.ShutDown()
		return
	}
	var wg sync.WaitGroup
	for range k.workers {
		wg.Go(func() {
			for k.processNext(ctx) {
			}
		})
	}
	<-ctx.Done()
	k.queue.ShutDown()
	wg.Wait()
	k.runtimes.removeAll() // a kubelet that stops takes its containers with it
}

func (k *kubelet) processNext(ctx context.Context) bool {
	key, shutdown := k.queue.Get()
	if shutdown {
		return false
	}
	defer k.queue.Done(key)
	next, err := k.sync(ctx, key)
	switch {
	case err != nil && ctx.Err() == nil:
		if !apierrors.IsConflict(err) && !apierrors.IsNotFound(err) {
			k.m.logger.Debug("simulated kubelet: sync failed, retrying", "pod", key, "err", err)
		}
		k.queue.AddRateLimited(key)
	case err == nil:
		k.queue.Forget(key)
		if next > 0 {
			k.queue.AddAfter(key, next)
		}
	}
	return true
}

// sync moves one pod on: it returns when to look at it again (0: when it
// changes).
func (k *kubelet) sync(ctx context.Context, key string) (time.Duration, error) {
	obj, exists, err := k.pods.GetIndexer().GetByKey(key)
	if err != nil || !exists {
		return 0, err
	}
	pod := obj.(*corev1.Pod)
	node := k.ours(pod)
	if node == nil {
		return 0, nil
	}
	now := time.Now()
	if pod.DeletionTimestamp != nil {
		return k.terminate(ctx, node, pod, now)
	}
	if isTerminal(pod) {
		node.ips.release(string(pod.UID))
		node.ports.release(pod.UID)
		return 0, nil
	}
	var events []podEvent
	var status *corev1.PodStatus
	var next time.Time
	if node.ports.admit(pod) {
		status, next, err = k.desiredStatus(node, pod, now, &events)
		if err != nil {
			return 0, err
		}
		if p := k.runtimes.get(pod.UID); p != nil && status.Phase == corev1.PodRunning {
			if at := k.refreshVolumes(ctx, node, pod, p, now); !at.IsZero() && (next.IsZero() || at.Before(next)) {
				next = at
			}
		}
	} else {
		status = rejectedStatus(pod, nodePortsReason, nodePortsMessage, now)
		events = append(events, podEvent{warning: true, reason: nodePortsReason, message: nodePortsMessage})
	}
	if !statusEqual(&pod.Status, status) {
		updated := pod.DeepCopy()
		updated.Status = *status
		if _, err := node.client.CoreV1().Pods(pod.Namespace).UpdateStatus(ctx, updated, metav1.UpdateOptions{}); err != nil {
			return 0, err
		}
		node.emit(pod, events)
	} else {
		// The status is as it was; what happened anew is still told.
		var fresh []podEvent
		for _, e := range events {
			if e.anew {
				fresh = append(fresh, e)
			}
		}
		node.emit(pod, fresh)
	}
	if next.IsZero() {
		return 0, nil
	}
	return max(time.Until(next), time.Millisecond), nil
}

// terminate ends a deleted pod as a kubelet does: its containers get the
// grace period to stop (simulated ones stop after shutdownTime, or the
// grace when shorter), the status says they were stopped, then the pod is
// deleted for good.
func (k *kubelet) terminate(ctx context.Context, node *simNode, pod *corev1.Pod, now time.Time) (time.Duration, error) {
	uid := string(pod.UID)
	k.mu.Lock()
	seen, ok := k.deleting[uid]
	if !ok {
		seen = now
		k.deleting[uid] = now
	}
	k.mu.Unlock()
	if !isTerminal(pod) && pod.Status.StartTime != nil {
		run := k.runtimes.get(pod.UID)
		if !ok {
			var events []podEvent
			for _, c := range pod.Spec.Containers {
				events = append(events, podEvent{path: containerPath(c.Name), reason: "Killing", message: "Stopping container " + c.Name})
			}
			node.emit(pod, events)
			grace := 30 * time.Second
			if g := pod.DeletionGracePeriodSeconds; g != nil {
				grace = time.Duration(*g) * time.Second
			}
			k.stop(pod, run, grace)
		}
		grace := 30 * time.Second
		if g := pod.DeletionGracePeriodSeconds; g != nil {
			grace = time.Duration(*g) * time.Second
		}
		// The preStop hooks run first (within the grace period); then
		// simulated containers stop after shutdownTime, and interpreted
		// ones get the rest of the grace period to end after SIGTERM
		// before they are killed.
		hooked, hooksEnded := k.stopped(pod.UID)
		end := seen.Add(grace)
		switch {
		case !hooked:
		case run == nil:
			end = minTime(end, maxTime(seen, hooksEnded).Add(shutdownTime))
		case run.allEnded():
			end = now
		}
		if left := end.Sub(now); left > 0 {
			return left, nil
		}
		if run != nil {
			run.signal(syscall.SIGKILL)
		}
		// Stopped: the status change brings the pod back to be deleted.
		updated := pod.DeepCopy()
		updated.Status = *stoppedStatus(pod, now)
		_, err := node.client.CoreV1().Pods(pod.Namespace).UpdateStatus(ctx, updated, metav1.UpdateOptions{})
		return 0, err
	}
	err := node.client.CoreV1().Pods(pod.Namespace).Delete(ctx, pod.Name, metav1.DeleteOptions{
		GracePeriodSeconds: ptr.To[int64](0),
		Preconditions:      &metav1.Preconditions{UID: &pod.UID},
	})
	if apierrors.IsNotFound(err) || apierrors.IsConflict(err) {
		return 0, nil // gone already, or a new pod of the same name
	}
	return 0, err
}

// stoppedStatus is a deleted pod's status once its containers were killed:
// each running one terminated (137, as after SIGKILL), each that never ran
// unknown, as the kubelet reports them, and the pod terminal.
func stoppedStatus(pod *corev1.Pod, now time.Time) *corev1.PodStatus {
	st := pod.Status.DeepCopy()
	stop := func(statuses []corev1.ContainerStatus) {
		for i := range statuses {
			cs := &statuses[i]
			switch {
			case cs.State.Running != nil:
				cs.State = corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{
					ExitCode: 137, Reason: "Error", StartedAt: cs.State.Running.StartedAt,
					FinishedAt: metav1.NewTime(now), ContainerID: cs.ContainerID}}
			case cs.State.Terminated == nil:
				cs.State = corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{
					ExitCode: 137, Reason: "ContainerStatusUnknown",
					Message: "The container could not be located when the pod was terminated"}}
			}
			cs.Ready = false
			cs.Started = ptr.To(false)
		}
	}
	stop(st.InitContainerStatuses)
	stop(st.ContainerStatuses)
	stop(st.EphemeralContainerStatuses)
	succeeded := len(st.ContainerStatuses) > 0
	for _, cs := range st.ContainerStatuses {
		if cs.State.Terminated == nil || cs.State.Terminated.ExitCode != 0 {
			succeeded = false
		}
	}
	st.Phase = corev1.PodFailed
	if succeeded {
		st.Phase = corev1.PodSucceeded
	}
	setCondition(st, corev1.PodReadyToStartContainers, corev1.ConditionFalse, "", "", now)
	setCondition(st, corev1.ContainersReady, corev1.ConditionFalse, "PodCompleted", "", now)
	setCondition(st, corev1.PodReady, corev1.ConditionFalse, "PodCompleted", "", now)
	return st
}

// podTiming is what a pod's annotations and restart policy say about how
// its containers run.
type podTiming struct {
	exits      bool
	runTime    time.Duration
	exitCode   int32
	startAfter time.Duration
}

func timingOf(pod *corev1.Pod) (podTiming, error) {
	t := podTiming{}
	if pod.Spec.RestartPolicy != corev1.RestartPolicyAlways {
		t.exits, t.runTime = true, DefaultRunTime
	}
	a := pod.Annotations
	if v, ok := a[AnnotationExitAfter]; ok {
		d, err := time.ParseDuration(v)
		if err != nil || d < 0 {
			return t, fmt.Errorf("annotation %s=%q: not a duration such as 30s", AnnotationExitAfter, v)
		}
		t.exits, t.runTime = true, d
	}
	if v, ok := a[AnnotationExitCode]; ok {
		c, err := strconv.ParseInt(v, 10, 32)
		if err != nil || c < 0 || c > 255 {
			return t, fmt.Errorf("annotation %s=%q: not an exit code 0-255", AnnotationExitCode, v)
		}
		t.exitCode = int32(c)
	}
	if v, ok := a[AnnotationStartAfter]; ok {
		d, err := time.ParseDuration(v)
		if err != nil || d < 0 {
			return t, fmt.Errorf("annotation %s=%q: not a duration such as 5s", AnnotationStartAfter, v)
		}
		t.startAfter = d
	}
	return t, nil
}

// containerTiming is how a container not run by the sandbox runs: one
// with neither command nor args runs its image's own entrypoint, taken to
// serve until stopped (nginx, pause...), whatever the restart policy,
// unless the pod's annotations say otherwise; the others follow the pod's
// timing.
func containerTiming(pod *corev1.Pod, c *corev1.Container, t podTiming) podTiming {
	if _, ok := pod.Annotations[AnnotationExitAfter]; !ok && len(c.Command) == 0 && len(c.Args) == 0 {
		t.exits = false
	}
	return t
}

// desiredStatus is the pod's status at now, and when it next changes.
func (k *kubelet) desiredStatus(node *simNode, pod *corev1.Pod, now time.Time, events *[]podEvent) (*corev1.PodStatus, time.Time, error) {
	st := pod.Status.DeepCopy()
	var next time.Time
	soon := func(t time.Time) {
		if !t.IsZero() && (next.IsZero() || t.Before(next)) {
			next = t
		}
	}
	timing, err := timingOf(pod)
	if err != nil {
		*events = append(*events, podEvent{warning: true, reason: "FailedCreatePodSandBox", message: err.Error()})
		timing, _ = timingOf(&corev1.Pod{Spec: pod.Spec}) // run with the defaults
	}
	nowT := metav1.NewTime(now)
	if st.StartTime == nil {
		st.StartTime = &nowT
	}
	st.HostIP = node.hostIP.String()
	st.HostIPs = []corev1.HostIP{{IP: st.HostIP}}
	if pod.Spec.HostNetwork {
		st.PodIP = st.HostIP
	} else if st.PodIP == "" {
		ip, err := node.ips.allocate(string(pod.UID))
		if err != nil {
			return nil, next, err
		}
		st.PodIP = ip.String()
	}
	st.PodIPs = []corev1.PodIP{{IP: st.PodIP}}
	// Containers started below see the pod's addresses (a shallow copy:
	// the informer's object stays as it is).
	withIPs := *pod
	withIPs.Status.PodIP, withIPs.Status.PodIPs, withIPs.Status.HostIP = st.PodIP, st.PodIPs, st.HostIP
	pod = &withIPs
	if st.Phase == "" {
		st.Phase = corev1.PodPending
	}

	// Init containers run one after the other; sidecars (restartPolicy
	// Always) keep running and only need to have started.
	initDone, initFailed := true, false
	var notInitialized []string
	initStatuses := make([]corev1.ContainerStatus, len(pod.Spec.InitContainers))
	for i := range pod.Spec.InitContainers {
		c := &pod.Spec.InitContainers[i]
		cs := statusOf(st.InitContainerStatuses, c)
		if !initDone {
			cs.State = corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "PodInitializing"}}
			initStatuses[i] = cs
			notInitialized = append(notInitialized, c.Name)
			continue
		}
		sidecar := c.RestartPolicy != nil && *c.RestartPolicy == corev1.ContainerRestartPolicyAlways
		switch {
		case sidecar:
			held := k.postStartHolds(pod, c, &cs, initPath(c.Name), events)
			if !held && cs.State.Running == nil {
				k.start(pod, &cs, now, initPath(c.Name), events)
				held = k.postStartHolds(pod, c, &cs, initPath(c.Name), events)
			}
			if !held {
				k.probe(pod, c, &cs, initPath(c.Name), now, soon)
			}
			if !*cs.Started {
				// The next init container waits for the sidecar to start.
				initDone = false
				notInitialized = append(notInitialized, c.Name)
				initStatuses[i] = cs
				continue
			}
		case cs.State.Terminated != nil && cs.State.Terminated.ExitCode == 0:
		case cs.State.Terminated != nil:
			// Failed, and the pod does not restart it: the pod fails.
			initDone, initFailed = false, true
		case cs.State.Waiting != nil && cs.State.Waiting.Reason == "CrashLoopBackOff":
			initDone = false
			if at := cs.LastTerminationState.Terminated.FinishedAt.Add(backOff(cs.RestartCount)); now.Before(at) {
				soon(at)
				break
			}
			cs.RestartCount++
			k.start(pod, &cs, now, initPath(c.Name), events)
		case cs.State.Running == nil:
			k.start(pod, &cs, now, initPath(c.Name), events)
			initDone = false
			soon(now.Add(initContainerRunTime))
		default:
			code, end, ended := k.ended(pod, c, &cs, podTiming{exits: true, runTime: initContainerRunTime}, initPath(c.Name), now, soon)
			switch {
			case !ended:
				initDone = false
			case code == 0:
				k.exit(&cs, 0, end)
			default:
				k.exit(&cs, code, end)
				initDone = false
				if pod.Spec.RestartPolicy == corev1.RestartPolicyNever {
					initFailed = true
					break
				}
				cs.LastTerminationState = cs.State
				cs.State = corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "CrashLoopBackOff",
					Message: fmt.Sprintf("back-off %s restarting failed container=%s pod=%s_%s(%s)", backOff(cs.RestartCount+1), c.Name, pod.Name, pod.Namespace, pod.UID)}}
				soon(now.Add(backOff(cs.RestartCount + 1)))
			}
		}
		if !initDone {
			notInitialized = append(notInitialized, c.Name)
		}
		if !sidecar && cs.State.Terminated != nil && cs.State.Terminated.ExitCode == 0 {
			cs.Ready = true // kube reports an init container that completed as ready
		}
		initStatuses[i] = cs
	}
	st.InitContainerStatuses = initStatuses

	statuses := make([]corev1.ContainerStatus, len(pod.Spec.Containers))
	var notReady []string
	running, restarting, failed := 0, 0, 0
	for i := range pod.Spec.Containers {
		c := &pod.Spec.Containers[i]
		cs := statusOf(st.ContainerStatuses, c)
		if !initDone {
			cs.State = corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "PodInitializing"}}
		} else {
			k.stepContainer(pod, c, &cs, containerTiming(pod, c, timing), now, soon, containerPath(c.Name), events)
		}
		switch {
		case cs.State.Running != nil:
			running++
		case cs.State.Waiting != nil:
			restarting++
		case cs.State.Terminated != nil && cs.State.Terminated.ExitCode != 0:
			failed++
		}
		if !cs.Ready {
			notReady = append(notReady, c.Name)
		}
		statuses[i] = cs
	}
	st.ContainerStatuses = statuses

	terminal := false
	switch {
	case initFailed:
		st.Phase, terminal = corev1.PodFailed, true
	case !initDone:
		st.Phase = corev1.PodPending
	case running == 0 && restarting == 0 && failed > 0:
		st.Phase, terminal = corev1.PodFailed, true
	case running == 0 && restarting == 0:
		st.Phase, terminal = corev1.PodSucceeded, true
	case running > 0 || st.Phase == corev1.PodRunning:
		st.Phase = corev1.PodRunning
	}
	if d := pod.Spec.ActiveDeadlineSeconds; d != nil && !terminal {
		if deadline := st.StartTime.Add(time.Duration(*d) * time.Second); now.Before(deadline) {
			soon(deadline)
		} else {
			k.exceedDeadline(pod, st, now, events)
			terminal = true
		}
	}
	if len(pod.Spec.EphemeralContainers) > 0 {
		st.EphemeralContainerStatuses = k.stepEphemeral(pod, st.EphemeralContainerStatuses, terminal, initDone, now, soon, events)
	}
	if terminal {
		if p := k.runtimes.get(pod.UID); p != nil {
			p.signal(syscall.SIGKILL) // what still runs stops with the pod
		}
		for i := range st.InitContainerStatuses { // sidecars stop with the pod
			cs := &st.InitContainerStatuses[i]
			if cs.State.Running != nil {
				k.exit(cs, 0, now)
				cs.Ready = false
			}
		}
	}

	// Conditions, in the kubelet's order, keeping transition times.
	setCondition(st, corev1.PodReadyToStartContainers, corev1.ConditionStatus(boolStatus(!terminal)), "", "", now)
	if initDone {
		setCondition(st, corev1.PodInitialized, corev1.ConditionTrue, "", "", now)
	} else {
		setCondition(st, corev1.PodInitialized, corev1.ConditionFalse, "ContainersNotInitialized",
			fmt.Sprintf("containers with incomplete status: [%s]", strings.Join(notInitialized, " ")), now)
	}
	switch {
	case terminal:
		setCondition(st, corev1.ContainersReady, corev1.ConditionFalse, "PodCompleted", "", now)
		setCondition(st, corev1.PodReady, corev1.ConditionFalse, "PodCompleted", "", now)
	case len(notReady) > 0:
		msg := fmt.Sprintf("containers with unready status: [%s]", strings.Join(notReady, " "))
		setCondition(st, corev1.ContainersReady, corev1.ConditionFalse, "ContainersNotReady", msg, now)
		setCondition(st, corev1.PodReady, corev1.ConditionFalse, "ContainersNotReady", msg, now)
	default:
		setCondition(st, corev1.ContainersReady, corev1.ConditionTrue, "", "", now)
		if missing := unmetReadinessGates(pod, st); len(missing) > 0 {
			setCondition(st, corev1.PodReady, corev1.ConditionFalse, "ReadinessGatesNotReady",
				fmt.Sprintf("corresponding condition of pod readiness gate %q does not exist.", missing[0]), now)
		} else {
			setCondition(st, corev1.PodReady, corev1.ConditionTrue, "", "", now)
		}
	}
	setCondition(st, corev1.PodScheduled, corev1.ConditionTrue, "", "", now)
	orderConditions(st)
	// The generation of the spec this status reflects, on the status and
	// the kubelet's own conditions.
	st.ObservedGeneration = pod.Generation
	for i := range st.Conditions {
		if c := &st.Conditions[i]; conditionOrder[c.Type] != 0 && c.Type != corev1.PodScheduled {
			c.ObservedGeneration = pod.Generation
		}
	}
	if terminal {
		next = time.Time{}
	}
	return st, next, nil
}

// stepContainer moves one container on: start (after start-after), run,
// exit when the timing says, restart with back-off per restartPolicy.
func (k *kubelet) stepContainer(pod *corev1.Pod, c *corev1.Container, cs *corev1.ContainerStatus, t podTiming, now time.Time, soon func(time.Time), path string, events *[]podEvent) {
	restart := func(code int32) bool {
		switch pod.Spec.RestartPolicy {
		case corev1.RestartPolicyNever:
			return false
		case corev1.RestartPolicyOnFailure:
			return code != 0
		}
		return true
	}
	if k.postStartHolds(pod, c, cs, path, events) {
		return
	}
	switch {
	case cs.State.Terminated != nil:
		// Finished for good (the pod's restart policy said so).
	case cs.State.Waiting != nil && cs.State.Waiting.Reason == "CrashLoopBackOff":
		finished := now
		if cs.LastTerminationState.Terminated != nil {
			finished = cs.LastTerminationState.Terminated.FinishedAt.Time
		}
		if at := finished.Add(backOff(cs.RestartCount)); now.Before(at) {
			soon(at)
			return
		}
		cs.RestartCount++
		k.start(pod, cs, now, path, events)
	case cs.State.Running == nil:
		created := pod.Status.StartTime
		if t.startAfter > 0 && created != nil {
			if at := created.Add(t.startAfter); now.Before(at) {
				cs.State = corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "ContainerCreating"}}
				soon(at)
				return
			}
		}
		k.start(pod, cs, now, path, events)
	}
	if cs.State.Running != nil {
		if code, end, ended := k.ended(pod, c, cs, t, path, now, soon); ended {
			k.exit(cs, code, end)
			if restart(code) {
				cs.LastTerminationState = cs.State
				if cs.RestartCount == 0 { // the first restart is immediate
					cs.RestartCount++
					k.start(pod, cs, now, path, events)
					if t.exits {
						soon(now.Add(t.runTime))
					}
				} else {
					cs.State = corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "CrashLoopBackOff",
						Message: fmt.Sprintf("back-off %s restarting failed container=%s pod=%s_%s(%s)", backOff(cs.RestartCount), c.Name, pod.Name, pod.Namespace, pod.UID)}}
					soon(now.Add(backOff(cs.RestartCount)))
					*events = append(*events, podEvent{warning: true, path: path, reason: "BackOff",
						message: fmt.Sprintf("Back-off restarting failed container %s in pod %s_%s(%s)", c.Name, pod.Name, pod.Namespace, pod.UID)})
				}
			}
		}
	}
	if k.postStartHolds(pod, c, cs, path, events) {
		return // a run just started waits for its postStart hook
	}
	cs.Started = ptr.To(false)
	cs.Ready = false
	if cs.State.Running != nil {
		k.probe(pod, c, cs, path, now, soon)
	}
}

// stepEphemeral moves the pod's ephemeral containers (kubectl debug) on:
// each starts once the pod's containers may, runs its command in the
// pod's sandbox (or, when the sandbox does not interpret it, until the
// pod ends), and is never ready and never restarted.
func (k *kubelet) stepEphemeral(pod *corev1.Pod, statuses []corev1.ContainerStatus, terminal, initDone bool, now time.Time, soon func(time.Time), events *[]podEvent) []corev1.ContainerStatus {
	out := make([]corev1.ContainerStatus, len(pod.Spec.EphemeralContainers))
	for i := range pod.Spec.EphemeralContainers {
		c := corev1.Container(pod.Spec.EphemeralContainers[i].EphemeralContainerCommon)
		path := ephemeralPath(c.Name)
		cs := statusOf(statuses, &c)
		switch {
		case terminal && cs.State.Running != nil:
			k.exit(&cs, 0, now)
		case !terminal && initDone && cs.State.Waiting != nil:
			k.start(pod, &cs, now, path, events)
		}
		if !terminal && cs.State.Running != nil {
			if code, end, ended := k.ended(pod, &c, &cs, podTiming{}, path, now, soon); ended {
				k.exit(&cs, code, end)
			}
		}
		cs.Started = ptr.To(cs.State.Running != nil)
		cs.Ready = false
		out[i] = cs
	}
	return out
}

// exceedDeadline fails a pod active longer than its activeDeadlineSeconds:
// its containers are killed, as the kubelet does.
func (k *kubelet) exceedDeadline(pod *corev1.Pod, st *corev1.PodStatus, now time.Time, events *[]podEvent) {
	const message = "Pod was active on the node longer than the specified deadline"
	st.Phase, st.Reason, st.Message = corev1.PodFailed, "DeadlineExceeded", message
	if p := k.runtimes.get(pod.UID); p != nil {
		p.signal(syscall.SIGKILL)
	}
	for _, list := range [][]corev1.ContainerStatus{st.InitContainerStatuses, st.ContainerStatuses} {
		for i := range list {
			if list[i].State.Running != nil {
				k.exit(&list[i], 137, now)
			}
		}
	}
	*events = append(*events, podEvent{warning: true, reason: "DeadlineExceeded", message: message})
}

func minTime(a, b time.Time) time.Time {
	if a.Before(b) {
		return a
	}
	return b
}

func maxTime(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

func backOff(restarts int32) time.Duration {
	d := crashLoopBaseBackOff
	for i := int32(1); i < restarts && d < crashLoopMaxBackOff; i++ {
		d *= 2
	}
	return min(d, crashLoopMaxBackOff)
}

// probe sets a running container's started and ready from its probes
// (without a readiness probe, a started container is ready), and kills
// it when its startup or liveness probe failed.
func (k *kubelet) probe(pod *corev1.Pod, c *corev1.Container, cs *corev1.ContainerStatus, path string, now time.Time, soon func(time.Time)) {
	node := k.ours(pod)
	started := k.startedAt(pod, cs)
	ok, failed := k.probeResult(node, pod, c, cs, path, "Startup", c.StartupProbe, started, now, soon)
	cs.Started = ptr.To(ok)
	if !ok {
		cs.Ready = false
		if failed {
			k.kill(pod, c, cs, path, "startup", now)
		}
		return
	}
	if _, failed := k.probeResult(node, pod, c, cs, path, "Liveness", c.LivenessProbe, started, now, soon); failed {
		k.kill(pod, c, cs, path, "liveness", now)
	}
	cs.Ready, _ = k.probeResult(node, pod, c, cs, path, "Readiness", c.ReadinessProbe, started, now, soon)
}

// kill ends a container's run whose probe failed, once, with the
// kubelet's event: an interpreted one is killed in the sandbox, another
// ends at now with 137 (as after SIGKILL).
func (k *kubelet) kill(pod *corev1.Pod, c *corev1.Container, cs *corev1.ContainerStatus, path, probe string, now time.Time) {
	key := startKey(pod, cs)
	k.mu.Lock()
	_, done := k.killed[key]
	if !done {
		if k.killed == nil {
			k.killed = map[string]time.Time{}
		}
		k.killed[key] = now
	}
	k.mu.Unlock()
	if done {
		return
	}
	node := k.ours(pod)
	node.emit(pod, []podEvent{{path: path, reason: "Killing", message: fmt.Sprintf("Container %s failed %s probe, will be restarted", c.Name, probe)}})
	if p := k.runtimes.get(pod.UID); p != nil {
		if run := p.run(path, cs.RestartCount); run != nil {
			run.Kill()
			return
		}
	}
	k.queue.Add(pod.Namespace + "/" + pod.Name)
}

// killedAt is when a container's current run was killed for a failed
// probe, if it was.
func (k *kubelet) killedAt(pod *corev1.Pod, cs *corev1.ContainerStatus) (time.Time, bool) {
	k.mu.Lock()
	defer k.mu.Unlock()
	at, ok := k.killed[startKey(pod, cs)]
	return at, ok
}

func probePassed(p *corev1.Probe, started, now time.Time, soon func(time.Time)) bool {
	if p == nil {
		return true
	}
	at := started.Add(time.Duration(p.InitialDelaySeconds) * time.Second)
	if now.Before(at) {
		soon(at)
		return false
	}
	return true
}

// start puts a container in Running with a new container ID, with the
// kubelet's events for it.
func (k *kubelet) start(pod *corev1.Pod, cs *corev1.ContainerStatus, now time.Time, path string, events *[]podEvent) {
	// Volumes first, then the image, as the kubelet does.
	if interpretedSpec(pod, path) == nil {
		if err := k.volumesReady(context.Background(), k.ours(pod), pod); err != nil {
			k.notStarted(pod, cs, path, err, events)
			return
		}
		if err := k.checkConfig(pod, path); err != nil {
			k.notStarted(pod, cs, path, err, events)
			return
		}
	} else if _, err := k.podVolumes(context.Background(), k.ours(pod), pod, k.runtimes.getOrCreate(pod)); err != nil {
		k.notStarted(pod, cs, path, err, events)
		return
	}
	if retry, ok := k.pullImage(pod, cs, path, now, events); !ok {
		if !retry.IsZero() {
			k.queue.AddAfter(pod.Namespace+"/"+pod.Name, retry.Sub(now))
		}
		return
	}
	if c := interpretedSpec(pod, path); c != nil {
		if err := k.runContainer(context.Background(), k.ours(pod), pod, c, path, cs.RestartCount); err != nil {
			k.notStarted(pod, cs, path, err, events)
			return
		}
	}
	*events = append(*events,
		podEvent{path: path, reason: "Pulled", message: fmt.Sprintf("Container image %q already present on machine", cs.Image)},
		podEvent{path: path, reason: "Created", message: "Created container: " + cs.Name},
		podEvent{path: path, reason: "Started", message: "Started container " + cs.Name})
	cs.State = corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: metav1.NewTime(now)}}
	cs.ContainerID = simulatedContainerProto + "://" + randomHex(32)
	k.mu.Lock()
	k.started[startKey(pod, cs)] = now
	k.mu.Unlock()
	k.postStart(pod, cs, path)
}

// interpretedSpec is the spec of the container at path
// when the sandbox runs its command (nil otherwise: today's rules).
func interpretedSpec(pod *corev1.Pod, path string) *corev1.Container {
	if c := containerSpec(pod, path); c != nil && interpreted(pod, c) {
		return c
	}
	return nil
}

// containerSpec is the spec of the init, regular or ephemeral container
// at path.
func containerSpec(pod *corev1.Pod, path string) *corev1.Container {
	list := pod.Spec.Containers
	switch {
	case strings.HasPrefix(path, "spec.initContainers{"):
		list = pod.Spec.InitContainers
	case strings.HasPrefix(path, "spec.ephemeralContainers{"):
		for i := range pod.Spec.EphemeralContainers {
			if e := &pod.Spec.EphemeralContainers[i]; path == ephemeralPath(e.Name) {
				c := corev1.Container(e.EphemeralContainerCommon)
				return &c
			}
		}
		return nil
	case !strings.HasPrefix(path, "spec.containers{"):
		return nil
	}
	for i := range list {
		if c := &list[i]; path == initPath(c.Name) || path == containerPath(c.Name) {
			return c
		}
	}
	return nil
}

// checkConfig checks what the kubelet resolves before creating a
// container the sandbox does not run: the configMaps and secrets its
// environment reads, its subPaths. Its environment is made only when
// these need it.
func (k *kubelet) checkConfig(pod *corev1.Pod, path string) error {
	c := containerSpec(pod, path)
	if c == nil {
		return nil
	}
	needsEnv := len(c.EnvFrom) > 0
	for _, e := range c.Env {
		if f := e.ValueFrom; f != nil && (f.ConfigMapKeyRef != nil || f.SecretKeyRef != nil) {
			needsEnv = true
		}
	}
	for _, vm := range c.VolumeMounts {
		needsEnv = needsEnv || vm.SubPathExpr != ""
	}
	var env []string
	if needsEnv {
		var err error
		if env, err = k.containerEnv(context.Background(), k.ours(pod), pod, c); err != nil {
			return err
		}
	}
	_, err := containerSubPaths(c, env)
	return err
}

// notStarted leaves a container waiting for what it lacks (a configMap,
// a secret...), with the kubelet's event, and looks again in a second.
func (k *kubelet) notStarted(pod *corev1.Pod, cs *corev1.ContainerStatus, path string, err error, events *[]podEvent) {
	reason, event, message := "ContainerCreating", "FailedMount", err.Error()
	var se *startError
	if errors.As(err, &se) {
		reason, event, message = se.reason, se.event, se.message
	}
	waiting := &corev1.ContainerStateWaiting{Reason: reason}
	if reason != "ContainerCreating" {
		waiting.Message = strings.TrimPrefix(message, "Error: ")
	}
	cs.State = corev1.ContainerState{Waiting: waiting}
	anew := false
	if event == "FailedMount" {
		path = ""
		k.mu.Lock()
		if k.mountErrors == nil {
			k.mountErrors = map[types.UID]string{}
		}
		anew = k.mountErrors[pod.UID] != message
		k.mountErrors[pod.UID] = message
		k.mu.Unlock()
	}
	*events = append(*events, podEvent{warning: true, path: path, reason: event, message: message, anew: anew})
	k.queue.AddAfter(pod.Namespace+"/"+pod.Name, time.Second)
}

// ended reports whether and how a running container's current run
// ended: the sandbox's result for an interpreted one, the pod's timing
// for the others.
func (k *kubelet) ended(pod *corev1.Pod, c *corev1.Container, cs *corev1.ContainerStatus, t podTiming, path string, now time.Time, soon func(time.Time)) (int32, time.Time, bool) {
	if interpreted(pod, c) {
		p := k.runtimes.get(pod.UID)
		var run *sandbox.Container
		if p != nil {
			run = p.run(path, cs.RestartCount)
		}
		if run == nil {
			// Not started by this kubelet (it restarted): start it again.
			if err := k.runContainer(context.Background(), k.ours(pod), pod, c, path, cs.RestartCount); err != nil {
				k.queue.AddAfter(pod.Namespace+"/"+pod.Name, time.Second)
			}
			return 0, time.Time{}, false
		}
		result, ended := run.Result()
		return int32(result.ExitCode), result.FinishedAt, ended
	}
	if at, ok := k.killedAt(pod, cs); ok {
		return 137, at, true
	}
	if !t.exits {
		return 0, time.Time{}, false
	}
	end := k.startedAt(pod, cs).Add(t.runTime)
	if now.Before(end) {
		soon(end)
		return 0, time.Time{}, false
	}
	return t.exitCode, now, true
}

func (k *kubelet) exit(cs *corev1.ContainerStatus, code int32, now time.Time) {
	var started metav1.Time
	if cs.State.Running != nil {
		started = cs.State.Running.StartedAt
	}
	reason := "Completed"
	if code != 0 {
		reason = "Error"
	}
	cs.State = corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{
		ExitCode: code, Reason: reason, StartedAt: started, FinishedAt: metav1.NewTime(now), ContainerID: cs.ContainerID}}
	cs.Ready = false
	cs.Started = ptr.To(false)
}

// startedAt is when the container's current run began, to the nanosecond
// when this process started it.
func (k *kubelet) startedAt(pod *corev1.Pod, cs *corev1.ContainerStatus) time.Time {
	k.mu.Lock()
	t, ok := k.started[startKey(pod, cs)]
	k.mu.Unlock()
	if ok {
		return t
	}
	if cs.State.Running != nil {
		return cs.State.Running.StartedAt.Time
	}
	return time.Now()
}

func startKey(pod *corev1.Pod, cs *corev1.ContainerStatus) string {
	return string(pod.UID) + "/" + cs.Name + "/" + strconv.Itoa(int(cs.RestartCount))
}

// statusOf is a container's current status, or a new one waiting to be
// created.
func statusOf(statuses []corev1.ContainerStatus, c *corev1.Container) corev1.ContainerStatus {
	for _, s := range statuses {
		if s.Name == c.Name {
			s.Image = c.Image
			return *s.DeepCopy()
		}
	}
	return corev1.ContainerStatus{
		Name:    c.Name,
		Image:   c.Image,
		ImageID: imageID(c.Image),
		State:   corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "ContainerCreating"}},
		Started: ptr.To(false),
	}
}

// imageID is a digest reference for the image, as a runtime reports
// after pulling: stable for the same image name.
func imageID(image string) string {
	repo := image
	if i := strings.LastIndex(repo, "@"); i >= 0 {
		repo = repo[:i]
	} else if i := strings.LastIndex(repo, ":"); i > strings.LastIndex(repo, "/") {
		repo = repo[:i]
	}
	if !strings.Contains(repo, "/") {
		repo = "library/" + repo
	}
	if first := repo[:strings.Index(repo, "/")]; !strings.ContainsAny(first, ".:") && first != "localhost" {
		repo = "docker.io/" + repo
	}
	sum := sha256.Sum256([]byte(image))
	return repo + "@sha256:" + hex.EncodeToString(sum[:])
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

func boolStatus(b bool) string {
	if b {
		return string(corev1.ConditionTrue)
	}
	return string(corev1.ConditionFalse)
}

// setCondition sets a pod condition, keeping its transition time when
// the status is unchanged.
func setCondition(st *corev1.PodStatus, t corev1.PodConditionType, status corev1.ConditionStatus, reason, message string, now time.Time) {
	for i := range st.Conditions {
		c := &st.Conditions[i]
		if c.Type != t {
			continue
		}
		if t == corev1.PodScheduled && c.Status == corev1.ConditionTrue {
			return // the scheduler's
		}
		if c.Status != status {
			c.LastTransitionTime = metav1.NewTime(now)
		}
		c.Status, c.Reason, c.Message = status, reason, message
		return
	}
	st.Conditions = append(st.Conditions, corev1.PodCondition{Type: t, Status: status, Reason: reason, Message: message,
		LastTransitionTime: metav1.NewTime(now)})
}

var conditionOrder = map[corev1.PodConditionType]int{
	corev1.PodReadyToStartContainers: 1, corev1.PodInitialized: 2, corev1.PodReady: 3, corev1.ContainersReady: 4, corev1.PodScheduled: 5,
}

// orderConditions lists the kubelet's conditions in its order, others
// (readiness gates, DisruptionTarget) after them as they were.
func orderConditions(st *corev1.PodStatus) {
	sort.SliceStable(st.Conditions, func(i, j int) bool {
		a, b := conditionOrder[st.Conditions[i].Type], conditionOrder[st.Conditions[j].Type]
		if a == 0 {
			a = 100
		}
		if b == 0 {
			b = 100
		}
		return a < b
	})
}

func unmetReadinessGates(pod *corev1.Pod, st *corev1.PodStatus) []string {
	var missing []string
	for _, g := range pod.Spec.ReadinessGates {
		ok := false
		for _, c := range st.Conditions {
			if c.Type == g.ConditionType && c.Status == corev1.ConditionTrue {
				ok = true
			}
		}
		if !ok {
			missing = append(missing, string(g.ConditionType))
		}
	}
	return missing
}

func isTerminal(pod *corev1.Pod) bool {
	return pod.Status.Phase == corev1.PodSucceeded || pod.Status.Phase == corev1.PodFailed
}

// statusEqual compares what the kubelet writes, ignoring sub-second time
// differences the API does not keep.
func statusEqual(a, b *corev1.PodStatus) bool {
	return podStatusString(a) == podStatusString(b)
}

func podStatusString(s *corev1.PodStatus) string {
	c := s.DeepCopy()
	trunc := func(t *metav1.Time) { *t = metav1.NewTime(t.Time.Truncate(time.Second)) }
	for i := range c.Conditions {
		trunc(&c.Conditions[i].LastTransitionTime)
		trunc(&c.Conditions[i].LastProbeTime)
	}
	for _, list := range [][]corev1.ContainerStatus{c.InitContainerStatuses, c.ContainerStatuses, c.EphemeralContainerStatuses} {
		for i := range list {
			for _, st := range []*corev1.ContainerState{&list[i].State, &list[i].LastTerminationState} {
				if st.Running != nil {
					trunc(&st.Running.StartedAt)
				}
				if st.Terminated != nil {
					trunc(&st.Terminated.StartedAt)
					trunc(&st.Terminated.FinishedAt)
				}
			}
		}
	}
	if c.StartTime != nil {
		trunc(c.StartTime)
	}
	return c.String()
}

// podEvent is an event the kubelet records about a pod once the status
// it goes with is written.
type podEvent struct {
	warning         bool
	path            string // the container's field path
	reason, message string
	// anew: recorded even when the status did not change (a mount that
	// fails for another reason).
	anew bool
}

// A container's event field path, as the kubelet names it.
func initPath(name string) string      { return "spec.initContainers{" + name + "}" }
func containerPath(name string) string { return "spec.containers{" + name + "}" }
func ephemeralPath(name string) string { return "spec.ephemeralContainers{" + name + "}" }

// emit records events as this node's kubelet.
func (n *simNode) emit(pod *corev1.Pod, events []podEvent) {
	if n.recorder == nil {
		return
	}
	for _, e := range events {
		ref := &corev1.ObjectReference{Kind: "Pod", Namespace: pod.Namespace, Name: pod.Name, UID: pod.UID,
			APIVersion: "v1", ResourceVersion: pod.ResourceVersion, FieldPath: e.path}
		typ := corev1.EventTypeNormal
		if e.warning {
			typ = corev1.EventTypeWarning
		}
		n.recorder.Event(ref, typ, e.reason, e.message)
	}
}

package workloads

// Pod admission as a kubelet does it before it runs a pod: the host ports
// the pod asks for must be free on its node, or the pod fails at once
// (kube's lifecycle.PredicateAdmitHandler with the scheduler's NodePorts
// filter). The scheduler checks the same, but a pod bound by spec.nodeName
// skips it.

import (
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	fwk "k8s.io/kube-scheduler/framework"
	schedutil "k8s.io/kubernetes/pkg/scheduler/util"
)

// kube's reason and message for a pod whose host ports are taken.
const (
	nodePortsReason  = "NodePorts"
	nodePortsMessage = "Predicate NodePorts failed: node(s) didn't have free ports for the requested pod ports"
)

// hostPorts are the host ports held by the pods a node's kubelet admitted
// and that have not ended.
type hostPorts struct {
	mu   sync.Mutex
	pods map[types.UID][]corev1.ContainerPort
}

// admit reports whether the pod's host ports are free, and holds them for
// it if so. A pod admitted before is admitted again.
func (h *hostPorts) admit(pod *corev1.Pod) bool {
	want := schedutil.GetHostPorts(pod)
	h.mu.Lock()
	defer h.mu.Unlock()
	if _, ok := h.pods[pod.UID]; ok {
		return true
	}
	used := fwk.HostPortInfo{}
	for _, ports := range h.pods {
		for _, p := range ports {
			used.Add(p.HostIP, string(p.Protocol), p.HostPort)
		}
	}
	for _, p := range want {
		if used.CheckConflict(p.HostIP, string(p.Protocol), p.HostPort) {
			return false
		}
	}
	if h.pods == nil {
		h.pods = map[types.UID][]corev1.ContainerPort{}
	}
	h.pods[pod.UID] = want
	return true
}

// release frees the ports of a pod that ended or was deleted.
func (h *hostPorts) release(uid types.UID) {
	h.mu.Lock()
	delete(h.pods, uid)
	h.mu.Unlock()
}

// rejectedStatus is the status of a pod the kubelet refused: failed, with
// the admission's reason, and no container ever started.
func rejectedStatus(pod *corev1.Pod, reason, message string, now time.Time) *corev1.PodStatus {
	st := pod.Status.DeepCopy()
	st.Phase, st.Reason, st.Message = corev1.PodFailed, reason, "Pod was rejected: "+message
	if st.StartTime == nil {
		t := metav1.NewTime(now)
		st.StartTime = &t
	}
	return st
}

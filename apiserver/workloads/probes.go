package workloads

// Probes: an exec probe of an interpreted container runs its command in
// the container's sandbox every periodSeconds, bounded by timeoutSeconds,
// its result following kube's success and failure thresholds; httpGet,
// tcpSocket and grpc probes reach simulated servers (networkProbe).

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"strconv"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/devplane/devplane/apiserver/workloads/sandbox"
)

// probeState is one probe of one container run.
type probeState struct {
	mu                  sync.Mutex
	running             bool
	next                time.Time // when it runs next (zero: after the initial delay)
	successes, failures int32
	result              bool
}

// probeKey names a probe of a container's run.
func probeKey(path string, restartCount int32, kind string) string {
	return fmt.Sprintf("%s/%d/%s", path, restartCount, kind)
}

func (p *podRuntime) probe(key string, initial bool) *probeState {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.probes == nil {
		p.probes = map[string]*probeState{}
	}
	s := p.probes[key]
	if s == nil {
		s = &probeState{result: initial}
		p.probes[key] = s
	}
	return s
}

// probeResult is a probe's current result, and whether it failed (its
// failure threshold reached). kind is "Startup", "Liveness" or
// "Readiness", as kube's events name it. An exec probe runs in an
// interpreted container's sandbox; httpGet, tcpSocket and grpc probes
// reach the pod's simulated servers (networkProbe); an exec probe of
// another container keeps the simulated rule: it passes once its initial
// delay is over.
func (k *kubelet) probeResult(node *simNode, pod *corev1.Pod, c *corev1.Container, cs *corev1.ContainerStatus, path, kind string, pr *corev1.Probe, started, now time.Time, soon func(time.Time)) (ok, failed bool) {
	if pr == nil {
		return true, false
	}
	if pr.Exec == nil {
		return k.networkProbeResult(node, pod, c, cs, path, kind, pr, started, now, soon)
	}
	var run *sandbox.Container
	var p *podRuntime
	if interpreted(pod, c) {
		if p = k.runtimes.get(pod.UID); p != nil {
			run = p.run(path, cs.RestartCount)
		}
	}
	if run == nil {
		if kind == "Liveness" {
			return true, false
		}
		return probePassed(pr, started, now, soon), false
	}
	s := p.probe(probeKey(path, cs.RestartCount, kind), kind == "Liveness")
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.next.IsZero() {
		s.next = started.Add(time.Duration(pr.InitialDelaySeconds) * time.Second)
	}
	if kind == "Startup" && s.result {
		return true, false // a startup probe stops once it succeeded
	}
	if !s.running {
		if now.Before(s.next) {
			soon(s.next)
		} else {
			s.running = true
			go k.runProbe(node, pod, c.Name, path, kind, pr, run, s)
		}
	}
	return s.result, !s.result && s.failures >= max(pr.FailureThreshold, 1)
}

// networkProbeResult is an httpGet, tcpSocket or grpc probe's result: its
// outcome never changes (a pod's ports are fixed), so it is decided once
// the probe has run as often as its threshold asks, and a failure is told
// once per container run.
func (k *kubelet) networkProbeResult(node *simNode, pod *corev1.Pod, c *corev1.Container, cs *corev1.ContainerStatus, path, kind string, pr *corev1.Probe, started, now time.Time, soon func(time.Time)) (ok, failed bool) {
	initial := kind == "Liveness"
	passes, failure := networkProbe(pod, c, pr)
	times := max(pr.FailureThreshold, 1)
	if passes {
		times = max(pr.SuccessThreshold, 1)
	}
	period := time.Duration(max(pr.PeriodSeconds, 1)) * time.Second
	decided := started.Add(time.Duration(pr.InitialDelaySeconds)*time.Second + time.Duration(times-1)*period)
	if now.Before(decided) {
		soon(decided)
		return initial, false
	}
	if !passes {
		key := string(pod.UID) + "/" + probeKey(path, cs.RestartCount, kind)
		k.mu.Lock()
		_, told := k.told[key]
		if k.told == nil {
			k.told = map[string]struct{}{}
		}
		k.told[key] = struct{}{}
		k.mu.Unlock()
		if !told {
			node.emit(pod, []podEvent{{warning: true, path: path, reason: "Unhealthy", message: kind + " probe failed: " + failure}})
		}
	}
	return passes, !passes
}

// networkProbe is the outcome of an httpGet, tcpSocket or grpc probe. The
// pod has no network here: devplane simulates a server on every TCP port
// the pod's containers declare, which answers every probe with success,
// and nothing on the others, whose probes are refused; a pod that
// declares no port is taken to serve whatever its probes ask.
func networkProbe(pod *corev1.Pod, c *corev1.Container, pr *corev1.Probe) (bool, string) {
	var port intstr.IntOrString
	host, what := pod.Status.PodIP, ""
	switch {
	case pr.HTTPGet != nil:
		port = pr.HTTPGet.Port
		if pr.HTTPGet.Host != "" {
			host = pr.HTTPGet.Host
		}
	case pr.TCPSocket != nil:
		port = pr.TCPSocket.Port
		if pr.TCPSocket.Host != "" {
			host = pr.TCPSocket.Host
		}
	case pr.GRPC != nil:
		port = intstr.FromInt32(pr.GRPC.Port)
	default:
		return true, ""
	}
	number := port.IntValue()
	if port.Type == intstr.String {
		number = 0
		for _, p := range c.Ports {
			if p.Name == port.StrVal {
				number = int(p.ContainerPort)
			}
		}
		if number == 0 {
			return false, fmt.Sprintf("couldn't find port: %s in %s", port.StrVal, c.Name)
		}
	}
	declared := false
	for _, list := range [][]corev1.Container{pod.Spec.Containers, pod.Spec.InitContainers} {
		for _, other := range list {
			for _, p := range other.Ports {
				if p.Protocol != "" && p.Protocol != corev1.ProtocolTCP {
					continue
				}
				declared = true
				if int(p.ContainerPort) == number {
					return true, ""
				}
			}
		}
	}
	if !declared {
		return true, "" // what it serves is not said: taken to be what is probed
	}
	addr := net.JoinHostPort(host, strconv.Itoa(number))
	switch {
	case pr.HTTPGet != nil:
		scheme := strings.ToLower(string(pr.HTTPGet.Scheme))
		if scheme == "" {
			scheme = "http"
		}
		what = fmt.Sprintf("Get %q: ", scheme+"://"+addr+pr.HTTPGet.Path)
	case pr.GRPC != nil:
		what = fmt.Sprintf("failed to connect service %q: ", addr)
	}
	return false, what + "dial tcp " + addr + ": connect: connection refused (devplane: no container of the pod declares this port)"
}

// runProbe runs the probe's command once and records its outcome, with
// kube's Unhealthy event on failure, then looks at the pod again.
func (k *kubelet) runProbe(node *simNode, pod *corev1.Pod, container, path, kind string, pr *corev1.Probe, run *sandbox.Container, s *probeState) {
	timeout := time.Duration(max(pr.TimeoutSeconds, 1)) * time.Second
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	var out bytes.Buffer
	code, err := run.Exec(ctx, pr.Exec.Command, nil, &out, &out, false)
	timedOut := ctx.Err() != nil
	cancel()
	ok := err == nil && code == 0 && !timedOut
	var message string
	switch {
	case timedOut:
		message = fmt.Sprintf("%s probe errored and resulted in unknown state: command timed out after %s", kind, timeout)
	case !ok:
		message = fmt.Sprintf("%s probe failed: %s", kind, strings.TrimSpace(out.String()))
	}
	period := time.Duration(max(pr.PeriodSeconds, 1)) * time.Second
	s.mu.Lock()
	if ok {
		s.successes, s.failures = s.successes+1, 0
		if s.successes >= max(pr.SuccessThreshold, 1) {
			s.result = true
		}
	} else {
		s.failures, s.successes = s.failures+1, 0
		if s.failures >= max(pr.FailureThreshold, 1) {
			s.result = false
		}
	}
	s.running = false
	s.next = time.Now().Add(period)
	s.mu.Unlock()
	if message != "" {
		node.emit(pod, []podEvent{{warning: true, path: path, reason: "Unhealthy", message: message}})
	}
	k.queue.Add(pod.Namespace + "/" + pod.Name)
}

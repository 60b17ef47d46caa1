package workloads

// exec probes of interpreted containers: the probe's command runs in the
// container's sandbox every periodSeconds, bounded by timeoutSeconds, and
// its result follows kube's success and failure thresholds.

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"

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

// probeResult is a probe's current result. kind is "Startup", "Liveness" or
// "Readiness", as kube's events name it. A probe that is not an exec
// probe of an interpreted container keeps the simulated rule: it passes
// once its initial delay is over.
func (k *kubelet) probeResult(node *simNode, pod *corev1.Pod, c *corev1.Container, cs *corev1.ContainerStatus, path, kind string, pr *corev1.Probe, started, now time.Time, soon func(time.Time)) bool {
	if pr == nil {
		return true
	}
	var run *sandbox.Container
	var p *podRuntime
	if pr.Exec != nil && interpreted(pod, c) {
		if p = k.runtimes.get(pod.UID); p != nil {
			run = p.run(path, cs.RestartCount)
		}
	}
	if run == nil {
		if kind == "Liveness" {
			return true
		}
		return probePassed(pr, started, now, soon)
	}
	s := p.probe(probeKey(path, cs.RestartCount, kind), kind == "Liveness")
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.next.IsZero() {
		s.next = started.Add(time.Duration(pr.InitialDelaySeconds) * time.Second)
	}
	if kind == "Startup" && s.result {
		return true // a startup probe stops once it succeeded
	}
	if !s.running {
		if now.Before(s.next) {
			soon(s.next)
		} else {
			s.running = true
			go k.runProbe(node, pod, c.Name, path, kind, pr, run, s)
		}
	}
	return s.result
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

package workloads

// pods/log as a kubelet answers it, from what the sandbox captured of an
// interpreted container's output.

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	corev1conversion "k8s.io/kubernetes/pkg/apis/core/v1"
	"k8s.io/streaming/pkg/httpstream/wsstream"

	"github.com/devplane/devplane/apiserver/workloads/sandbox"
)

// notInterpreted is the answer for a container that runs by the
// simulated rules: nothing ran, so there is no output or shell to reach.
func notInterpreted(what, container, pod string) error {
	return apierrors.NewBadRequest(fmt.Sprintf("%s: container %q in pod %q does not run in devplane's sandbox "+
		"(its command is not one the sandbox interprets, such as a shell script, or the pod's devplane.dev annotations direct its run)",
		what, container, pod))
}

// containerName is the container a log or exec request names, or the
// pod's only container, with kube's API server's errors.
func containerName(pod *corev1.Pod, name string) (string, error) {
	if name != "" {
		for _, c := range allContainers(pod) {
			if c == name {
				return name, nil
			}
		}
		return "", apierrors.NewBadRequest(fmt.Sprintf("container %s is not valid for pod %s", name, pod.Name))
	}
	switch len(pod.Spec.Containers) {
	case 1:
		return pod.Spec.Containers[0].Name, nil
	case 0:
		return "", apierrors.NewBadRequest(fmt.Sprintf("a container name must be specified for pod %s", pod.Name))
	}
	return "", apierrors.NewBadRequest(fmt.Sprintf("a container name must be specified for pod %s, choose one of: %s", pod.Name, allContainers(pod)))
}

// allContainers names the pod's init, regular and ephemeral containers.
func allContainers(pod *corev1.Pod) []string {
	var names []string
	for _, c := range pod.Spec.InitContainers {
		names = append(names, c.Name)
	}
	for _, c := range pod.Spec.Containers {
		names = append(names, c.Name)
	}
	for _, c := range pod.Spec.EphemeralContainers {
		names = append(names, c.Name)
	}
	return names
}

// fieldPathOf is the container's field path in the pod's spec.
func fieldPathOf(pod *corev1.Pod, name string) string {
	for _, c := range pod.Spec.InitContainers {
		if c.Name == name {
			return initPath(name)
		}
	}
	for _, c := range pod.Spec.Containers {
		if c.Name == name {
			return containerPath(name)
		}
	}
	return ephemeralPath(name)
}

// containerStatus is the named container's status in the pod.
func containerStatus(pod *corev1.Pod, name string) (corev1.ContainerStatus, bool) {
	for _, list := range [][]corev1.ContainerStatus{pod.Status.ContainerStatuses, pod.Status.InitContainerStatuses, pod.Status.EphemeralContainerStatuses} {
		for _, s := range list {
			if s.Name == name {
				return s, true
			}
		}
	}
	return corev1.ContainerStatus{}, false
}

// runtimeOf is the sandbox of a pod on one of this replica's running
// simulated nodes, if it has one.
func (m *Machinery) runtimeOf(pod *corev1.Pod) *podRuntime {
	if m == nil {
		return nil
	}
	m.mu.Lock()
	k := m.kubelet
	m.mu.Unlock()
	if k == nil || !m.running.Load() || k.ours(pod) == nil {
		return nil
	}
	return k.runtimes.get(pod.UID)
}

// ServeLog answers pods/log for pod: the chosen container's output as
// its kubelet would stream it.
func (m *Machinery) ServeLog(w http.ResponseWriter, r *http.Request, pod *corev1.Pod) error {
	var opts corev1.PodLogOptions
	query := r.URL.Query()
	if err := corev1conversion.Convert_url_Values_To_v1_PodLogOptions(&query, &opts, nil); err != nil {
		return apierrors.NewBadRequest(err.Error())
	}
	name, err := containerName(pod, opts.Container)
	if err != nil {
		return err
	}
	status, found := containerStatus(pod, name)
	if !found {
		return apierrors.NewBadRequest(fmt.Sprintf("container %q in pod %q is not available", name, pod.Name))
	}
	switch {
	case opts.Previous && status.LastTerminationState.Terminated == nil:
		return apierrors.NewBadRequest(fmt.Sprintf("previous terminated container %q in pod %q not found", name, pod.Name))
	case !opts.Previous && status.State.Waiting != nil && status.LastTerminationState.Terminated == nil:
		return apierrors.NewBadRequest(fmt.Sprintf("container %q in pod %q is waiting to start: %s", name, pod.Name, status.State.Waiting.Reason))
	}
	p := m.runtimeOf(pod)
	if p == nil {
		return notInterpreted("no logs", name, pod.Name)
	}
	current, previous := p.logs(fieldPathOf(pod, name))
	// While the container waits to restart, its last run is the one
	// kept as current; the one before it is previous.
	run := current
	if opts.Previous && status.State.Waiting == nil {
		run = previous
	}
	if run == nil {
		return notInterpreted("no logs", name, pod.Name)
	}

	format := sandbox.LogOptions{Timestamps: opts.Timestamps, TailLines: -1}
	if opts.TailLines != nil {
		format.TailLines = *opts.TailLines
	}
	if opts.LimitBytes != nil {
		format.LimitBytes = *opts.LimitBytes
	}
	switch {
	case opts.SinceTime != nil:
		format.Since = opts.SinceTime.Time
	case opts.SinceSeconds != nil:
		format.Since = time.Now().Add(-time.Duration(*opts.SinceSeconds) * time.Second)
	}
	if wsstream.IsWebSocketRequest(r) {
		// As kube-apiserver streams a log to a websocket client: the
		// bytes as binary (or base64) messages.
		pr, pw := io.Pipe()
		go func() {
			follow(r.Context(), pw, nil, run, format, opts.Follow)
			pw.Close()
		}()
		defer pr.Close()
		_ = wsstream.NewReader(pr, true, wsstream.NewDefaultReaderProtocols()).Copy(w, r)
		return nil
	}
	w.Header().Set("Content-Type", "text/plain")
	w.WriteHeader(http.StatusOK)
	flusher, _ := w.(http.Flusher)
	follow(r.Context(), w, flusher, run, format, opts.Follow)
	return nil
}

// follow writes the run's log, and with more, what it writes until it
// ends (or the client goes, or limitBytes is reached).
func follow(ctx context.Context, w io.Writer, flusher http.Flusher, run *sandbox.Container, format sandbox.LogOptions, more bool) {
	flush := func() {
		if flusher != nil {
			flusher.Flush()
		}
	}
	log := run.Log()
	changed := log.Changed()
	lines := log.Lines()
	out := sandbox.Format(lines, format)
	_, _ = w.Write(out)
	written, sent := int64(len(out)), len(lines)
	for more && (format.LimitBytes == 0 || written < format.LimitBytes) {
		flush()
		select {
		case <-ctx.Done():
			return
		case <-changed:
		case <-run.Done():
			more = false
		}
		changed = log.Changed()
		lines = log.Lines()
		sent = min(sent, len(lines)) // the oldest lines may have gone
		next := sandbox.LogOptions{Timestamps: format.Timestamps, TailLines: -1}
		if format.LimitBytes > 0 {
			next.LimitBytes = format.LimitBytes - written
		}
		out = sandbox.Format(lines[sent:], next)
		_, _ = w.Write(out)
		written, sent = written+int64(len(out)), len(lines)
	}
	flush()
}

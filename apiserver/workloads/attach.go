package workloads

// pods/attach to interpreted containers, over the same protocols as exec
// (exec.go): the session writes to the container's open stdin (stdin:
// true) and sees what the container writes from then on, as a container
// runtime's attach does; `kubectl debug -it`, `kubectl run -it` and
// `kubectl attach` use it.

import (
	"context"
	"io"
	"net/http"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apiserver/pkg/util/proxy"
	"k8s.io/cri-streaming/pkg/streaming/remotecommand"
	corev1conversion "k8s.io/kubernetes/pkg/apis/core/v1"
)

// ServeAttach answers pods/attach for pod: the session is joined to the
// chosen container's stdin and output until the container ends or the
// client goes.
func (m *Machinery) ServeAttach(w http.ResponseWriter, r *http.Request, pod *corev1.Pod) error {
	var opts corev1.PodAttachOptions
	query := r.URL.Query()
	if err := corev1conversion.Convert_url_Values_To_v1_PodAttachOptions(&query, &opts, nil); err != nil {
		return apierrors.NewBadRequest(err.Error())
	}
	streams := proxy.Options{Stdin: opts.Stdin, Stdout: opts.Stdout, Stderr: opts.Stderr, Tty: opts.TTY}
	return m.serveSession(w, r, pod, "attach", opts.Container, streams, func(name string) {
		m.serveAttachSPDY(w, r, pod.UID, pod, name, &opts)
	})
}

// serveAttachSPDY runs an attach session over SPDY with the kubelet's
// streaming server code.
func (m *Machinery) serveAttachSPDY(w http.ResponseWriter, r *http.Request, uid types.UID, pod *corev1.Pod, name string, opts *corev1.PodAttachOptions) {
	streams := &remotecommand.Options{Stdin: opts.Stdin, Stdout: opts.Stdout, Stderr: opts.Stderr && !opts.TTY, TTY: opts.TTY}
	podName := string(uid)
	if pod != nil {
		podName = pod.Name
	}
	remotecommand.ServeAttach(w, r, sandboxExecutor{m: m, uid: uid, pod: pod}, podName, string(uid), name, streams,
		execIdleTimeout, remotecommand.DefaultStreamCreationTimeout, remotecommand.SupportedStreamingProtocols)
}

func (e sandboxExecutor) AttachContainer(ctx context.Context, _, _, container string, in io.Reader, out, errOut io.WriteCloser, _ bool, _ <-chan remotecommand.TerminalSize) error {
	run, err := e.m.runningContainer("cannot attach", e.uid, e.pod, container)
	if err != nil {
		return err
	}
	var stdin io.Reader
	var stdout, stderr io.Writer
	if in != nil {
		stdin = in
	}
	if out != nil {
		stdout = out
	}
	if errOut != nil {
		stderr = errOut
	}
	run.Attach(ctx, stdin, stdout, stderr)
	return nil
}

package workloads

// pods/exec into interpreted containers, spoken with kube's own server
// side of the remote command protocols: SPDY (v1-v4.channel.k8s.io) by
// the kubelet's streaming server code, and websockets (v5.channel.k8s.io,
// kubectl's first choice) by the API server's stream translator, which
// relays them to that SPDY server over an in-memory connection, as kube's
// API server relays them to a kubelet.

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apiserver/pkg/util/proxy"
	"k8s.io/cri-streaming/pkg/streaming/remotecommand"
	corev1conversion "k8s.io/kubernetes/pkg/apis/core/v1"
	"k8s.io/streaming/pkg/httpstream/wsstream"
	utilexec "k8s.io/utils/exec"

	"github.com/devplane/devplane/apiserver/workloads/sandbox"
)

// execIdleTimeout ends a session with no traffic, as the kubelet's
// streaming server does (its default: 4 hours).
const execIdleTimeout = 4 * time.Hour

// ServeExec answers pods/exec for pod: the command runs in the chosen
// container's sandbox, its streams relayed to the client.
func (m *Machinery) ServeExec(w http.ResponseWriter, r *http.Request, pod *corev1.Pod) error {
	var opts corev1.PodExecOptions
	query := r.URL.Query()
	if err := corev1conversion.Convert_url_Values_To_v1_PodExecOptions(&query, &opts, nil); err != nil {
		return apierrors.NewBadRequest(err.Error())
	}
	if len(opts.Command) == 0 {
		return apierrors.NewBadRequest("you must specify at least 1 command")
	}
	streams := proxy.Options{Stdin: opts.Stdin, Stdout: opts.Stdout, Stderr: opts.Stderr, Tty: opts.TTY}
	return m.serveSession(w, r, pod, "exec", opts.Container, streams, func(name string) {
		m.serveSPDY(w, r, pod.UID, pod, name, &opts)
	})
}

// serveSession checks an exec or attach session's streams and container,
// then serves it over websockets (through the API server's stream
// translator) or over SPDY (spdy, given the container's name).
func (m *Machinery) serveSession(w http.ResponseWriter, r *http.Request, pod *corev1.Pod, verb, container string,
	streams proxy.Options, spdy func(name string)) error {
	if !streams.Stdin && !streams.Stdout && !streams.Stderr {
		return apierrors.NewBadRequest("you must specify at least 1 of stdin, stdout, stderr")
	}
	name, err := containerName(pod, container)
	if err != nil {
		return err
	}
	if _, err := m.runningContainer("cannot "+verb, pod.UID, pod, name); err != nil {
		return err
	}
	if wsstream.IsWebSocketRequest(r) {
		m.relayWebsocket(w, r, verb, pod.UID, name, streams)
		return nil
	}
	spdy(name)
	return nil
}

// relayWebsocket serves a websocket exec or attach session
// (v5.channel.k8s.io) through the API server's stream translator, which
// speaks SPDY to the in-memory kubelet server at /<verb>/<uid>/<name>.
func (m *Machinery) relayWebsocket(w http.ResponseWriter, r *http.Request, verb string, uid types.UID, name string, opts proxy.Options) {
	location := &url.URL{Scheme: "http", Host: "kubelet", Path: "/" + verb + "/" + string(uid) + "/" + name, RawQuery: r.URL.RawQuery}
	transport := &http.Transport{DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
		return m.execListener().DialContext(ctx)
	}}
	defer transport.CloseIdleConnections()
	proxy.NewStreamTranslatorHandler(location, transport, 0, opts).ServeHTTP(w, r)
}

// runningContainer is the container's current run, while it runs; what
// begins the message for a container the sandbox does not run.
func (m *Machinery) runningContainer(what string, uid types.UID, pod *corev1.Pod, name string) (*sandbox.Container, error) {
	notFound := apierrors.NewBadRequest(fmt.Sprintf("unable to upgrade connection: container not found (%q)", name))
	var p *podRuntime
	if pod != nil {
		p = m.runtimeOf(pod)
	} else if k := m.currentKubelet(); k != nil {
		p = k.runtimes.get(uid)
	}
	if p == nil {
		if pod != nil {
			return nil, notInterpreted(what, name, pod.Name)
		}
		return nil, notFound
	}
	var run *sandbox.Container
	if pod != nil {
		run, _ = p.logs(fieldPathOf(pod, name))
	} else {
		for _, path := range []string{containerPath(name), initPath(name), ephemeralPath(name)} {
			if run, _ = p.logs(path); run != nil {
				break
			}
		}
	}
	if run == nil {
		return nil, notFound
	}
	if _, ended := run.Result(); ended {
		return nil, notFound
	}
	return run, nil
}

func (m *Machinery) currentKubelet() *kubelet {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.kubelet
}

// serveSPDY runs an exec session over SPDY with the kubelet's streaming
// server code.
func (m *Machinery) serveSPDY(w http.ResponseWriter, r *http.Request, uid types.UID, pod *corev1.Pod, name string, opts *corev1.PodExecOptions) {
	streams := &remotecommand.Options{Stdin: opts.Stdin, Stdout: opts.Stdout, Stderr: opts.Stderr && !opts.TTY, TTY: opts.TTY}
	podName := string(uid)
	if pod != nil {
		podName = pod.Name
	}
	remotecommand.ServeExec(w, r, sandboxExecutor{m: m, uid: uid, pod: pod}, podName, string(uid), name, opts.Command, streams,
		execIdleTimeout, remotecommand.DefaultStreamCreationTimeout, remotecommand.SupportedStreamingProtocols)
}

// execStartDelay is how long an exec takes to start.
const execStartDelay = 20 * time.Millisecond

// sandboxExecutor runs exec commands in a container's sandbox, and
// attaches sessions to its containers.
type sandboxExecutor struct {
	m   *Machinery
	uid types.UID
	pod *corev1.Pod
}

func (e sandboxExecutor) ExecInContainer(ctx context.Context, _, _, container string, cmd []string, in io.Reader, out, errOut io.WriteCloser, tty bool, _ <-chan remotecommand.TerminalSize, _ time.Duration) error {
	run, err := e.m.runningContainer("cannot exec", e.uid, e.pod, container)
	if err != nil {
		return err
	}
	// A container runtime takes some tens of milliseconds to start an
	// exec; the sandbox takes microseconds, and kubectl before 1.34 drops
	// websocket output that arrives before it has set up its streams
	// (kubernetes#131189: "Unknown stream id 1, discarding message").
	select {
	case <-time.After(execStartDelay):
	case <-ctx.Done():
		return ctx.Err()
	}
	var stdout, stderr io.Writer
	if out != nil {
		stdout = out
	}
	if errOut != nil {
		stderr = errOut
	}
	var stdin io.Reader
	if in != nil {
		stdin = in
	}
	code, err := run.Exec(ctx, cmd, stdin, stdout, stderr, tty)
	if err != nil {
		return err
	}
	if code != 0 {
		return utilexec.CodeExitError{Err: fmt.Errorf("command terminated with exit code %d", code), Code: code}
	}
	return nil
}

// execListener is the in-memory listener of the SPDY exec and attach
// server the websocket translator relays to, started on first use.
func (m *Machinery) execListener() *pipeListener {
	m.execOnce.Do(func() {
		m.execLis = &pipeListener{conns: make(chan net.Conn), done: make(chan struct{})}
		mux := http.NewServeMux()
		mux.HandleFunc("/exec/{uid}/{container}", func(w http.ResponseWriter, r *http.Request) {
			var opts corev1.PodExecOptions
			query := r.URL.Query()
			if err := corev1conversion.Convert_url_Values_To_v1_PodExecOptions(&query, &opts, nil); err != nil {
				http.Error(w, err.Error(), http.StatusBadRequest)
				return
			}
			m.serveSPDY(w, r, types.UID(r.PathValue("uid")), nil, r.PathValue("container"), &opts)
		})
		mux.HandleFunc("/attach/{uid}/{container}", func(w http.ResponseWriter, r *http.Request) {
			var opts corev1.PodAttachOptions
			query := r.URL.Query()
			if err := corev1conversion.Convert_url_Values_To_v1_PodAttachOptions(&query, &opts, nil); err != nil {
				http.Error(w, err.Error(), http.StatusBadRequest)
				return
			}
			m.serveAttachSPDY(w, r, types.UID(r.PathValue("uid")), nil, r.PathValue("container"), &opts)
		})
		srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
		go func() { _ = srv.Serve(m.execLis) }()
	})
	return m.execLis
}

// execState is what the exec relay keeps: its listener, made once.
type execState struct {
	execOnce sync.Once
	execLis  *pipeListener
}

// pipeListener accepts in-memory connections (net.Pipe) made by
// DialContext: the relay reaches its SPDY server without a socket.
type pipeListener struct {
	conns chan net.Conn
	done  chan struct{}
	once  sync.Once
}

func (l *pipeListener) Accept() (net.Conn, error) {
	select {
	case c := <-l.conns:
		return c, nil
	case <-l.done:
		return nil, net.ErrClosed
	}
}

func (l *pipeListener) Close() error {
	l.once.Do(func() { close(l.done) })
	return nil
}

func (l *pipeListener) Addr() net.Addr { return pipeAddr{} }

// DialContext connects to the listener.
func (l *pipeListener) DialContext(ctx context.Context) (net.Conn, error) {
	server, client := net.Pipe()
	select {
	case l.conns <- server:
		return client, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-l.done:
		return nil, net.ErrClosed
	}
}

type pipeAddr struct{}

func (pipeAddr) Network() string { return "pipe" }
func (pipeAddr) String() string  { return "kubelet" }

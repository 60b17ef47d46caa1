package controlplane_test

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/pprof"
	"strings"
	"testing"
	"time"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/devplane/devplane/apiserver/controlplane"
)

// started is a devplane running in this test process.
type started struct {
	cp     *controlplane.ControlPlane
	cancel context.CancelFunc
	done   chan error
}

// startControlPlane starts devplane on a free 127.0.0.1 port in a temp dir
// and waits until /readyz passes. Cleanup stops it and checks it stopped.
func startControlPlane(t testing.TB, dataDir string) *started {
	t.Helper()
	if dataDir == "" {
		dataDir = t.TempDir()
	}
	_, cidr, _ := net.ParseCIDR("10.0.0.0/24")
	ctx, cancel := context.WithCancel(context.Background())
	cp, err := controlplane.New(ctx, controlplane.Options{
		Name:                  "test",
		DataDir:               dataDir,
		BindAddress:           net.IPv4(127, 0, 0, 1),
		Port:                  0,
		ServiceClusterIPRange: cidr,
		UnsafeNoFsync:         true,
	})
	if err != nil {
		cancel()
		t.Fatalf("starting devplane: %v", err)
	}
	s := &started{cp: cp, cancel: cancel, done: make(chan error, 1)}
	go func() { s.done <- cp.Run(ctx) }()
	t.Cleanup(func() { s.stop(t) })
	deadline := time.Now().Add(20 * time.Second)
	for !cp.Ready() {
		if time.Now().After(deadline) {
			t.Fatalf("devplane not ready after 20s: %+v", cp.Status())
		}
		time.Sleep(5 * time.Millisecond)
	}
	return s
}

func (s *started) stop(t testing.TB) {
	t.Helper()
	if s.cancel == nil {
		return
	}
	s.cancel()
	s.cancel = nil
	select {
	case err := <-s.done:
		if err != nil {
			t.Errorf("devplane stopped with error: %v", err)
		}
	case <-time.After(15 * time.Second):
		var dump strings.Builder
		_ = pprof.Lookup("goroutine").WriteTo(&dump, 1)
		t.Errorf("devplane did not stop within 15s; goroutines:\n%s", dump.String())
	}
}

// client returns an HTTPS client trusting devplane's CA, presenting the
// admin certificate when admin is true.
func (s *started) client(t testing.TB, admin bool) *http.Client {
	t.Helper()
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(s.cp.Certs.CA.CertPEM)
	cfg := &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}
	if admin {
		cert, err := tls.X509KeyPair(s.cp.Certs.Admin.CertPEM, s.cp.Certs.Admin.KeyPEM)
		if err != nil {
			t.Fatal(err)
		}
		cfg.Certificates = []tls.Certificate{cert}
	}
	tr := &http.Transport{TLSClientConfig: cfg, ForceAttemptHTTP2: true}
	t.Cleanup(tr.CloseIdleConnections)
	return &http.Client{Transport: tr, Timeout: 30 * time.Second}
}

// restConfig returns the admin client-go config speaking JSON, or protobuf
// when protobuf is true (kube's content type, JSON still accepted).
func (s *started) restConfig(protobuf bool) *rest.Config {
	cfg := s.cp.RESTConfig()
	// client-go's clientset would otherwise default to protobuf.
	cfg.ContentType = "application/json"
	if protobuf {
		cfg.ContentType = "application/vnd.kubernetes.protobuf"
		cfg.AcceptContentTypes = "application/vnd.kubernetes.protobuf,application/json"
	}
	return cfg
}

// clientset is an admin typed clientset (JSON, or protobuf when asked).
func (s *started) clientset(t testing.TB, protobuf bool) *kubernetes.Clientset {
	t.Helper()
	cs, err := kubernetes.NewForConfig(s.restConfig(protobuf))
	if err != nil {
		t.Fatal(err)
	}
	return cs
}

// kubeconfigFile writes the admin kubeconfig into a temp dir of t and
// returns its path.
func (s *started) kubeconfigFile(t testing.TB) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "kubeconfig")
	if err := clientcmd.WriteToFile(*s.cp.Kubeconfig(), path); err != nil {
		t.Fatal(err)
	}
	return path
}

// kubectlResult is one kubectl run.
type kubectlResult struct {
	Stdout, Stderr string
	Code           int
}

// kubectl runs /usr/bin/kubectl against the control plane (bounded to a
// minute), with extra environment variables env ("K=V").
func (s *started) kubectl(t testing.TB, env []string, stdin string, args ...string) kubectlResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	full := append([]string{"--kubeconfig", s.kubeconfigFile(t)}, args...)
	cmd := exec.CommandContext(ctx, "/usr/bin/kubectl", full...)
	cmd.Env = append(os.Environ(), "HOME="+t.TempDir(), "KUBECTL_INTERACTIVE_DELETE=false")
	cmd.Env = append(cmd.Env, env...)
	if stdin != "" {
		cmd.Stdin = strings.NewReader(stdin)
	}
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	res := kubectlResult{Stdout: out.String(), Stderr: errb.String()}
	var exitErr *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &exitErr):
		res.Code = exitErr.ExitCode()
	default:
		t.Fatalf("kubectl %s: %v", strings.Join(args, " "), err)
	}
	if ctx.Err() != nil {
		t.Fatalf("kubectl %s did not finish within a minute", strings.Join(args, " "))
	}
	return res
}

// mustKubectl runs kubectl and fails the test unless it exits 0.
func (s *started) mustKubectl(t testing.TB, args ...string) string {
	t.Helper()
	r := s.kubectl(t, nil, "", args...)
	if r.Code != 0 {
		t.Fatalf("kubectl %s: exit %d\nstdout:\n%s\nstderr:\n%s", strings.Join(args, " "), r.Code, r.Stdout, r.Stderr)
	}
	return r.Stdout
}

// startControlPlaneAt is startControlPlane on a given port (0: any), so a
// restart on the same data dir can keep the URL clients already use.
func startControlPlaneAt(t testing.TB, dataDir string, port int) *started {
	t.Helper()
	_, cidr, _ := net.ParseCIDR("10.0.0.0/24")
	ctx, cancel := context.WithCancel(context.Background())
	var (
		cp  *controlplane.ControlPlane
		err error
	)
	// The previous instance's listener may take a moment to be released.
	for attempt := 0; attempt < 50; attempt++ {
		cp, err = controlplane.New(ctx, controlplane.Options{
			Name:                  "test",
			DataDir:               dataDir,
			BindAddress:           net.IPv4(127, 0, 0, 1),
			Port:                  port,
			ServiceClusterIPRange: cidr,
			UnsafeNoFsync:         true,
		})
		if err == nil || port == 0 || !strings.Contains(err.Error(), "cannot listen") {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if err != nil {
		cancel()
		t.Fatalf("starting devplane: %v", err)
	}
	s := &started{cp: cp, cancel: cancel, done: make(chan error, 1)}
	go func() { s.done <- cp.Run(ctx) }()
	t.Cleanup(func() { s.stop(t) })
	deadline := time.Now().Add(20 * time.Second)
	for !cp.Ready() {
		if time.Now().After(deadline) {
			t.Fatalf("devplane not ready after 20s: %+v", cp.Status())
		}
		time.Sleep(5 * time.Millisecond)
	}
	return s
}

// eventually polls cond every 20ms until it holds, failing the test with
// cond's last description after timeout.
func eventually(t testing.TB, timeout time.Duration, what string, cond func() (bool, string)) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		ok, detail := cond()
		if ok {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: not true after %s: %s", what, timeout, detail)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

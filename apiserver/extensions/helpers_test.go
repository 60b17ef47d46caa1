package extensions_test

import (
	"bytes"
	"context"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextclient "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/yaml"

	"github.com/devplane/devplane/apiserver/controlplane"
)

type devplane struct {
	cp         *controlplane.ControlPlane
	kubeconfig string
	config     *rest.Config
}

// start runs a devplane for the test and waits until it is ready.
func start(t testing.TB) *devplane {
	t.Helper()
	_, cidr, _ := net.ParseCIDR("10.0.0.0/24")
	ctx, cancel := context.WithCancel(context.Background())
	cp, err := controlplane.New(ctx, controlplane.Options{Name: "t", DataDir: t.TempDir(),
		BindAddress: net.IPv4(127, 0, 0, 1), Port: 0, ServiceClusterIPRange: cidr, UnsafeNoFsync: true})
	if err != nil {
		cancel()
		t.Fatalf("starting devplane: %v", err)
	}
	done := make(chan error, 1)
	go func() { done <- cp.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		select {
		case <-done:
		case <-time.After(30 * time.Second):
			t.Error("devplane did not stop")
		}
	})
	deadline := time.Now().Add(30 * time.Second)
	for !cp.Ready() {
		if time.Now().After(deadline) {
			t.Fatalf("devplane not ready: %+v", cp.Status())
		}
		time.Sleep(20 * time.Millisecond)
	}
	d := &devplane{cp: cp, config: cp.RESTConfig(), kubeconfig: filepath.Join(t.TempDir(), "kubeconfig")}
	if err := clientcmd.WriteToFile(*cp.Kubeconfig(), d.kubeconfig); err != nil {
		t.Fatal(err)
	}
	return d
}

type result struct {
	stdout, stderr string
	err            error
}

func (d *devplane) kubectl(t *testing.T, stdin string, args ...string) result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, "/usr/bin/kubectl", append([]string{"--kubeconfig", d.kubeconfig}, args...)...)
	cmd.Env = append(os.Environ(), "HOME="+t.TempDir(), "KUBECACHEDIR="+t.TempDir())
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if stdin != "" {
		cmd.Stdin = strings.NewReader(stdin)
	}
	err := cmd.Run()
	return result{stdout: out.String(), stderr: errb.String(), err: err}
}

func (d *devplane) mustKubectl(t *testing.T, stdin string, args ...string) string {
	t.Helper()
	r := d.kubectl(t, stdin, args...)
	if r.err != nil {
		t.Fatalf("kubectl %s: %v\nstdout: %s\nstderr: %s", strings.Join(args, " "), r.err, r.stdout, r.stderr)
	}
	return r.stdout
}

func (d *devplane) failKubectl(t *testing.T, stdin string, args ...string) string {
	t.Helper()
	r := d.kubectl(t, stdin, args...)
	if r.err == nil {
		t.Fatalf("kubectl %s succeeded, want an error\nstdout: %s", strings.Join(args, " "), r.stdout)
	}
	return r.stderr
}

func (d *devplane) dynamic(t testing.TB) *dynamic.DynamicClient {
	t.Helper()
	c, err := dynamic.NewForConfig(d.config)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func (d *devplane) apiext(t testing.TB) *apiextclient.Clientset {
	t.Helper()
	c, err := apiextclient.NewForConfig(d.config)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func readCRD(t testing.TB, name string) *apiextensionsv1.CustomResourceDefinition {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	crd := &apiextensionsv1.CustomResourceDefinition{}
	if err := yaml.UnmarshalStrict(data, crd); err != nil {
		t.Fatal(err)
	}
	return crd
}

// eventually polls cond for up to timeout.
func eventually(t testing.TB, timeout time.Duration, what string, cond func() (bool, string)) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	last := ""
	for time.Now().Before(deadline) {
		ok, msg := cond()
		if ok {
			return
		}
		last = msg
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("%s: not within %v (last: %s)", what, timeout, last)
}

func waitEstablished(t testing.TB, c *apiextclient.Clientset, name string) *apiextensionsv1.CustomResourceDefinition {
	t.Helper()
	var crd *apiextensionsv1.CustomResourceDefinition
	eventually(t, 5*time.Second, "CRD "+name+" established", func() (bool, string) {
		got, err := c.ApiextensionsV1().CustomResourceDefinitions().Get(context.Background(), name, metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		crd = got
		for _, cond := range got.Status.Conditions {
			if cond.Type == apiextensionsv1.Established && cond.Status == apiextensionsv1.ConditionTrue {
				return true, ""
			}
		}
		return false, "not established"
	})
	return crd
}

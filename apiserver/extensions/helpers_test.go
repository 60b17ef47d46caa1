package extensions_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextclient "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/yaml"

	"github.com/devplane/devplane/apiserver/controlplane"
	"github.com/devplane/devplane/apiserver/controlplane/controlplanetest"
)

type devplane struct {
	cp         *controlplane.ControlPlane
	kubeconfig string
	config     *rest.Config
}

// start runs a devplane for the test and waits until it is ready.
func start(t testing.TB) *devplane {
	t.Helper()
	cp, _ := controlplanetest.StartDevplane(t, controlplane.Options{Name: "t"})
	return &devplane{cp: cp, config: cp.RESTConfig(), kubeconfig: controlplanetest.WriteKubeconfig(t, cp)}
}

func (d *devplane) kubectl(t *testing.T, stdin string, args ...string) controlplanetest.KubectlResult {
	t.Helper()
	return controlplanetest.KubectlRun{Kubeconfig: d.kubeconfig, Args: args, Stdin: stdin}.Run(t)
}

func (d *devplane) mustKubectl(t *testing.T, stdin string, args ...string) string {
	t.Helper()
	r := d.kubectl(t, stdin, args...)
	if r.Code != 0 {
		t.Fatalf("kubectl %s: exit %d\nstdout: %s\nstderr: %s", strings.Join(args, " "), r.Code, r.Stdout, r.Stderr)
	}
	return r.Stdout
}

func (d *devplane) failKubectl(t *testing.T, stdin string, args ...string) string {
	t.Helper()
	r := d.kubectl(t, stdin, args...)
	if r.Code == 0 {
		t.Fatalf("kubectl %s succeeded, want an error\nstdout: %s", strings.Join(args, " "), r.Stdout)
	}
	return r.Stderr
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

func waitEstablished(t testing.TB, c *apiextclient.Clientset, name string) *apiextensionsv1.CustomResourceDefinition {
	t.Helper()
	var crd *apiextensionsv1.CustomResourceDefinition
	controlplanetest.Eventually(t, 10*time.Second, "CRD "+name+" established", func() (bool, string) {
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

// startWithCronTabs starts devplane with the CronTab CRD established.
func startWithCronTabs(t *testing.T) (*devplane, *apiextclient.Clientset) {
	t.Helper()
	d := start(t)
	ext := d.apiext(t)
	if _, err := ext.ApiextensionsV1().CustomResourceDefinitions().Create(context.Background(), readCRD(t, "crontab-crd.yaml"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitEstablished(t, ext, "crontabs.stable.example.com")
	return d, ext
}

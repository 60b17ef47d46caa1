package cli_test

import (
	"bytes"
	"slices"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/devplane/devplane/apiserver/testenv"
	"github.com/devplane/devplane/cli"
)

// devplaneIn runs the command line in-process and returns what it printed.
func devplaneIn(t *testing.T, args ...string) (string, error) {
	t.Helper()
	app := cli.NewApp()
	var out bytes.Buffer
	app.Writer = &out
	err := app.Run(append([]string{"devplane"}, args...))
	return out.String(), err
}

func TestFaultAddListRm(t *testing.T) {
	env := testenv.StartT(t, testenv.Options{})
	kc := env.KubeconfigPath()
	cfg := env.Config()
	cfg.WarningHandler = rest.NoWarnings{}
	c := kubernetes.NewForConfigOrDie(cfg)
	list := func() error {
		_, err := c.CoreV1().ConfigMaps("default").List(t.Context(), metav1.ListOptions{})
		return err
	}

	out, err := devplaneIn(t, "fault", "add", "--kubeconfig", kc, "--verb", "list", "--resource", "configmaps",
		"--error", "503", "--times", "1", "unavailable-once")
	if err != nil || !strings.Contains(out, "added unavailable-once: error 503") {
		t.Fatalf("add: %v, %q", err, out)
	}
	if err := list(); !apierrors.IsServiceUnavailable(err) {
		t.Fatalf("list under the fault: %v, want 503", err)
	}
	out, err = devplaneIn(t, "fault", "list", "--kubeconfig", kc)
	if err != nil || !strings.Contains(out, "unavailable-once") || !strings.Contains(out, "error 503") {
		t.Fatalf("list: %v, %q", err, out)
	}
	if fields := strings.Fields(strings.Split(out, "\n")[1]); fields[len(fields)-1] != "1" {
		t.Errorf("list shows hits %q, want 1:\n%s", fields[len(fields)-1], out)
	}
	if out, err := devplaneIn(t, "fault", "rm", "--kubeconfig", kc, "unavailable-once"); err != nil || out != "removed unavailable-once\n" {
		t.Fatalf("rm: %v, %q", err, out)
	}
	if env.ControlPlane().Faults().Active() {
		t.Error("a fault is still in force after rm")
	}
	if _, err := devplaneIn(t, "fault", "add", "--kubeconfig", kc, "--error", "418", "teapot"); err == nil {
		t.Error("add accepted error 418")
	}

	// Webhook time-outs reach the server as the rule's webhookTimeout.
	out, err = devplaneIn(t, "fault", "add", "--kubeconfig", kc, "--webhook-timeout", "--webhook", "vwidget.example.com", "slow-hook")
	if err != nil || !strings.Contains(out, "added slow-hook: time out vwidget.example.com") {
		t.Fatalf("add --webhook-timeout: %v, %q", err, out)
	}
	rules := env.ControlPlane().Faults().List()
	if len(rules) != 1 || rules[0].WebhookTimeout == nil || !slices.Equal(rules[0].WebhookTimeout.Webhooks, []string{"vwidget.example.com"}) {
		t.Errorf("rules after add --webhook-timeout: %+v", rules)
	}
	if _, err := devplaneIn(t, "fault", "add", "--kubeconfig", kc, "--webhook", "vwidget.example.com", "no-action"); err == nil {
		t.Error("add accepted --webhook without --webhook-timeout")
	}
}

package controlplane_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/devplane/devplane/apiserver/controlplane/controlplanetest"
)

func TestFlowControlBootstrap(t *testing.T) {
	s := startControlPlane(t, "")
	cs := s.clientset(t, false)
	ctx := context.Background()

	// kube 1.37's bootstrap configuration, by name.
	wantLevels := []string{"catch-all", "exempt", "global-default", "leader-election", "node-high", "system", "workload-high", "workload-low"}
	wantSchemas := []string{"catch-all", "exempt", "global-default", "kube-controller-manager", "kube-scheduler",
		"kube-system-service-accounts", "probes", "service-accounts", "system-leader-election", "system-node-high", "system-nodes"}
	levels, err := cs.FlowcontrolV1().PriorityLevelConfigurations().List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, pl := range levels.Items {
		names = append(names, pl.Name)
		if pl.Annotations["apf.kubernetes.io/autoupdate-spec"] != "true" {
			t.Errorf("%s: autoupdate-spec annotation %q", pl.Name, pl.Annotations["apf.kubernetes.io/autoupdate-spec"])
		}
	}
	if strings.Join(names, ",") != strings.Join(wantLevels, ",") {
		t.Errorf("priority levels %v, want %v", names, wantLevels)
	}
	// Each FlowSchema's Dangling condition says its level exists.
	controlplanetest.Eventually(t, 30*time.Second, "the bootstrap FlowSchemas, none dangling", func() (bool, string) {
		schemas, err := cs.FlowcontrolV1().FlowSchemas().List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, err.Error()
		}
		var names, bad []string
		for _, fs := range schemas.Items {
			names = append(names, fs.Name)
			if c := dangling(&fs); c == nil || c.Status != flowcontrolv1.ConditionFalse || c.Reason != "Found" {
				bad = append(bad, fs.Name)
			}
		}
		return strings.Join(names, ",") == strings.Join(wantSchemas, ",") && len(bad) == 0, fmt.Sprintf("%v; not Found: %v", names, bad)
	})
	out := s.mustKubectl(t, "get", "flowschemas", "system-leader-election")
	if !strings.Contains(out, "leader-election") || !strings.Contains(out, "100") || !strings.Contains(out, "ByUser") || !strings.Contains(out, "False") {
		t.Errorf("kubectl get flowschemas:\n%s", out)
	}
	out = s.mustKubectl(t, "get", "prioritylevelconfigurations", "global-default")
	if !strings.Contains(out, "Limited") || !strings.Contains(out, "128") {
		t.Errorf("kubectl get prioritylevelconfigurations:\n%s", out)
	}

	// A FlowSchema naming a missing level is dangling.
	if _, err := cs.FlowcontrolV1().FlowSchemas().Create(ctx, &flowcontrolv1.FlowSchema{ObjectMeta: metav1.ObjectMeta{Name: "mine"},
		Spec: flowcontrolv1.FlowSchemaSpec{PriorityLevelConfiguration: flowcontrolv1.PriorityLevelConfigurationReference{Name: "nowhere"}}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	controlplanetest.Eventually(t, 30*time.Second, "mine to be Dangling", func() (bool, string) {
		fs, err := cs.FlowcontrolV1().FlowSchemas().Get(ctx, "mine", metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		c := dangling(fs)
		return c != nil && c.Status == flowcontrolv1.ConditionTrue && strings.Contains(c.Message, `named "nowhere" but there is no such object`), fmt.Sprintf("%+v", c)
	})

	// A mandatory level comes back, as it was, when deleted.
	if err := cs.FlowcontrolV1().PriorityLevelConfigurations().Delete(ctx, "catch-all", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	controlplanetest.Eventually(t, 30*time.Second, "catch-all to come back", func() (bool, string) {
		pl, err := cs.FlowcontrolV1().PriorityLevelConfigurations().Get(ctx, "catch-all", metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		return pl.Spec.Limited != nil && *pl.Spec.Limited.NominalConcurrencyShares == 5, fmt.Sprintf("%+v", pl.Spec)
	})
}

func dangling(fs *flowcontrolv1.FlowSchema) *flowcontrolv1.FlowSchemaCondition {
	for i := range fs.Status.Conditions {
		if fs.Status.Conditions[i].Type == flowcontrolv1.FlowSchemaConditionDangling {
			return &fs.Status.Conditions[i]
		}
	}
	return nil
}

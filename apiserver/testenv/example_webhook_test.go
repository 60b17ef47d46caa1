package testenv_test

// Example suite: a validating webhook, served by controller-runtime's
// webhook server inside the test, called by devplane end to end.

import (
	"context"
	"encoding/json"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/webhook"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	"github.com/devplane/devplane/apiserver/testenv"
)

// validateWidget refuses Widgets without a message.
func validateWidget(calls *atomic.Int32) admission.HandlerFunc {
	return func(_ context.Context, req admission.Request) admission.Response {
		calls.Add(1)
		var w unstructured.Unstructured
		if err := json.Unmarshal(req.Object.Raw, &w.Object); err != nil {
			return admission.Errored(400, err)
		}
		if msg, _, _ := unstructured.NestedString(w.Object, "spec", "message"); msg == "" {
			return admission.Denied("spec.message must not be empty")
		}
		return admission.Allowed("")
	}
}

func TestExampleValidatingWebhook(t *testing.T) {
	cfgs, err := readWebhookConfig(t)
	if err != nil {
		t.Fatal(err)
	}
	// Skips, naming the missing capability, while devplane serves no CRDs.
	env := testenv.StartT(t, testenv.Options{
		CRDDirectoryPaths: []string{exampleCRDs},
		Webhooks:          testenv.WebhookOptions{Validating: cfgs},
	})

	host, port := env.WebhookAddr()
	srv := webhook.NewServer(webhook.Options{Host: host, Port: port, CertDir: env.WebhookCertDir()})
	var calls atomic.Int32
	srv.Register("/validate-widget", &webhook.Admission{Handler: validateWidget(&calls)})
	runUntilCleanup(t, "webhook server", srv.Start)
	started := srv.StartedChecker()
	deadline := time.Now().Add(10 * time.Second)
	for started(nil) != nil {
		if time.Now().After(deadline) {
			t.Fatalf("webhook server not serving: %v", started(nil))
		}
		time.Sleep(10 * time.Millisecond)
	}

	widgets := widgetClient(t, env, "default")
	if _, err := widgets.Create(t.Context(), newWidget("good", "hello"), metav1.CreateOptions{}); err != nil {
		t.Fatalf("a valid Widget was refused: %v", err)
	}
	_, err = widgets.Create(t.Context(), newWidget("bad", ""), metav1.CreateOptions{})
	if calls.Load() == 0 {
		t.Fatalf("devplane never called the webhook (admission webhooks not wired yet?); create without a message: %v", err)
	}
	if err == nil || !strings.Contains(err.Error(), "spec.message must not be empty") {
		t.Fatalf("a Widget without a message: %v, want the webhook's denial", err)
	}
}

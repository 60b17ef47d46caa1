package cli

import (
	"strings"
	"testing"
	"time"

	authnv1 "k8s.io/api/authentication/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	auditv1 "k8s.io/apiserver/pkg/apis/audit/v1"

	"github.com/devplane/devplane/apiserver/audit"
)

// event is a recorded request as the ring serves it.
func event(user, agent, verb string, ref *auditv1.ObjectReference, code int32, latency time.Duration, bytes string, more ...string) auditv1.Event {
	ev := auditv1.Event{
		Verb: verb, User: authnv1.UserInfo{Username: user}, UserAgent: agent, ObjectRef: ref,
		RequestURI:     "/healthz?verbose",
		ResponseStatus: &metav1.Status{Code: code},
		StageTimestamp: metav1.NewMicroTime(time.Date(2026, 11, 27, 13, 24, 29, 728e6, time.Local)),
		Annotations:    map[string]string{audit.AnnotationLatency: latency.String(), audit.AnnotationBytes: bytes},
	}
	for i := 0; i+1 < len(more); i += 2 {
		ev.Annotations[more[i]] = more[i+1]
	}
	return ev
}

func TestRequestCellsOnFixedInput(t *testing.T) {
	binding := &auditv1.ObjectReference{Resource: "pods", Subresource: "binding", Namespace: "default", Name: "web-1", APIVersion: "v1"}
	status := &auditv1.ObjectReference{Resource: "deployments", Subresource: "status", APIGroup: "apps", Namespace: "default", Name: "web"}
	for _, tc := range []struct {
		ev   auditv1.Event
		want string
	}{
		{event("devplane-admin", "kube-scheduler/devplane", "create", binding, 201, 3800*time.Microsecond, "80"),
			"13:24:29.728 kube-scheduler create pods/binding default/web-1 201 3.8ms 80B"},
		{event("devplane-admin", "kube-controller-manager/deployment-controller", "update", status, 409, 10*time.Millisecond, "236",
			audit.AnnotationFault, "conflicts"),
			"13:24:29.728 deployment-controller update deployments.apps/status default/web 409 10ms 236B fault conflicts"},
		{event("system:serviceaccount:team:app", "app/v1.2 (linux/amd64)", "list", &auditv1.ObjectReference{Resource: "configmaps", Namespace: "team"}, 403, 364*time.Microsecond, "2048"),
			"13:24:29.728 sa:team/app list configmaps team/ 403 364µs 2.0KiB"},
		{event("devplane-admin", "curl/8.5", "get", nil, 200, 1500*time.Millisecond, "3145728"),
			"13:24:29.728 devplane-admin (curl) get /healthz 200 1.5s 3.0MiB"},
	} {
		if got := strings.Join(strings.Fields(strings.Join(requestCells(&tc.ev), " ")), " "); got != tc.want {
			t.Errorf("row %q, want %q", got, tc.want)
		}
	}
}

func TestRankCallersOnFixedInput(t *testing.T) {
	pods := &auditv1.ObjectReference{Resource: "pods", Namespace: "default"}
	var evs []auditv1.Event
	for i := range 6 { // an informer re-listing pods
		evs = append(evs, event("devplane-admin", "poller/1.0", "list", pods, 200, time.Duration(i+1)*time.Millisecond, "1000"))
	}
	evs = append(evs,
		event("system:serviceaccount:team:app", "app/1", "get", pods, 404, 50*time.Millisecond, "100"),
		event("system:serviceaccount:team:app", "app/1", "watch", pods, 200, time.Minute, "5000"))
	got := topTable(rankCallers(evs, "requests"))
	want := "WHO                      REQUESTS  ERRORS       P99      MEAN      BYTES  REPEATED LISTS\n" +
		"devplane-admin (poller)         6       0     6.0ms     3.5ms     5.9KiB  pods in default: 6 lists\n" +
		"sa:team/app                     2       1      50ms      50ms     5.0KiB\n"
	if got != want {
		t.Errorf("--top:\n%s\nwant:\n%s", got, want)
	}
	if byErrors := rankCallers(evs, "errors"); byErrors[0].Who != "sa:team/app" {
		t.Errorf("--sort errors puts %s first", byErrors[0].Who)
	}
}

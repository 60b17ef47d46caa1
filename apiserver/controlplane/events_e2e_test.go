package controlplane_test

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
)

// events.k8s.io/v1 and core/v1 Events are the same objects, as in kube: an
// event recorded through the new API is what `kubectl get events` lists.
func TestEventsAPIsShareObjects(t *testing.T) {
	s := startControlPlane(t, "")
	cs := s.clientset(t, true)
	ctx := context.Background()
	now := metav1.NowMicro()
	created, err := cs.EventsV1().Events("default").Create(ctx, &eventsv1.Event{
		ObjectMeta: metav1.ObjectMeta{Name: "web.1"},
		EventTime:  now, ReportingController: "example.com/widget-controller", ReportingInstance: "widget-controller-1",
		Action: "Scaling", Reason: "Scaled", Note: "scaled to 3", Type: corev1.EventTypeNormal,
		Regarding: corev1.ObjectReference{Kind: "Deployment", Namespace: "default", Name: "web", APIVersion: "apps/v1"},
		Series:    &eventsv1.EventSeries{Count: 2, LastObservedTime: now},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	core, err := cs.CoreV1().Events("default").Get(ctx, "web.1", metav1.GetOptions{})
	if err != nil {
		t.Fatalf("core/v1 view: %v", err)
	}
	if core.UID != created.UID || core.Message != "scaled to 3" || core.InvolvedObject.Name != "web" ||
		core.ReportingController != "example.com/widget-controller" || core.Series == nil || core.Series.Count != 2 {
		t.Errorf("core/v1 view: %+v", core)
	}
	// Events keep no generation.
	if created.Generation != 0 || core.Generation != 0 {
		t.Errorf("generation: %d, %d, want 0", created.Generation, core.Generation)
	}
	checkListItemsWithoutKind(t, s, "/apis/events.k8s.io/v1/namespaces/default/events", 1)
	checkListItemsWithoutKind(t, s, "/api/v1/namespaces/default/events", 1)
	// Field selectors in each API's own words.
	list, err := cs.CoreV1().Events("default").List(ctx, metav1.ListOptions{
		FieldSelector: fields.OneTermEqualSelector("involvedObject.name", "web").String()})
	if err != nil || len(list.Items) != 1 {
		t.Errorf("core list by involvedObject.name: %v %v", err, list)
	}
	newList, err := cs.EventsV1().Events("default").List(ctx, metav1.ListOptions{
		FieldSelector: fields.OneTermEqualSelector("regarding.name", "web").String()})
	if err != nil || len(newList.Items) != 1 || newList.Items[0].Note != "scaled to 3" {
		t.Errorf("events.k8s.io list by regarding.name: %v %v", err, newList)
	}
	if _, err := cs.CoreV1().Events("default").List(ctx, metav1.ListOptions{
		FieldSelector: fields.OneTermEqualSelector("regarding.name", "web").String()}); err == nil {
		t.Error("core/v1 accepted events.k8s.io's field name")
	}
	// A core update shows through the new API, and a delete through both.
	core.Message = "scaled to 4"
	if _, err := cs.CoreV1().Events("default").Update(ctx, core, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	got, err := cs.EventsV1().Events("default").Get(ctx, "web.1", metav1.GetOptions{})
	if err != nil || got.Note != "scaled to 4" {
		t.Errorf("events.k8s.io after a core update: %v %+v", err, got)
	}
	if err := cs.EventsV1().Events("default").Delete(ctx, "web.1", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		l, err := cs.CoreV1().Events("default").List(ctx, metav1.ListOptions{FieldSelector: "metadata.name=web.1"})
		if err == nil && len(l.Items) == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("core/v1 still lists the deleted event: %v %v", err, l)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

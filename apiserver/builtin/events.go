package builtin

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// events.k8s.io/v1 Events are views of the stored core/v1 ones, as in kube:
// an event a controller records through either API is listed by both
// (kubectl get events reads core/v1). The two say the same things under
// other names, so the conversion loses nothing.

func eventFromCore(stored runtime.Object) (runtime.Object, error) {
	in, ok := stored.(*corev1.Event)
	if !ok {
		return nil, fmt.Errorf("expected a core/v1 Event, got %T", stored)
	}
	in = in.DeepCopy()
	out := &eventsv1.Event{
		ObjectMeta:               in.ObjectMeta,
		EventTime:                in.EventTime,
		ReportingController:      in.ReportingController,
		ReportingInstance:        in.ReportingInstance,
		Action:                   in.Action,
		Reason:                   in.Reason,
		Regarding:                in.InvolvedObject,
		Related:                  in.Related,
		Note:                     in.Message,
		Type:                     in.Type,
		DeprecatedSource:         in.Source,
		DeprecatedFirstTimestamp: in.FirstTimestamp,
		DeprecatedLastTimestamp:  in.LastTimestamp,
		DeprecatedCount:          in.Count,
	}
	if in.Kind != "" {
		out.APIVersion, out.Kind = eventsV1.String(), "Event"
	}
	if in.Series != nil {
		out.Series = &eventsv1.EventSeries{Count: in.Series.Count, LastObservedTime: in.Series.LastObservedTime}
	}
	return out, nil
}

func eventToCore(served, _ runtime.Object) (runtime.Object, error) {
	in, ok := served.(*eventsv1.Event)
	if !ok {
		return nil, fmt.Errorf("expected an events.k8s.io/v1 Event, got %T", served)
	}
	in = in.DeepCopy()
	out := &corev1.Event{
		ObjectMeta:          in.ObjectMeta,
		InvolvedObject:      in.Regarding,
		Reason:              in.Reason,
		Message:             in.Note,
		Source:              in.DeprecatedSource,
		FirstTimestamp:      in.DeprecatedFirstTimestamp,
		LastTimestamp:       in.DeprecatedLastTimestamp,
		Count:               in.DeprecatedCount,
		Type:                in.Type,
		EventTime:           in.EventTime,
		Action:              in.Action,
		Related:             in.Related,
		ReportingController: in.ReportingController,
		ReportingInstance:   in.ReportingInstance,
	}
	out.APIVersion, out.Kind = "v1", "Event"
	if in.Series != nil {
		out.Series = &corev1.EventSeries{Count: in.Series.Count, LastObservedTime: in.Series.LastObservedTime}
	}
	return out, nil
}

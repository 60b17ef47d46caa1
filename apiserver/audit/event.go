package audit

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"
	"time"

	authnv1 "k8s.io/api/authentication/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	auditinternal "k8s.io/apiserver/pkg/apis/audit"

	"github.com/devplane/devplane/apiserver/request"
)

// event is rec as an audit Event of stage at level (the caller holds
// rec.mu). Request and response objects are included as level allows.
func (rec *Record) event(stage auditinternal.Stage, level auditinternal.Level, now time.Time) *auditinternal.Event {
	ev := &auditinternal.Event{
		Level:                    level,
		AuditID:                  types.UID(rec.ID),
		Stage:                    stage,
		RequestURI:               rec.URI,
		Verb:                     rec.verb(),
		User:                     userInfo(rec.User),
		SourceIPs:                rec.SourceIPs,
		UserAgent:                rec.UserAgent,
		RequestReceivedTimestamp: metav1.NewMicroTime(rec.Received),
		StageTimestamp:           metav1.NewMicroTime(now),
	}
	if stage == auditinternal.StageRequestReceived {
		ev.StageTimestamp = ev.RequestReceivedTimestamp
	}
	if ev.SourceIPs == nil {
		ev.SourceIPs = []string{rec.peer}
	}
	if rec.Impersonated != nil {
		u := userInfo(rec.Impersonated)
		ev.ImpersonatedUser = &u
	}
	if info := rec.Info; info != nil && info.IsResourceRequest {
		ev.ObjectRef = &auditinternal.ObjectReference{
			Resource: info.Resource, Namespace: info.Namespace, Name: info.Name,
			APIGroup: info.APIGroup, APIVersion: info.APIVersion, Subresource: info.Subresource,
			UID: types.UID(rec.UID), ResourceVersion: rec.ResourceVersion,
		}
		if ev.ObjectRef.Namespace == "" {
			ev.ObjectRef.Namespace = rec.Namespace
		}
		if ev.ObjectRef.Name == "" {
			ev.ObjectRef.Name = rec.Name
		}
	}
	if stage != auditinternal.StageRequestReceived {
		ev.ResponseStatus = rec.responseStatus()
	}
	if len(rec.Annotations) > 0 {
		ev.Annotations = make(map[string]string, len(rec.Annotations))
		for _, a := range rec.Annotations {
			ev.Annotations[a.Key] = a.Value
		}
	}
	if !level.Less(auditinternal.LevelRequest) && rec.requestObject != nil {
		ev.RequestObject = &runtime.Unknown{Raw: rec.requestObject, ContentType: runtime.ContentTypeJSON}
	}
	if !level.Less(auditinternal.LevelRequestResponse) && rec.responseObject != nil && stage != auditinternal.StageResponseStarted {
		ev.ResponseObject = &runtime.Unknown{Raw: rec.responseObject, ContentType: runtime.ContentTypeJSON}
	}
	return ev
}

// verb is kube's audit verb: the resource verb, else the lower-case
// HTTP method.
func (rec *Record) verb() string {
	if rec.Info != nil && rec.Info.Verb != "" {
		return rec.Info.Verb
	}
	return strings.ToLower(rec.Method)
}

// responseStatus is what kube reports: an error response's Status, else
// the code alone.
func (rec *Record) responseStatus() *metav1.Status {
	if rec.Status != nil {
		st := *rec.Status
		if rec.Code != 0 {
			st.Code = int32(rec.Code)
		}
		return &st
	}
	if rec.Code == 0 {
		return nil
	}
	return &metav1.Status{Code: int32(rec.Code)}
}

func userInfo(u *request.User) authnv1.UserInfo {
	if u == nil {
		return authnv1.UserInfo{}
	}
	info := authnv1.UserInfo{Username: u.Name, UID: u.UID, Groups: u.Groups}
	if len(u.Extra) > 0 {
		info.Extra = make(map[string]authnv1.ExtraValue, len(u.Extra))
		for k, v := range u.Extra {
			info.Extra[k] = v
		}
	}
	return info
}

// Event is rec at Metadata level, as the ring serves it: its final
// stage, with the latency and response size as annotations.
func (rec *Record) Event() *auditinternal.Event {
	rec.mu.Lock()
	defer rec.mu.Unlock()
	ev := rec.event(auditinternal.StageResponseComplete, auditinternal.LevelMetadata, rec.Received.Add(rec.Latency))
	if ev.Annotations == nil {
		ev.Annotations = make(map[string]string, 2)
	}
	if ev.ObjectRef != nil && ev.ObjectRef.Name == "" {
		ev.ObjectRef.Name = rec.CreatedName
	}
	ev.Annotations[AnnotationLatency] = rec.Latency.String()
	ev.Annotations[AnnotationBytes] = strconv.FormatInt(rec.Bytes, 10)
	return ev
}

// withoutManagedFields drops metadata.managedFields from a JSON object,
// and from each of a list's items (kube's omitManagedFields).
func withoutManagedFields(body []byte) []byte {
	if !bytes.Contains(body, []byte(`"managedFields"`)) {
		return body
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	var obj map[string]any
	if err := dec.Decode(&obj); err != nil {
		return body
	}
	drop := func(o map[string]any) {
		if m, ok := o["metadata"].(map[string]any); ok {
			delete(m, "managedFields")
		}
	}
	drop(obj)
	if items, ok := obj["items"].([]any); ok {
		for _, it := range items {
			if o, ok := it.(map[string]any); ok {
				drop(o)
			}
		}
	}
	out, err := json.Marshal(obj)
	if err != nil {
		return body
	}
	return out
}

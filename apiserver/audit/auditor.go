package audit

import (
	"context"
	"encoding/binary"
	"math/rand/v2"
	"net/http"
	"sync/atomic"
	"time"

	"github.com/google/uuid"
	auditinternal "k8s.io/apiserver/pkg/apis/audit"
	kaudit "k8s.io/apiserver/pkg/audit"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/authorization/authorizer"

	"github.com/devplane/devplane/apiserver/request"
)

// Auditor opens, evaluates and closes the records of one server's
// requests: every finished record goes to the ring; with a policy, records
// are also written as audit Events to the backend.
type Auditor struct {
	ring    *Ring
	policy  kaudit.PolicyRuleEvaluator // nil: no audit log
	backend kaudit.Backend

	openWatches atomic.Int64 // long-running requests being served
}

// NewAuditor keeps the last ringSize requests and, with a policy,
// writes audit Events to backend (Run and Shutdown are the caller's).
func NewAuditor(ringSize int, policy kaudit.PolicyRuleEvaluator, backend kaudit.Backend) *Auditor {
	a := &Auditor{ring: NewRing(ringSize)}
	if policy != nil && backend != nil {
		a.policy, a.backend = policy, backend
	}
	return a
}

// Ring is the recent requests.
func (a *Auditor) Ring() *Ring { return a.ring }

// OpenWatches is how many long-running requests (watches, streams,
// exec sessions) are being served.
func (a *Auditor) OpenWatches() int64 { return a.openWatches.Load() }

// Begin opens r's record: its audit ID (the client's Audit-Id if it sent
// one, as kube) is set on the response, which is to be written through
// the writer returned.
func (a *Auditor) Begin(w http.ResponseWriter, r *http.Request) (*Record, http.ResponseWriter) {
	id := r.Header.Get(HeaderAuditID)
	if id == "" {
		id = newAuditID()
	}
	if w.Header().Get(HeaderAuditID) == "" {
		w.Header()[HeaderAuditID] = []string{id}
	}
	rec := newRecord(r, id, time.Now())
	rec.auditor = a
	rec.writer = responseWriter{ResponseWriter: w, rec: rec}
	if request.IsLongRunning(rec.Info) {
		rec.longRunning, rec.watch = true, true
		a.openWatches.Add(1)
	}
	return rec, &rec.writer
}

// newAuditID is a random (version 4) UUID, from the runtime's per-thread
// generator rather than a system call per request.
func newAuditID() string {
	var u uuid.UUID
	binary.LittleEndian.PutUint64(u[:8], rand.Uint64())
	binary.LittleEndian.PutUint64(u[8:], rand.Uint64())
	u[6] = u[6]&0x0f | 0x40 // version 4
	u[8] = u[8]&0x3f | 0x80 // RFC 4122 variant
	return u.String()
}

// Evaluate records rec's authenticated user, applies the policy to rec
// and writes its RequestReceived stage (once; without a policy, only the
// user is recorded).
func (a *Auditor) Evaluate(rec *Record, u *request.User) {
	rec.mu.Lock()
	rec.User = u
	rec.mu.Unlock()
	a.evaluate(rec, true)
}

func (a *Auditor) evaluate(rec *Record, received bool) {
	if a.policy == nil {
		return
	}
	rec.mu.Lock()
	if rec.evaluated {
		rec.mu.Unlock()
		return
	}
	rc := a.policy.EvaluatePolicyRule(attributes(rec))
	rec.evaluated = true
	rec.level, rec.omitStages, rec.omitManagedFields = rc.Level, rc.OmitStages, rc.OmitManagedFields
	rec.mu.Unlock()
	if received {
		a.emit(rec, auditinternal.StageRequestReceived)
	}
}

// responseStarted records the response's code and, for long-running
// requests, writes the ResponseStarted stage.
func (a *Auditor) responseStarted(rec *Record, code int) {
	rec.mu.Lock()
	if rec.Code != 0 {
		rec.mu.Unlock()
		return
	}
	rec.Code = code
	started := rec.longRunning && !rec.responseStarted
	rec.responseStarted = rec.responseStarted || started
	rec.mu.Unlock()
	if started {
		a.emit(rec, auditinternal.StageResponseStarted)
	}
}

// FailedAuthentication records that ctx's request was refused its
// credentials. kube writes only one event for it: ResponseStarted, with
// the policy evaluated for no user.
func FailedAuthentication(ctx context.Context) {
	rec := RecordFrom(ctx)
	if rec == nil || rec.auditor == nil {
		return
	}
	rec.mu.Lock()
	rec.longRunning, rec.authFailed = true, true
	rec.mu.Unlock()
	rec.auditor.evaluate(rec, false)
}

// End closes rec: its latency and bytes, its final stage (Panic when the
// handler panicked), then into the ring.
func (a *Auditor) End(rec *Record, panicked bool) {
	now := time.Now()
	rec.mu.Lock()
	rec.Latency = now.Sub(rec.Received)
	rec.Bytes = rec.writer.bytes
	if rec.Code == 0 {
		if panicked {
			rec.Code = http.StatusInternalServerError
		} else {
			rec.Code = http.StatusOK // kube: "Connection closed early"
		}
	}
	needStarted := rec.longRunning && !rec.responseStarted
	rec.responseStarted = true
	rec.mu.Unlock()
	if rec.watch {
		a.openWatches.Add(-1)
	}
	if needStarted {
		a.emit(rec, auditinternal.StageResponseStarted)
	}
	switch {
	case panicked:
		a.emit(rec, auditinternal.StagePanic)
	case !rec.authFailed:
		a.emit(rec, auditinternal.StageResponseComplete)
	}
	// The ring keeps Metadata (no bodies) and nothing of the connection.
	rec.mu.Lock()
	rec.requestObject, rec.responseObject = nil, nil
	rec.writer.ResponseWriter = nil
	rec.mu.Unlock()
	a.ring.add(rec)
}

// emit writes rec's stage to the backend, if the policy audits rec and
// does not omit the stage.
func (a *Auditor) emit(rec *Record, stage auditinternal.Stage) {
	if a.backend == nil {
		return
	}
	rec.mu.Lock()
	if !rec.evaluated || rec.level == auditinternal.LevelNone {
		rec.mu.Unlock()
		return
	}
	for _, s := range rec.omitStages {
		if s == stage {
			rec.mu.Unlock()
			return
		}
	}
	ev := rec.event(stage, rec.level, time.Now())
	rec.mu.Unlock()
	a.backend.ProcessEvents(ev)
}

// attributes are rec's as kube's policy reads them: the authenticated
// user (impersonation comes later) and the request info.
func attributes(rec *Record) authorizer.Attributes {
	attrs := authorizer.AttributesRecord{Verb: rec.verb()}
	if u := rec.User; u != nil {
		attrs.User = &user.DefaultInfo{Name: u.Name, UID: u.UID, Groups: u.Groups, Extra: u.Extra}
	}
	if info := rec.Info; info != nil {
		attrs.Path = info.Path
		attrs.ResourceRequest = info.IsResourceRequest
		attrs.APIGroup, attrs.APIVersion = info.APIGroup, info.APIVersion
		attrs.Namespace, attrs.Resource, attrs.Subresource, attrs.Name = info.Namespace, info.Resource, info.Subresource, info.Name
	} else {
		attrs.Path = rec.URI
	}
	return attrs
}

// Package audit records what the API server is asked and what it answers.
// Every request gets a Record (its audit ID echoed in the Audit-Id
// header); finished records go to a bounded ring of recent requests that is
// always on (Metadata level, with latency and response size), served to
// cluster admins at RecentPath. With a kube audit policy (audit.k8s.io/v1
// Policy), records are also written as kube-apiserver writes them: audit
// Events at their stages, to a log file and/or a webhook, through kube's
// own policy evaluation and backends.
//
// The filters (apiserver/filters) open and close records; the handlers
// add to them through the request's context: authorization's decision,
// impersonation, the request and response objects, admission annotations,
// injected faults.
package audit

import (
	"context"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	auditinternal "k8s.io/apiserver/pkg/apis/audit"

	"github.com/devplane/devplane/apiserver/request"
)

// HeaderAuditID is the header that carries a request's audit ID, in the
// response always, in the request when the client chose it.
const HeaderAuditID = "Audit-Id"

// Annotation keys as kube-apiserver sets them.
const (
	AnnotationDecision = "authorization.k8s.io/decision"
	AnnotationReason   = "authorization.k8s.io/reason"
	// AnnotationFault names the fault apiserver/faults injected.
	AnnotationFault = "devplane.dev/fault"
	// AnnotationLatency and AnnotationBytes carry what the ring adds to
	// an Event when it serves one: how long the request took and how many
	// response bytes were written.
	AnnotationLatency = "devplane.dev/latency"
	AnnotationBytes   = "devplane.dev/response-bytes"
)

const maxUserAgentLength = 1024 // as kube, which truncates longer ones

// Record is one request as audit sees it. The filters own it; handlers
// add to it through the functions of this package, which lock it.
type Record struct {
	mu sync.Mutex

	ID        string
	Received  time.Time
	Latency   time.Duration // set when the request ends
	Method    string
	URI       string
	UserAgent string
	SourceIPs []string // behind proxies (X-Forwarded-For, X-Real-Ip); else peer
	peer      string
	Info      *request.RequestInfo // nil when the path could not be parsed

	User         *request.User // the authenticated user (nil before, or when it failed)
	Impersonated *request.User

	// What the request object adds to the objectRef (kube completes it
	// from the object a create or update sends).
	Name, Namespace, UID, ResourceVersion string
	// CreatedName is the name a create gave its object (generateName):
	// the ring shows it, the audit log does not (kube's does not know it).
	CreatedName string

	Code   int            // the response's HTTP status
	Status *metav1.Status // the Status an error response carried
	Bytes  int64          // response bytes written

	Annotations []Annotation

	// Set by the policy: the level this request is written at to the
	// backends (LevelNone: not written; the ring keeps Metadata).
	level             auditinternal.Level
	omitStages        []auditinternal.Stage
	omitManagedFields bool
	evaluated         bool
	longRunning       bool // writes a ResponseStarted stage
	watch             bool // counted in OpenWatches
	authFailed        bool
	auditor           *Auditor
	writer            responseWriter
	annotations       [3]Annotation // Annotations' first backing array
	responseStarted   bool

	requestObject  []byte // JSON, at Request level and above
	responseObject []byte // JSON, at RequestResponse level
}

// Annotation is one of a record's annotations, kept in order of addition.
type Annotation struct{ Key, Value string }

type contextKey struct{}

// WithRecord returns ctx carrying rec.
func WithRecord(ctx context.Context, rec *Record) context.Context {
	return context.WithValue(ctx, contextKey{}, rec)
}

// RecordFrom returns the record of ctx's request (nil outside a request).
func RecordFrom(ctx context.Context) *Record {
	rec, _ := ctx.Value(contextKey{}).(*Record)
	return rec
}

// newRecord opens the record of r.
func newRecord(r *http.Request, id string, now time.Time) *Record {
	rec := &Record{ID: id, Received: now, Method: r.Method, URI: r.RequestURI, UserAgent: r.UserAgent()}
	rec.Annotations = rec.annotations[:0]
	if rec.URI == "" {
		rec.URI = r.URL.RequestURI()
	}
	if len(rec.UserAgent) > maxUserAgentLength {
		rec.UserAgent = rec.UserAgent[:maxUserAgentLength] + "...TRUNCATED"
	}
	rec.SourceIPs, rec.peer = sourceIPs(r)
	rec.Info, _ = request.RequestInfoFrom(r.Context())
	return rec
}

// sourceIPs are kube's: X-Forwarded-For's addresses, X-Real-Ip, then the
// peer's address (each once); without the headers, only the peer.
func sourceIPs(r *http.Request) (forwarded []string, peer string) {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		host = r.RemoteAddr
	}
	fwd, real := r.Header.Get("X-Forwarded-For"), r.Header.Get("X-Real-Ip")
	if fwd == "" && real == "" {
		return nil, host
	}
	var ips []string
	add := func(s string) {
		s = strings.TrimSpace(s)
		if ip := net.ParseIP(s); ip != nil {
			for _, seen := range ips {
				if seen == ip.String() {
					return
				}
			}
			ips = append(ips, ip.String())
		}
	}
	for _, p := range strings.Split(fwd, ",") {
		add(p)
	}
	add(real)
	add(host)
	return ips, host
}

// AddAnnotation annotates ctx's request (a later value for a key
// replaces the earlier one).
func AddAnnotation(ctx context.Context, key, value string) {
	rec := RecordFrom(ctx)
	if rec == nil {
		return
	}
	rec.mu.Lock()
	defer rec.mu.Unlock()
	rec.annotate(key, value)
}

func (rec *Record) annotate(key, value string) {
	for i := range rec.Annotations {
		if rec.Annotations[i].Key == key {
			rec.Annotations[i].Value = value
			return
		}
	}
	rec.Annotations = append(rec.Annotations, Annotation{key, value})
}

// Annotation returns the value of key on rec.
func (rec *Record) Annotation(key string) (string, bool) {
	rec.mu.Lock()
	defer rec.mu.Unlock()
	for _, a := range rec.Annotations {
		if a.Key == key {
			return a.Value, true
		}
	}
	return "", false
}

// LogImpersonatedUser records who ctx's request acts as.
func LogImpersonatedUser(ctx context.Context, u *request.User) {
	if rec := RecordFrom(ctx); rec != nil {
		rec.mu.Lock()
		rec.Impersonated = u
		rec.mu.Unlock()
	}
}

// LogRequestObject completes the objectRef from the object a create or
// update sends: its namespace, name, uid and resourceVersion where the
// path did not say them (meta may be nil).
func LogRequestObject(ctx context.Context, meta metav1.Object) {
	rec := RecordFrom(ctx)
	if rec == nil || meta == nil {
		return
	}
	rec.mu.Lock()
	defer rec.mu.Unlock()
	if rec.Namespace == "" {
		rec.Namespace = meta.GetNamespace()
	}
	if rec.Name == "" {
		rec.Name = meta.GetName()
	}
	if rec.UID == "" {
		rec.UID = string(meta.GetUID())
	}
	if rec.ResourceVersion == "" {
		rec.ResourceVersion = meta.GetResourceVersion()
	}
}

// LogRequestBody keeps the request's body (JSON) as its request object,
// for a request audited at Request level or above (see KeepsBodies).
func LogRequestBody(ctx context.Context, body []byte) { keepBody(ctx, body, false) }

// LogResponseObject keeps the response body (JSON) of a request audited at
// RequestResponse level (see WantsResponseObject); the caller does not
// retain body.
func LogResponseObject(ctx context.Context, body []byte) { keepBody(ctx, body, true) }

func keepBody(ctx context.Context, body []byte, response bool) {
	rec := RecordFrom(ctx)
	if rec == nil {
		return
	}
	rec.mu.Lock()
	omit := rec.omitManagedFields
	rec.mu.Unlock()
	if omit {
		body = withoutManagedFields(body)
	}
	rec.mu.Lock()
	defer rec.mu.Unlock()
	if response {
		rec.responseObject = body
	} else {
		rec.requestObject = body
	}
}

// LogCreatedName records the name a create gave its object.
func LogCreatedName(ctx context.Context, name string) {
	if rec := RecordFrom(ctx); rec != nil {
		rec.mu.Lock()
		rec.CreatedName = name
		rec.mu.Unlock()
	}
}

// LogResponseStatus records the Status an error response carries.
func LogResponseStatus(ctx context.Context, st *metav1.Status) {
	rec := RecordFrom(ctx)
	if rec == nil || st == nil {
		return
	}
	rec.LogResponseStatus(st, nil)
}

// KeepsBodies reports whether ctx's request is audited at Request level
// or above (what kube keeps of it then: bodies, webhook patches).
func KeepsBodies(ctx context.Context) bool { return auditedAt(ctx, auditinternal.LevelRequest) }

// WantsResponseObject reports whether ctx's request is audited at
// RequestResponse level, so its handler should hand over the response
// body (LogResponseObject).
func WantsResponseObject(ctx context.Context) bool {
	return auditedAt(ctx, auditinternal.LevelRequestResponse)
}

func auditedAt(ctx context.Context, level auditinternal.Level) bool {
	rec := RecordFrom(ctx)
	if rec == nil {
		return false
	}
	rec.mu.Lock()
	defer rec.mu.Unlock()
	return rec.evaluated && !rec.level.Less(level)
}

// statusLogger is the response writer of an audited request: filters
// that answer with a Status (without the request at hand) tell it there.
type statusLogger interface {
	LogResponseStatus(st *metav1.Status, body []byte)
}

// LogStatusTo records st (body is its JSON) as the Status of the request w
// answers, if an audit filter wraps w (however deep).
func LogStatusTo(w http.ResponseWriter, st *metav1.Status, body []byte) {
	for w != nil {
		if l, ok := w.(statusLogger); ok {
			l.LogResponseStatus(st, body)
			return
		}
		u, ok := w.(interface{ Unwrap() http.ResponseWriter })
		if !ok {
			return
		}
		w = u.Unwrap()
	}
}

// LogResponseStatus records st as rec's response Status, and its JSON
// body as the response object at RequestResponse level (nil: none).
func (rec *Record) LogResponseStatus(st *metav1.Status, body []byte) {
	rec.mu.Lock()
	defer rec.mu.Unlock()
	// The bounded fields, as kube copies them.
	rec.Status = &metav1.Status{Status: st.Status, Message: st.Message, Reason: st.Reason, Details: st.Details, Code: st.Code}
	if body != nil && rec.evaluated && !rec.level.Less(auditinternal.LevelRequestResponse) {
		rec.responseObject = body
	}
}

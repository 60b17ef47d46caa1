package admission

import (
	"bytes"
	"context"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	jsonpatch "github.com/evanphx/json-patch/v5"
	"github.com/google/uuid"
	admissionv1 "k8s.io/api/admission/v1"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	authenticationv1 "k8s.io/api/authentication/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	"github.com/devplane/devplane/apiserver/audit"
	"github.com/devplane/devplane/apiserver/authz"
	"github.com/devplane/devplane/apiserver/faults"
	"github.com/devplane/devplane/apiserver/internal/serviceaddr"
)

var (
	mutatingConfigsGVR   = admissionregistrationv1.SchemeGroupVersion.WithResource("mutatingwebhookconfigurations")
	validatingConfigsGVR = admissionregistrationv1.SchemeGroupVersion.WithResource("validatingwebhookconfigurations")
)

// hook is one webhook of either kind, flattened.
type hook struct {
	name              string
	clientConfig      admissionregistrationv1.WebhookClientConfig
	rules             []admissionregistrationv1.RuleWithOperations
	failurePolicy     admissionregistrationv1.FailurePolicyType
	namespaceSelector *metav1.LabelSelector
	objectSelector    *metav1.LabelSelector
	sideEffects       admissionregistrationv1.SideEffectClass
	timeout           time.Duration
	matchConditions   []admissionregistrationv1.MatchCondition
	reinvokeIfNeeded  bool
	// configuration names its configuration and index its place in the
	// order webhooks are called, for the audit annotations kube writes.
	configuration string
	index         int
}

func ptrOr[T any](p *T, def T) T {
	if p == nil {
		return def
	}
	return *p
}

func newHook(name string, cc admissionregistrationv1.WebhookClientConfig, rules []admissionregistrationv1.RuleWithOperations,
	fp *admissionregistrationv1.FailurePolicyType, nsSel, objSel *metav1.LabelSelector, se *admissionregistrationv1.SideEffectClass,
	timeout *int32, mc []admissionregistrationv1.MatchCondition) hook {
	return hook{
		name: name, clientConfig: cc, rules: rules,
		failurePolicy:     ptrOr(fp, admissionregistrationv1.Fail),
		namespaceSelector: nsSel, objectSelector: objSel,
		sideEffects:     ptrOr(se, admissionregistrationv1.SideEffectClassUnknown),
		timeout:         time.Duration(ptrOr(timeout, 10)) * time.Second,
		matchConditions: mc,
	}
}

// Webhooks calls the dynamic admission webhooks of one kind (mutating or
// validating) registered in admissionregistration.k8s.io/v1.
type Webhooks struct {
	src        Source
	authorizer authz.Authorizer // for match conditions' authorizer
	mutating   bool
	clients    sync.Map // tls identity → *http.Client
}

// NewMutatingWebhooks calls MutatingWebhookConfigurations in Mutate.
func NewMutatingWebhooks(src Source, authorizer authz.Authorizer) *Webhooks {
	return &Webhooks{src: src, authorizer: authorizer, mutating: true}
}

// NewValidatingWebhooks calls ValidatingWebhookConfigurations in Validate.
func NewValidatingWebhooks(src Source, authorizer authz.Authorizer) *Webhooks {
	return &Webhooks{src: src, authorizer: authorizer}
}

func (w *Webhooks) hooks(ctx context.Context) ([]hook, error) {
	gvr := validatingConfigsGVR
	if w.mutating {
		gvr = mutatingConfigsGVR
	}
	objs, err := w.src.List(ctx, gvr, "", false)
	if err != nil {
		return nil, err
	}
	// kube calls configurations in name order.
	sort.Slice(objs, func(i, j int) bool { return nameOfObject(objs[i]) < nameOfObject(objs[j]) })
	var out []hook
	for _, o := range objs {
		switch c := o.(type) {
		case *admissionregistrationv1.MutatingWebhookConfiguration:
			for _, h := range c.Webhooks {
				hk := newHook(h.Name, h.ClientConfig, h.Rules, h.FailurePolicy, h.NamespaceSelector, h.ObjectSelector,
					h.SideEffects, h.TimeoutSeconds, h.MatchConditions)
				hk.reinvokeIfNeeded = h.ReinvocationPolicy != nil && *h.ReinvocationPolicy == admissionregistrationv1.IfNeededReinvocationPolicy
				hk.configuration, hk.index = c.Name, len(out)
				out = append(out, hk)
			}
		case *admissionregistrationv1.ValidatingWebhookConfiguration:
			for _, h := range c.Webhooks {
				hk := newHook(h.Name, h.ClientConfig, h.Rules, h.FailurePolicy, h.NamespaceSelector, h.ObjectSelector,
					h.SideEffects, h.TimeoutSeconds, h.MatchConditions)
				hk.configuration, hk.index = c.Name, len(out)
				out = append(out, hk)
			}
		}
	}
	return out, nil
}

func nameOfObject(o runtime.Object) string {
	if acc, ok := o.(metav1.Object); ok && !isNilObject(o) {
		return acc.GetName()
	}
	return ""
}

// Mutate calls the matching mutating webhooks in order, applying their
// patches; IfNeeded webhooks run once more when a later one changed the
// object.
func (w *Webhooks) Mutate(ctx context.Context, a *Attributes) error {
	if !w.mutating {
		return nil
	}
	hooks, err := w.hooks(ctx)
	if err != nil || len(hooks) == 0 {
		return err
	}
	var ranIfNeeded []hook
	changedAfterIfNeeded := false
	for _, h := range hooks {
		changed, called, err := w.dispatch(ctx, h, a, 0)
		if err != nil {
			return err
		}
		if changed && len(ranIfNeeded) > 0 {
			changedAfterIfNeeded = true
		}
		if called && h.reinvokeIfNeeded {
			ranIfNeeded = append(ranIfNeeded, h)
		}
	}
	if changedAfterIfNeeded {
		for _, h := range ranIfNeeded {
			if _, _, err := w.dispatch(ctx, h, a, 1); err != nil {
				return err
			}
		}
	}
	return nil
}

// Validate calls the matching validating webhooks.
func (w *Webhooks) Validate(ctx context.Context, a *Attributes) error {
	if w.mutating {
		return nil
	}
	hooks, err := w.hooks(ctx)
	if err != nil {
		return err
	}
	for _, h := range hooks {
		if _, _, err := w.dispatch(ctx, h, a, 0); err != nil {
			return err
		}
	}
	return nil
}

// callError is kube's ErrCallingWebhook: subject to the failure policy.
type callError struct {
	name   string
	reason error
}

func (e *callError) Error() string {
	return fmt.Sprintf("failed calling webhook %q: %v", e.name, e.reason)
}

// dispatch matches and calls one webhook, applying its failure policy;
// round is 1 when a mutating webhook is called again.
func (w *Webhooks) dispatch(ctx context.Context, h hook, a *Attributes, round int) (changed, called bool, err error) {
	match, err := w.matches(ctx, h, a)
	if err != nil {
		err = &callError{name: h.name, reason: err}
	} else if !match {
		return false, false, nil
	} else {
		if a.DryRun && h.sideEffects != admissionregistrationv1.SideEffectClassNone &&
			h.sideEffects != admissionregistrationv1.SideEffectClassNoneOnDryRun {
			return false, false, apierrors.NewBadRequest(fmt.Sprintf("admission webhook %q does not support dry run", h.name))
		}
		changed, err = w.call(ctx, h, a, round)
		called = true
	}
	var ce *callError
	if err != nil && errors.As(err, &ce) {
		if h.failurePolicy == admissionregistrationv1.Ignore {
			return false, called, nil
		}
		return false, called, apierrors.NewInternalError(err)
	}
	return changed, called, err
}

func (w *Webhooks) matches(ctx context.Context, h hook, a *Attributes) (bool, error) {
	ruleOK := false
	for _, r := range h.rules {
		if ruleMatches(r, a) {
			ruleOK = true
			break
		}
	}
	if !ruleOK {
		return false, nil
	}
	if ok, err := namespaceSelectorMatches(ctx, w.src, h.namespaceSelector, a); err != nil || !ok {
		return false, err
	}
	if ok, err := objectSelectorMatches(h.objectSelector, a); err != nil || !ok {
		return false, err
	}
	if len(h.matchConditions) == 0 {
		return true, nil
	}
	vars := celRequestVars(ctx, a, w.authorizer)
	var errs []string
	for _, mc := range h.matchConditions {
		ok, err := evalBool(mc.Expression, vars)
		if err != nil {
			errs = append(errs, fmt.Sprintf("expression '%s' resulted in error: %v", mc.Name, err))
			continue
		}
		if !ok {
			return false, nil
		}
	}
	if len(errs) > 0 {
		return false, errors.New(strings.Join(errs, "; "))
	}
	return true, nil
}

// admissionRequest is the admission.k8s.io/v1 request for a.
func admissionRequest(a *Attributes, uid string) *admissionv1.AdmissionRequest {
	dry := a.DryRun
	req := &admissionv1.AdmissionRequest{
		UID:                types.UID(uid),
		Kind:               metav1.GroupVersionKind(a.Kind),
		Resource:           metav1.GroupVersionResource(a.Resource),
		SubResource:        a.Subresource,
		RequestKind:        ptr(metav1.GroupVersionKind(a.Kind)),
		RequestResource:    ptr(metav1.GroupVersionResource(a.Resource)),
		RequestSubResource: a.Subresource,
		Name:               a.Name,
		Namespace:          a.Namespace,
		Operation:          admissionv1.Operation(a.Operation),
		DryRun:             &dry,
		Object:             rawObject(a.Object, a.Kind),
		OldObject:          rawObject(a.OldObject, a.Kind),
	}
	if a.User != nil {
		req.UserInfo = authenticationv1.UserInfo{Username: a.User.Name, UID: a.User.UID, Groups: a.User.Groups}
		if len(a.User.Extra) > 0 {
			req.UserInfo.Extra = map[string]authenticationv1.ExtraValue{}
			for k, v := range a.User.Extra {
				req.UserInfo.Extra[k] = v
			}
		}
	}
	if a.Options != nil && !isNilObject(a.Options) {
		kind := ""
		switch a.Operation {
		case Create:
			kind = "CreateOptions"
		case Update:
			kind = "UpdateOptions"
		case Delete:
			kind = "DeleteOptions"
		}
		if kind != "" {
			req.Options = rawObject(a.Options, metav1.SchemeGroupVersion.WithKind(kind))
		}
	}
	return req
}

func ptr[T any](v T) *T { return &v }

// rawObject encodes obj as JSON with its apiVersion and kind.
func rawObject(obj runtime.Object, gvk schema.GroupVersionKind) runtime.RawExtension {
	if obj == nil || isNilObject(obj) {
		return runtime.RawExtension{}
	}
	m, ok := toCEL(obj).(map[string]any)
	if !ok {
		return runtime.RawExtension{}
	}
	m["apiVersion"], m["kind"] = gvk.GroupVersion().String(), gvk.Kind
	data, err := json.Marshal(m)
	if err != nil {
		return runtime.RawExtension{}
	}
	return runtime.RawExtension{Raw: data}
}

// call sends the AdmissionReview and applies the answer.
func (w *Webhooks) call(ctx context.Context, h hook, a *Attributes, round int) (bool, error) {
	uid := uuid.NewString()
	review := admissionv1.AdmissionReview{
		TypeMeta: metav1.TypeMeta{APIVersion: "admission.k8s.io/v1", Kind: "AdmissionReview"},
		Request:  admissionRequest(a, uid),
	}
	body, err := json.Marshal(review)
	if err != nil {
		return false, &callError{name: h.name, reason: err}
	}
	ctx, cancel := context.WithTimeout(ctx, h.timeout)
	defer cancel()
	u, names, err := w.endpoint(ctx, h)
	if err != nil {
		return false, &callError{name: h.name, reason: fmt.Errorf("failed to call webhook: %w", err)}
	}
	q := u.Query()
	q.Set("timeout", strconv.Itoa(int(h.timeout/time.Second))+"s")
	u.RawQuery = q.Encode()
	client, err := w.client(h.clientConfig.CABundle, names)
	if err != nil {
		return false, &callError{name: h.name, reason: err}
	}
	if faults.WebhookTimesOut(ctx, h.name) {
		// An injected fault: the webhook does not answer.
		<-ctx.Done()
		return false, &callError{name: h.name, reason: fmt.Errorf("failed to call webhook: %w",
			&url.Error{Op: "Post", URL: u.String(), Err: ctx.Err()})}
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, u.String(), bytes.NewReader(body))
	if err != nil {
		return false, &callError{name: h.name, reason: fmt.Errorf("failed to call webhook: %w", err)}
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	resp, err := client.Do(req)
	if err != nil {
		return false, &callError{name: h.name, reason: fmt.Errorf("failed to call webhook: %w", err)}
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, 3<<20))
	if err != nil {
		return false, &callError{name: h.name, reason: fmt.Errorf("failed to call webhook: %w", err)}
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return false, &callError{name: h.name, reason: fmt.Errorf("failed to call webhook: the server responded with status %d: %s",
			resp.StatusCode, strings.TrimSpace(string(data)))}
	}
	var answer admissionv1.AdmissionReview
	if err := json.Unmarshal(data, &answer); err != nil {
		return false, &callError{name: h.name, reason: fmt.Errorf("received invalid webhook response: %v", err)}
	}
	r := answer.Response
	if r == nil {
		return false, &callError{name: h.name, reason: errors.New("received invalid webhook response: webhook response was absent")}
	}
	if string(r.UID) != uid {
		return false, &callError{name: h.name, reason: fmt.Errorf("received invalid webhook response: expected response.uid=%q, got %q", uid, r.UID)}
	}
	for _, warning := range r.Warnings {
		AddWarning(ctx, warning)
	}
	for k, v := range r.AuditAnnotations {
		audit.AddAnnotation(ctx, h.name+"/"+k, v)
	}
	if !r.Allowed {
		return false, denied(h.name, r.Result)
	}
	if w.mutating {
		annotateMutation(ctx, h, round, len(r.Patch) > 0, r.Patch)
	}
	if len(r.Patch) == 0 {
		return false, nil
	}
	if !w.mutating {
		return false, &callError{name: h.name, reason: errors.New("received invalid webhook response: validating webhooks may not return patches")}
	}
	if r.PatchType == nil || *r.PatchType != admissionv1.PatchTypeJSONPatch {
		return false, &callError{name: h.name, reason: fmt.Errorf("received invalid webhook response: unsupported patch type %v", r.PatchType)}
	}
	if a.Object == nil || isNilObject(a.Object) {
		// A DELETE has no object to patch. Not a call failure: the failure
		// policy does not excuse it (as in kube).
		return false, apierrors.NewInternalError(fmt.Errorf("admission webhook %q attempted to modify the object, which is not supported for this operation", h.name))
	}
	changed, err := applyPatch(a, r.Patch)
	if err != nil {
		return false, &callError{name: h.name, reason: err}
	}
	return changed, nil
}

// annotateMutation records a mutating webhook's call in the request's
// audit event, with kube's keys: whether it mutated, and at Request level
// and above the patch it sent.
func annotateMutation(ctx context.Context, h hook, round int, mutated bool, patch []byte) {
	key := fmt.Sprintf("round_%d_index_%d", round, h.index)
	value, _ := json.Marshal(struct {
		Configuration string `json:"configuration"`
		Webhook       string `json:"webhook"`
		Mutated       bool   `json:"mutated"`
	}{h.configuration, h.name, mutated})
	audit.AddAnnotation(ctx, "mutation.webhook.admission.k8s.io/"+key, string(value))
	if !mutated || !audit.KeepsBodies(ctx) {
		return
	}
	value, _ = json.Marshal(struct {
		Configuration string          `json:"configuration"`
		Webhook       string          `json:"webhook"`
		Patch         json.RawMessage `json:"patch"`
		PatchType     string          `json:"patchType"`
	}{h.configuration, h.name, patch, string(admissionv1.PatchTypeJSONPatch)})
	audit.AddAnnotation(ctx, "patch.webhook.admission.k8s.io/"+key, string(value))
}

// denied is kube's rejection wording and code.
func denied(name string, result *metav1.Status) error {
	st := metav1.Status{Status: metav1.StatusFailure}
	if result != nil {
		st = *result
	}
	if st.Code < http.StatusBadRequest {
		st.Code = http.StatusBadRequest
	}
	if st.Status == "" || st.Status == metav1.StatusSuccess {
		st.Status = metav1.StatusFailure
	}
	by := fmt.Sprintf("admission webhook %q denied the request", name)
	switch {
	case st.Message != "":
		st.Message = by + ": " + st.Message
	case st.Reason != "":
		st.Message = by + ": " + string(st.Reason)
	default:
		st.Message = by + " without explanation"
	}
	return &apierrors.StatusError{ErrStatus: st}
}

// applyPatch applies a JSONPatch to a.Object, replacing it.
func applyPatch(a *Attributes, patch []byte) (bool, error) {
	if a.Object == nil || isNilObject(a.Object) {
		return false, errors.New("cannot apply a patch without an object")
	}
	before := rawObject(a.Object, a.Kind).Raw
	p, err := jsonpatch.DecodePatch(patch)
	if err != nil {
		return false, fmt.Errorf("received invalid webhook response: %v", err)
	}
	after, err := p.Apply(before)
	if err != nil {
		return false, fmt.Errorf("JSON patch could not be applied: %v", err)
	}
	if bytes.Equal(before, after) {
		return false, nil
	}
	out := reflect.New(reflect.TypeOf(a.Object).Elem()).Interface().(runtime.Object)
	if err := json.Unmarshal(after, out); err != nil {
		return false, fmt.Errorf("the patched object could not be decoded: %v", err)
	}
	out.GetObjectKind().SetGroupVersionKind(a.Object.GetObjectKind().GroupVersionKind())
	a.Object = out
	return true, nil
}

// endpoint resolves the webhook's URL and the names its certificate may
// carry: clientConfig.url, or the service's endpoints (a developer's
// laptop has no service network; Endpoints point at 127.0.0.1:port).
func (w *Webhooks) endpoint(ctx context.Context, h hook) (*url.URL, []string, error) {
	cc := h.clientConfig
	if cc.URL != nil {
		u, err := url.Parse(*cc.URL)
		if err != nil {
			return nil, nil, err
		}
		return u, []string{u.Hostname()}, nil
	}
	if cc.Service == nil {
		return nil, nil, errors.New("neither url nor service is set")
	}
	ref := cc.Service
	port := ptrOr(ref.Port, 443)
	hostport, err := serviceaddr.Resolve(ctx, w.src, ref.Namespace, ref.Name, port)
	if err != nil {
		return nil, nil, err
	}
	host, _, _ := net.SplitHostPort(hostport)
	u := &url.URL{Scheme: "https", Host: hostport, Path: ptrOr(ref.Path, "")}
	svcHost := ref.Name + "." + ref.Namespace + ".svc"
	return u, []string{svcHost, host, svcHost + ".cluster.local"}, nil
}

// client returns an HTTPS client trusting caBundle (the system roots when
// empty) that accepts a certificate valid for any of names.
func (w *Webhooks) client(caBundle []byte, names []string) (*http.Client, error) {
	sum := sha256.Sum256(caBundle)
	key := string(sum[:]) + strings.Join(names, ",")
	if c, ok := w.clients.Load(key); ok {
		return c.(*http.Client), nil
	}
	var pool *x509.CertPool
	if len(caBundle) > 0 {
		pool = x509.NewCertPool()
		if !pool.AppendCertsFromPEM(caBundle) {
			return nil, errors.New("invalid caBundle: no certificates found")
		}
	} else {
		var err error
		if pool, err = x509.SystemCertPool(); err != nil {
			return nil, err
		}
	}
	verify := func(raw [][]byte, _ [][]*x509.Certificate) error {
		if len(raw) == 0 {
			return errors.New("tls: no certificate presented")
		}
		certs := make([]*x509.Certificate, len(raw))
		for i, r := range raw {
			c, err := x509.ParseCertificate(r)
			if err != nil {
				return err
			}
			certs[i] = c
		}
		inter := x509.NewCertPool()
		for _, c := range certs[1:] {
			inter.AddCert(c)
		}
		if _, err := certs[0].Verify(x509.VerifyOptions{Roots: pool, Intermediates: inter}); err != nil {
			return err
		}
		var first error
		for _, n := range names {
			if n == "" {
				continue
			}
			err := certs[0].VerifyHostname(n)
			if err == nil {
				return nil
			}
			if first == nil {
				first = err
			}
		}
		return first
	}
	tr := &http.Transport{
		TLSClientConfig:     &tls.Config{MinVersion: tls.VersionTLS12, InsecureSkipVerify: true, VerifyPeerCertificate: verify}, //nolint:gosec // verified above
		ForceAttemptHTTP2:   true,
		MaxIdleConnsPerHost: 10,
		IdleConnTimeout:     30 * time.Second,
	}
	c := &http.Client{Transport: tr}
	actual, _ := w.clients.LoadOrStore(key, c)
	return actual.(*http.Client), nil
}

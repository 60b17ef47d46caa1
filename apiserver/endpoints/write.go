package endpoints

import (
	"context"
	"fmt"
	"io"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"mime"
	"net/http"
	"slices"
	"strconv"
	"sync"

	"github.com/devplane/devplane/apiserver/admission"
	"github.com/devplane/devplane/apiserver/audit"
	"github.com/devplane/devplane/apiserver/patch"
	"github.com/devplane/devplane/apiserver/registry"
	"github.com/devplane/devplane/apiserver/request"
	autoscalingv1 "k8s.io/api/autoscaling/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	kjson "k8s.io/apimachinery/pkg/runtime/serializer/json"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/yaml"
)

var scaleGV = autoscalingv1.SchemeGroupVersion

// readBody reads the request body, refusing more than MaxBodyBytes.
func (h *handler) readBody(r *http.Request) ([]byte, error) {
	if r.Body == nil {
		return nil, nil
	}
	limit := h.opts.MaxBodyBytes + 1
	var body []byte
	if n := r.ContentLength; n >= 0 && n < limit {
		// Sized once (and a byte to see the end), not grown from 512
		// bytes by doubling as io.ReadAll does.
		body = make([]byte, 0, n+1)
	}
	body, err := readAll(io.LimitReader(r.Body, limit), body)
	if err != nil {
		return nil, apierrors.NewBadRequest("reading the request body: " + err.Error())
	}
	if int64(len(body)) > h.opts.MaxBodyBytes {
		return nil, apierrors.NewRequestEntityTooLargeError(fmt.Sprintf("limit is %d", h.opts.MaxBodyBytes))
	}
	return body, nil
}

// readAll is io.ReadAll appending to buf.
func readAll(r io.Reader, buf []byte) ([]byte, error) {
	for {
		if len(buf) == cap(buf) {
			buf = append(buf, 0)[:len(buf)]
		}
		n, err := r.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if err == io.EOF {
			return buf, nil
		}
		if err != nil {
			return buf, err
		}
	}
}

// decodeOptions decodes the query parameters into opts (a *metav1.XOptions).
func (h *handler) decodeOptions(r *http.Request, opts runtime.Object) error {
	if err := h.params.DecodeParameters(r.URL.Query(), metav1.SchemeGroupVersion, opts); err != nil {
		return apierrors.NewBadRequest(err.Error())
	}
	return nil
}

// writeOptions decodes a write's options (kind names them in errors) and
// accepts no dryRun but "All".
func (h *handler) writeOptions(r *http.Request, opts runtime.Object, kind string, dryRun *[]string) error {
	if err := h.decodeOptions(r, opts); err != nil {
		return err
	}
	return validateDryRun(kind, *dryRun)
}

// writeRequest is what a write reads from its request before it acts: the
// field validation level, the body and the warnings collected for the
// response (from decoding, patching and admission).
type writeRequest struct {
	validation string
	mediaType  string
	body       []byte
	wn         *warnings
}

// readWriteBody checks fieldValidation, then reads the body: kube's order,
// which decides the error a request that is wrong twice gets.
func (h *handler) readWriteBody(r *http.Request) (*writeRequest, error) {
	validation, err := fieldValidation(r)
	if err != nil {
		return nil, err
	}
	body, err := h.readBody(r)
	if err != nil {
		return nil, err
	}
	return &writeRequest{validation: validation, mediaType: requestMediaType(r), body: body, wn: &warnings{}}, nil
}

// readWriteRequest is the preamble of create and update: options, dryRun,
// fieldValidation, body.
func (h *handler) readWriteRequest(r *http.Request, opts runtime.Object, kind string, dryRun *[]string) (*writeRequest, error) {
	if err := h.writeOptions(r, opts, kind, dryRun); err != nil {
		return nil, err
	}
	return h.readWriteBody(r)
}

// warnings collects Warning headers for one request; a transform may run
// more than once, so it is reset on each run.
type warnings struct {
	mu   sync.Mutex
	msgs []string
}

func (wn *warnings) reset() { wn.mu.Lock(); wn.msgs = nil; wn.mu.Unlock() }
func (wn *warnings) add(msg string) {
	wn.mu.Lock()
	wn.msgs = append(wn.msgs, msg)
	wn.mu.Unlock()
}

// writeTo adds the collected warnings as RFC 7234 Warning headers, kube's
// format: 299 - "message".
func (wn *warnings) writeTo(w http.ResponseWriter) {
	wn.mu.Lock()
	defer wn.mu.Unlock()
	for _, m := range wn.msgs {
		w.Header().Add("Warning", "299 - "+strconv.Quote(m))
	}
}

func fieldValidation(r *http.Request) (string, error) {
	v := r.URL.Query().Get("fieldValidation")
	switch v {
	case "", "Warn":
		return "Warn", nil
	case "Ignore", "Strict":
		return v, nil
	}
	return "", apierrors.NewBadRequest(fmt.Sprintf(`fieldValidation must be one of "Ignore", "Warn", or "Strict", got %q`, v))
}

// decodeBody decodes the request body into a new object of gvk, applying
// the field validation level to unknown and duplicate fields.
func (h *handler) decodeBody(wr *writeRequest, gvk schema.GroupVersionKind, newObj func() runtime.Object) (obj runtime.Object, err error) {
	body, validation, wn := wr.body, wr.validation, wr.wn
	info, ok := runtime.SerializerInfoForMediaType(h.codecs.SupportedMediaTypes(), wr.mediaType)
	if !ok {
		return nil, patch.UnsupportedMediaType(h.mediaTypes)
	}
	strict := validation != "Ignore" && info.StrictSerializer != nil
	decoder := info.Serializer
	if strict {
		decoder = info.StrictSerializer
	}
	decode := decoder.Decode
	if info.MediaType == runtime.ContentTypeJSON {
		// The same serializers, reading apiVersion and kind faster.
		ours := h.json.plain
		if strict {
			ours = h.json.strict
		}
		decode = func(data []byte, gvk *schema.GroupVersionKind, into runtime.Object) (runtime.Object, *schema.GroupVersionKind, error) {
			return decodeJSON(ours, data, gvk, into)
		}
	}
	cannotHandle := func(err error) error {
		return apierrors.NewBadRequest(fmt.Sprintf("%s in version %q cannot be handled as a %s: %v",
			gvk.Kind, gvk.Version, gvk.Kind, err))
	}
	defer func() {
		// Hostile bodies must never take the server down.
		if p := recover(); p != nil {
			obj, err = nil, cannotHandle(fmt.Errorf("malformed body: %v", p))
		}
	}()
	if len(body) == 0 {
		return nil, apierrors.NewBadRequest("the request body is empty")
	}
	obj, got, err := decode(body, &gvk, newObj())
	if err != nil && runtime.IsNotRegisteredError(err) {
		if peeked, ok := peekGVK(body); ok && peeked.GroupVersion() != gvk.GroupVersion() {
			got, err = &peeked, nil
		}
	}
	if err != nil {
		strict, isStrict := runtime.AsStrictDecodingError(err)
		if !isStrict || obj == nil {
			return nil, cannotHandle(err)
		}
		if validation == "Strict" {
			return nil, cannotHandle(err)
		}
		for _, e := range strict.Errors() {
			wn.add(e.Error())
		}
	}
	if got != nil && got.GroupVersion() != gvk.GroupVersion() {
		return nil, apierrors.NewBadRequest(fmt.Sprintf(
			"the API version in the data (%s) does not match the expected API version (%s)", got.GroupVersion(), gvk.GroupVersion()))
	}
	if got != nil && got.Kind != gvk.Kind {
		return nil, apierrors.NewBadRequest(fmt.Sprintf(
			"the kind in the data (%s) does not match the expected kind (%s)", got.Kind, gvk.Kind))
	}
	return obj, nil
}

// peekGVK reads apiVersion and kind from a JSON or YAML body.
func peekGVK(body []byte) (schema.GroupVersionKind, bool) {
	data, err := yaml.YAMLToJSON(body)
	if err != nil {
		return schema.GroupVersionKind{}, false
	}
	gvk, err := kjson.DefaultMetaFactory.Interpret(data)
	if err != nil || gvk == nil {
		return schema.GroupVersionKind{}, false
	}
	return *gvk, true
}

func requestMediaType(r *http.Request) string {
	ct := r.Header.Get("Content-Type")
	if ct == "" {
		return runtime.ContentTypeJSON
	}
	mt, _, err := mime.ParseMediaType(ct)
	if err != nil {
		return ct
	}
	return mt
}

func (h *handler) create(ctx context.Context, w http.ResponseWriter, r *http.Request, sc *scope, mc mediaChoice) {
	var opts metav1.CreateOptions
	wr, err := h.readWriteRequest(r, &opts, "CreateOptions", &opts.DryRun)
	if err != nil {
		h.writeError(w, r, err)
		return
	}
	ctx = admission.WithWarnings(ctx, wr.wn.add)
	obj, err := h.decodeBody(wr, sc.res.GroupVersionKind(), sc.res.New)
	if err != nil {
		h.writeError(w, r, err)
		return
	}
	h.auditRequestObject(ctx, wr, obj)
	applyDefaults(sc.res, obj)
	who := manager(r, opts.FieldManager)
	obj = trackManagedFields(sc.res.FieldManager, nil, obj, who, "")
	out, err := sc.res.Store.Create(request.WithFieldManager(ctx, who), sc.namespace, obj, opts)
	if err != nil {
		h.writeError(w, r, err)
		return
	}
	wr.wn.writeTo(w)
	h.respond(ctx, w, r, http.StatusCreated, out, sc, mc)
}

func (h *handler) update(ctx context.Context, w http.ResponseWriter, r *http.Request, sc *scope, mc mediaChoice) {
	var opts metav1.UpdateOptions
	wr, err := h.readWriteRequest(r, &opts, "UpdateOptions", &opts.DryRun)
	if err != nil {
		h.writeError(w, r, err)
		return
	}
	wn := wr.wn
	ctx = admission.WithWarnings(ctx, wn.add)
	who := manager(r, opts.FieldManager)
	ctx = request.WithFieldManager(ctx, who)
	if sc.info.Subresource == "scale" {
		requested, err := h.decodeBody(wr, scaleGV.WithKind("Scale"),
			func() runtime.Object { return &autoscalingv1.Scale{} })
		if err != nil {
			h.writeError(w, r, err)
			return
		}
		h.auditRequestObject(ctx, wr, requested)
		out, err := sc.res.Store.UpdateScale(ctx, sc.namespace, sc.info.Name,
			func(context.Context, *autoscalingv1.Scale) (*autoscalingv1.Scale, error) {
				return requested.(*autoscalingv1.Scale).DeepCopy(), nil
			}, opts)
		if err != nil {
			h.writeError(w, r, err)
			return
		}
		wn.writeTo(w)
		h.writeObject(w, r, http.StatusOK, out, scaleGV, mc)
		return
	}
	obj, err := h.decodeBody(wr, sc.res.GroupVersionKind(), sc.res.New)
	if err != nil {
		h.writeError(w, r, err)
		return
	}
	h.auditRequestObject(ctx, wr, obj)
	if acc, err := meta.Accessor(obj); err == nil && acc.GetName() != sc.info.Name {
		h.writeError(w, r, apierrors.NewBadRequest(fmt.Sprintf(
			"the name of the object (%s) does not match the name on the URL (%s)", acc.GetName(), sc.info.Name)))
		return
	}
	out, created, err := sc.res.Store.Update(ctx, sc.namespace, sc.info.Name, sc.info.Subresource,
		func(_ context.Context, current runtime.Object) (runtime.Object, error) {
			requested := obj.DeepCopyObject()
			applyDefaults(sc.res, requested)
			return trackManagedFields(sc.res.FieldManager, current, requested, who, sc.info.Subresource), nil
		}, opts)
	if err != nil {
		h.writeError(w, r, err)
		return
	}
	wn.writeTo(w)
	code := http.StatusOK
	if created {
		code = http.StatusCreated
	}
	h.respond(ctx, w, r, code, out, sc, mc)
}

// auditRequestObject tells the request's audit record what the body
// sent: the objectRef's missing parts and, when the policy keeps it, the
// body as JSON.
func (h *handler) auditRequestObject(ctx context.Context, wr *writeRequest, obj runtime.Object) {
	acc, _ := obj.(metav1.Object)
	audit.LogRequestObject(ctx, acc)
	if !audit.KeepsBodies(ctx) {
		return
	}
	body := wr.body
	if wr.mediaType != runtime.ContentTypeJSON {
		body = h.encodeJSON(obj)
	}
	audit.LogRequestBody(ctx, body)
}

// manager names who made a write: the request's fieldManager, or what kube
// derives from the User-Agent ("kubectl-edit", "kubectl-client-side-apply").
func manager(r *http.Request, requested string) string {
	if requested != "" {
		return requested
	}
	return patch.ManagerFromUserAgent(r.UserAgent())
}

// trackManagedFields records manager's write in obj's managedFields. Like
// kube-apiserver, a bookkeeping failure never fails the write itself.
func trackManagedFields(fm *patch.FieldManager, live, obj runtime.Object, manager, subresource string) runtime.Object {
	if fm == nil {
		return obj
	}
	out, err := fm.UpdateManagedFields(live, obj, manager, subresource)
	if err != nil {
		return obj
	}
	return keepIfUnchanged(live, out)
}

// keepIfUnchanged returns live when out differs from it only in the times
// of managedFields entries: a write that changes nothing must not produce a
// new resourceVersion (kubectl apply of the same manifest is a no-op).
// live is the caller's private copy of the stored object (transforms get
// one), so it can be returned as is and nothing needs copying.
func keepIfUnchanged(live, out runtime.Object) runtime.Object {
	if live == nil || out == nil {
		return out
	}
	l, err1 := meta.Accessor(live)
	o, err2 := meta.Accessor(out)
	if err1 != nil || err2 != nil {
		return out
	}
	liveEntries, outEntries := l.GetManagedFields(), o.GetManagedFields()
	if len(liveEntries) != len(outEntries) {
		return out
	}
	// Compare with out's entry times taken from live, then put them back.
	withLiveTimes := make([]metav1.ManagedFieldsEntry, len(outEntries))
	for i := range outEntries {
		withLiveTimes[i] = outEntries[i]
		withLiveTimes[i].Time = liveEntries[i].Time
	}
	o.SetManagedFields(withLiveTimes)
	same := apiequality.Semantic.DeepEqual(live, out)
	o.SetManagedFields(outEntries)
	if same {
		return live
	}
	return out
}

// applyDefaults runs the kind's defaulting, so managedFields describe the
// object as stored (a Secret's stringData is already folded into data).
func applyDefaults(res *registry.Resource, obj runtime.Object) {
	if res.Store != nil && res.Store.Default != nil {
		res.Store.Default(obj)
	}
}

func (h *handler) patch(ctx context.Context, w http.ResponseWriter, r *http.Request, sc *scope, mc mediaChoice) {
	var opts metav1.PatchOptions
	if err := h.writeOptions(r, &opts, "PatchOptions", &opts.DryRun); err != nil {
		h.writeError(w, r, err)
		return
	}
	patchType := types.PatchType(requestMediaType(r))
	accepted := patch.BuiltinPatchTypes
	if sc.res.FieldManager == nil || sc.res.Custom {
		accepted = patch.CustomPatchTypes
	}
	if !slices.Contains(accepted, string(patchType)) {
		h.writeError(w, r, patch.UnsupportedMediaType(accepted))
		return
	}
	isApply := patchType == types.ApplyPatchType
	if isApply && opts.FieldManager == "" {
		h.writeError(w, r, apierrors.NewInvalid(schema.GroupKind{Group: metav1.GroupName, Kind: "PatchOptions"}, "",
			field.ErrorList{field.Required(field.NewPath("fieldManager"), "is required for apply patch")}))
		return
	}
	if !isApply && opts.Force != nil {
		h.writeError(w, r, apierrors.NewInvalid(schema.GroupKind{Group: metav1.GroupName, Kind: "PatchOptions"}, "",
			field.ErrorList{field.Forbidden(field.NewPath("force"), "may not be specified for non-apply patch")}))
		return
	}
	wr, err := h.readWriteBody(r)
	if err != nil {
		h.writeError(w, r, err)
		return
	}
	body, validation, wn := wr.body, wr.validation, wr.wn
	if audit.KeepsBodies(ctx) {
		audit.LogRequestBody(ctx, body) // as kube: the patch itself
	}
	ctx = admission.WithWarnings(ctx, wn.add)
	// Duplicate fields in an apply body are reported as kube reports them:
	// only once the apply itself succeeded, so an unknown field's error
	// comes first.
	var duplicateFields error
	if isApply {
		if _, err := patch.FieldValidation(validation); err != nil {
			h.writeError(w, r, err)
			return
		}
		applyWarnings, err := patch.CheckApplyBody(body, validation)
		duplicateFields = err
		for _, text := range applyWarnings {
			wn.add(text)
		}
	}
	who := manager(r, opts.FieldManager)
	ctx = request.WithFieldManager(ctx, who)
	force := opts.Force != nil && *opts.Force
	updateOpts := metav1.UpdateOptions{DryRun: opts.DryRun, FieldManager: opts.FieldManager, FieldValidation: opts.FieldValidation}
	sub := sc.info.Subresource

	// patched computes the new state of current (an object or its Scale).
	patched := func(current runtime.Object, gvk schema.GroupVersionKind, fm *patch.FieldManager) (runtime.Object, error) {
		if isApply {
			if fm == nil {
				return nil, patch.UnsupportedMediaType(patch.CustomPatchTypes)
			}
			out, err := fm.ApplyPatch(current, body, who, force, sub)
			if err != nil {
				return nil, err
			}
			if duplicateFields != nil {
				return nil, duplicateFields
			}
			return keepIfUnchanged(current, out), nil
		}
		var unknownFields func(*unstructured.Unstructured) []string
		if gvk == sc.res.GroupVersionKind() {
			unknownFields = sc.res.UnknownFields
		}
		obj, warns, err := patch.ApplyToCustom(current, gvk, patchType, body, validation, unknownFields)
		if err != nil {
			return nil, err
		}
		wn.reset()
		for _, text := range warns {
			wn.add(text)
		}
		if gvk == sc.res.GroupVersionKind() {
			applyDefaults(sc.res, obj)
		}
		return trackManagedFields(fm, current, obj, who, sub), nil
	}

	if sub == "scale" {
		out, err := sc.res.Store.UpdateScale(ctx, sc.namespace, sc.info.Name,
			func(_ context.Context, current *autoscalingv1.Scale) (*autoscalingv1.Scale, error) {
				obj, err := patched(current, patch.ScaleGVK, patch.BuiltinFieldManager(patch.ScaleGVK))
				if err != nil {
					return nil, err
				}
				scale, ok := obj.(*autoscalingv1.Scale)
				if !ok {
					return nil, apierrors.NewBadRequest("the patch did not produce a Scale")
				}
				return scale, nil
			}, updateOpts)
		if err != nil {
			h.writeError(w, r, err)
			return
		}
		wn.writeTo(w)
		h.writeObject(w, r, http.StatusOK, out, scaleGV, mc)
		return
	}
	gvk := sc.res.GroupVersionKind()
	out, _, err := sc.res.Store.Update(ctx, sc.namespace, sc.info.Name, sub,
		func(_ context.Context, current runtime.Object) (runtime.Object, error) {
			return patched(current, gvk, sc.res.FieldManager)
		}, updateOpts)
	if isApply && sub == "" && apierrors.IsNotFound(err) {
		// Server-side apply creates what does not exist yet.
		h.applyCreate(ctx, w, r, sc, mc, body, who, force, opts, wn, duplicateFields)
		return
	}
	if err != nil {
		h.writeError(w, r, err)
		return
	}
	wn.writeTo(w)
	h.respond(ctx, w, r, http.StatusOK, out, sc, mc)
}

func (h *handler) applyCreate(ctx context.Context, w http.ResponseWriter, r *http.Request, sc *scope, mc mediaChoice,
	body []byte, who string, force bool, opts metav1.PatchOptions, wn *warnings, duplicateFields error) {
	obj, err := sc.res.FieldManager.ApplyPatch(nil, body, who, force, "")
	if err == nil {
		err = duplicateFields
	}
	if err != nil {
		h.writeError(w, r, err)
		return
	}
	if acc, err := meta.Accessor(obj); err == nil {
		if acc.GetName() != sc.info.Name {
			h.writeError(w, r, apierrors.NewBadRequest(fmt.Sprintf(
				"the name of the object (%s) does not match the name on the URL (%s)", acc.GetName(), sc.info.Name)))
			return
		}
		if sc.res.Namespaced && acc.GetNamespace() == "" {
			acc.SetNamespace(sc.namespace)
		}
	}
	out, err := sc.res.Store.Create(ctx, sc.namespace, obj, metav1.CreateOptions{DryRun: opts.DryRun, FieldManager: opts.FieldManager})
	if err != nil {
		h.writeError(w, r, err)
		return
	}
	wn.writeTo(w)
	h.respond(ctx, w, r, http.StatusCreated, out, sc, mc)
}

// deleteOptions come from the query and, when present, the body (which
// wins), in any of the supported encodings.
func (h *handler) deleteOptions(r *http.Request) (*metav1.DeleteOptions, error) {
	opts := &metav1.DeleteOptions{}
	if err := h.decodeOptions(r, opts); err != nil {
		return nil, err
	}
	body, err := h.readBody(r)
	if err != nil {
		return nil, err
	}
	if len(body) == 0 {
		return opts, validateDryRun("DeleteOptions", opts.DryRun)
	}
	if audit.KeepsBodies(r.Context()) && requestMediaType(r) == runtime.ContentTypeJSON {
		audit.LogRequestBody(r.Context(), body)
	}
	info, ok := runtime.SerializerInfoForMediaType(h.codecs.SupportedMediaTypes(), requestMediaType(r))
	if !ok {
		return nil, patch.UnsupportedMediaType(h.mediaTypes)
	}
	defaults := metav1.SchemeGroupVersion.WithKind("DeleteOptions")
	obj, _, err := info.Serializer.Decode(body, &defaults, opts)
	if err != nil {
		return nil, apierrors.NewBadRequest(err.Error())
	}
	decoded, ok := obj.(*metav1.DeleteOptions)
	if !ok {
		return nil, apierrors.NewBadRequest(fmt.Sprintf("expected DeleteOptions in the body, got %T", obj))
	}
	return decoded, validateDryRun("DeleteOptions", decoded.DryRun)
}

// validateDryRun accepts only "All", as kube-apiserver does, answering
// like it: `CreateOptions.meta.k8s.io "" is invalid: dryRun: Unsupported value`.
func validateDryRun(kind string, dryRun []string) error {
	for _, d := range dryRun {
		if d != metav1.DryRunAll {
			return apierrors.NewInvalid(schema.GroupKind{Group: metav1.GroupName, Kind: kind}, "", field.ErrorList{
				field.NotSupported(field.NewPath("dryRun"), dryRun, []string{metav1.DryRunAll})})
		}
	}
	return nil
}

func (h *handler) delete(ctx context.Context, w http.ResponseWriter, r *http.Request, sc *scope, mc mediaChoice) {
	opts, err := h.deleteOptions(r)
	if err != nil {
		h.writeError(w, r, err)
		return
	}
	store := sc.res.Store
	wn := &warnings{}
	ctx = admission.WithWarnings(ctx, wn.add)
	obj, deleted, err := store.Delete(ctx, sc.namespace, sc.info.Name, opts)
	if err != nil {
		h.writeError(w, r, err)
		return
	}
	wn.writeTo(w)
	if deleted && !store.ReturnDeletedObject {
		st := store.DeletedStatus(obj)
		st.Code = http.StatusOK
		h.writeObject(w, r, http.StatusOK, st, schema.GroupVersion{Version: "v1"}, mediaChoice{info: mc.info})
		return
	}
	h.respond(ctx, w, r, http.StatusOK, obj, sc, mc)
}

func (h *handler) deleteCollection(ctx context.Context, w http.ResponseWriter, r *http.Request, sc *scope, mc mediaChoice) {
	listOpts, err := h.listOptions(r)
	if err != nil {
		h.writeError(w, r, err)
		return
	}
	opts, err := h.deleteOptions(r)
	if err != nil {
		h.writeError(w, r, err)
		return
	}
	list, err := sc.res.Store.DeleteCollection(ctx, sc.namespace, opts, listOpts)
	if err != nil {
		h.writeError(w, r, err)
		return
	}
	if mc.as == asObject && !sc.res.Custom {
		clearItemKinds(list)
	}
	h.respond(ctx, w, r, http.StatusOK, list, sc, mc)
}

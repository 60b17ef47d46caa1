package extensions

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utiljson "k8s.io/apimachinery/pkg/util/json"
	"sigs.k8s.io/yaml"

	"github.com/devplane/devplane/apiserver/request"
)

// customMediaTypes are what custom resources are served in: kube has no
// protobuf for them (415 on request bodies, skipped in Accept, so clients
// that offer JSON too fall back to it).
var customMediaTypes = []string{runtime.ContentTypeJSON, runtime.ContentTypeYAML}

const maxBodyBytes = 3 * 1024 * 1024

// wrap adds, in front of the generic handler, what is particular to custom
// resources: no protobuf, deprecation warnings, refusing creates while the
// CRD terminates or in a missing namespace, and fieldValidation of unknown
// fields (which the schema prunes).
func (e *Extensions) wrap(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		info, ok := request.RequestInfoFrom(r.Context())
		if !ok {
			parsed, err := request.Parse(r)
			if err != nil {
				h.ServeHTTP(w, r)
				return
			}
			info = parsed
		}
		if !info.IsResourceRequest {
			h.ServeHTTP(w, r)
			return
		}
		gvr := schema.GroupVersionResource{Group: info.APIGroup, Version: info.APIVersion, Resource: info.Resource}
		e.mu.Lock()
		sv := e.versions[gvr]
		terminating := sv != nil && sv.crd.terminating
		e.mu.Unlock()
		if sv == nil {
			h.ServeHTTP(w, r)
			return
		}
		if err := e.admit(w, r, info, sv, terminating); err != nil {
			writeStatus(w, err)
			return
		}
		h.ServeHTTP(w, r)
	})
}

func (e *Extensions) admit(w http.ResponseWriter, r *http.Request, info *request.RequestInfo, sv *servedVersion, terminating bool) error {
	if isProtobuf(r.Header.Get("Content-Type")) {
		return &apierrors.StatusError{ErrStatus: metav1.Status{Status: metav1.StatusFailure,
			Code: http.StatusUnsupportedMediaType, Reason: metav1.StatusReasonUnsupportedMediaType,
			Message: "the body of the request was in an unknown format - accepted media types include: " +
				strings.Join(customMediaTypes, ", ")}}
	}
	if accept := r.Header.Get("Accept"); accept != "" {
		var keep []string
		for _, clause := range strings.Split(accept, ",") {
			if !isProtobuf(clause) {
				keep = append(keep, strings.TrimSpace(clause))
			}
		}
		if len(keep) == 0 {
			return &apierrors.StatusError{ErrStatus: metav1.Status{Status: metav1.StatusFailure,
				Code: http.StatusNotAcceptable, Reason: metav1.StatusReasonNotAcceptable,
				Message: "only the following media types are accepted: " + strings.Join(customMediaTypes, ", ")}}
		}
		r.Header.Set("Accept", strings.Join(keep, ","))
	}
	if sv.v.Deprecated {
		w.Header().Add("Warning", "299 - "+strconv.Quote(sv.v.DeprecationWarning))
	}
	if info.Verb == "delete" || info.Verb == "deletecollection" {
		return perGroupDeleteOptions(r, sv.res.GVR.GroupVersion().String())
	}
	if info.Verb != "create" && info.Verb != "update" && info.Verb != "patch" {
		return nil
	}
	if info.Verb == "create" {
		if terminating {
			err := apierrors.NewMethodNotSupported(sv.res.GVR.GroupResource(), "create")
			err.ErrStatus.Message = "create not allowed while custom resource definition is terminating"
			return err
		}
		if sv.res.Namespaced {
			if err := e.checkNamespace(r.Context(), sv.res.GVR.GroupResource(), info.Namespace); err != nil {
				return err
			}
		}
	}
	if info.Subresource == "scale" {
		return nil
	}
	return e.checkUnknownFields(w, r, info, sv)
}

// perGroupDeleteOptions lets a delete body be DeleteOptions of the custom
// resource's own group version, as kube allows for backwards compatibility
// (typed clients such as controller-runtime's send them): it is read as
// meta.k8s.io/v1 DeleteOptions.
func perGroupDeleteOptions(r *http.Request, groupVersion string) error {
	if r.Body == nil || r.ContentLength == 0 {
		return nil
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, maxBodyBytes+1))
	if err != nil {
		return apierrors.NewBadRequest("reading the request body: " + err.Error())
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	var head struct {
		APIVersion string `json:"apiVersion"`
		Kind       string `json:"kind"`
	}
	if json.Unmarshal(body, &head) != nil || head.Kind != "DeleteOptions" || head.APIVersion != groupVersion {
		return nil
	}
	var obj map[string]any
	if json.Unmarshal(body, &obj) != nil {
		return nil
	}
	obj["apiVersion"] = metav1.SchemeGroupVersion.String()
	if body, err = json.Marshal(obj); err != nil {
		return nil
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	r.ContentLength = int64(len(body))
	return nil
}

func isProtobuf(mediaType string) bool {
	mt, _, err := mime.ParseMediaType(strings.TrimSpace(mediaType))
	return err == nil && mt == runtime.ContentTypeProtobuf
}

// checkNamespace: custom resources are created only in existing namespaces
// that are not terminating.
func (e *Extensions) checkNamespace(ctx context.Context, gr schema.GroupResource, namespace string) error {
	if e.core() == nil || namespace == "" {
		return nil
	}
	res, ok := e.core().Lookup("", "v1", "namespaces")
	if !ok || res.Store == nil {
		return nil
	}
	ctx = request.AsAPIServer(ctx)
	obj, err := res.Store.Get(ctx, "", namespace, metav1.GetOptions{ResourceVersion: "0"})
	if apierrors.IsNotFound(err) {
		obj, err = res.Store.Get(ctx, "", namespace, metav1.GetOptions{})
	}
	if err != nil {
		return err
	}
	if ns, ok := obj.(*corev1.Namespace); ok && (ns.DeletionTimestamp != nil || ns.Status.Phase == corev1.NamespaceTerminating) {
		return apierrors.NewForbidden(gr, "",
			fmt.Errorf("unable to create new content in namespace %s because it is being terminated", namespace))
	}
	return nil
}

// checkUnknownFields applies fieldValidation to the fields the schema does
// not know: Strict refuses them, Warn (the default) warns, Ignore does
// nothing. They are pruned either way.
func (e *Extensions) checkUnknownFields(w http.ResponseWriter, r *http.Request, info *request.RequestInfo, sv *servedVersion) error {
	level := r.URL.Query().Get("fieldValidation")
	switch level {
	case "", "Warn":
		level = "Warn"
	case "Strict":
	default:
		return nil // Ignore, or invalid (the generic handler answers that)
	}
	if sv.v.PreserveUnknownFields || r.Body == nil {
		return nil
	}
	if info.Verb == "patch" {
		// JSON and merge patches check the patched object, as kube does
		// (Resource.UnknownFields); server-side apply types the patch with
		// the schema, which refuses unknown fields in structured-merge-diff's
		// words (".spec.x: field not declared in schema") whatever
		// fieldValidation says.
		return nil
	}
	mediaType, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	body, err := io.ReadAll(io.LimitReader(r.Body, maxBodyBytes+1))
	if err != nil {
		return apierrors.NewBadRequest("reading the request body: " + err.Error())
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	if len(body) > maxBodyBytes {
		return nil
	}
	data := body
	if mediaType != runtime.ContentTypeJSON {
		if data, err = yaml.YAMLToJSON(body); err != nil {
			return nil
		}
	}
	u := &unstructured.Unstructured{}
	if err := utiljson.Unmarshal(data, &u.Object); err != nil || u.Object == nil {
		return nil // the generic handler reports malformed bodies
	}
	gvk := sv.res.GroupVersionKind()
	if u.GroupVersionKind() != gvk {
		return nil
	}
	unknown, err := sv.v.Prune(u)
	if err != nil || len(unknown) == 0 {
		return nil
	}
	if level == "Strict" {
		msgs := make([]string, len(unknown))
		for i, p := range unknown {
			msgs[i] = fmt.Sprintf("unknown field %q", p)
		}
		return apierrors.NewBadRequest(fmt.Sprintf("%s in version %q cannot be handled as a %s: strict decoding error: %s",
			gvk.Kind, gvk.Version, gvk.Kind, strings.Join(msgs, ", ")))
	}
	for _, p := range unknown {
		w.Header().Add("Warning", "299 - "+strconv.Quote(fmt.Sprintf("unknown field %q", p)))
	}
	return nil
}

// writeStatus answers with err as a JSON Status.
func writeStatus(w http.ResponseWriter, err error) {
	var st metav1.Status
	if s, ok := err.(apierrors.APIStatus); ok {
		st = s.Status()
	} else {
		st = apierrors.NewInternalError(err).ErrStatus
	}
	st.Kind, st.APIVersion = "Status", "v1"
	body, _ := json.Marshal(&st)
	w.Header().Set("Content-Type", runtime.ContentTypeJSON)
	w.WriteHeader(int(st.Code))
	_, _ = w.Write(body)
}

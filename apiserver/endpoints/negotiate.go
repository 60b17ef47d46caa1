package endpoints

import (
	"bytes"
	"fmt"
	"mime"
	"net/http"
	"strconv"
	"strings"
	"sync"

	"github.com/devplane/devplane/apiserver/audit"
	"github.com/devplane/devplane/apiserver/request"
	"github.com/klauspost/compress/gzip"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Response shapes a client can ask for with the "as" media type parameter.
const (
	asObject                = ""
	asTable                 = "Table"
	asPartialObjectMetadata = "PartialObjectMetadata"
	asPartialObjectList     = "PartialObjectMetadataList"
)

// mediaChoice is one negotiated response format.
type mediaChoice struct {
	info runtime.SerializerInfo
	// as is asObject, asTable or a PartialObjectMetadata form; metaVersion
	// is the meta.k8s.io version asked for (v1 or v1beta1).
	as          string
	metaVersion string
}

// gzipThreshold: smaller responses are not worth compressing.
const gzipThreshold = 128 * 1024

// negotiate picks the response format from the Accept header. Clauses this
// server cannot produce are skipped; none acceptable is a 406. Tables are
// offered only where tables says the endpoint has them, and, as in kube,
// only as JSON or YAML.
func (h *handler) negotiate(r *http.Request, tables bool) (mediaChoice, error) {
	accept := r.Header.Get("Accept")
	if strings.TrimSpace(accept) == "" {
		return mediaChoice{info: h.jsonInfo}, nil
	}
	for _, clause := range strings.Split(accept, ",") {
		mt, params, err := mime.ParseMediaType(strings.TrimSpace(clause))
		if err != nil {
			continue
		}
		info, ok := h.serializerFor(mt)
		if !ok {
			continue
		}
		as := params["as"]
		switch as {
		case asObject:
			return mediaChoice{info: info}, nil
		case asTable, asPartialObjectMetadata, asPartialObjectList:
			if as == asTable && (!tables || (info.MediaType != runtime.ContentTypeJSON && info.MediaType != runtime.ContentTypeYAML)) {
				continue
			}
			v := params["v"]
			if params["g"] != metav1.GroupName || (v != "v1" && v != "v1beta1") {
				continue
			}
			return mediaChoice{info: info, as: as, metaVersion: v}, nil
		}
	}
	return mediaChoice{}, notAcceptable(h.mediaTypes)
}

// serializerFor maps an Accept media type to a serializer; wildcards get
// JSON.
func (h *handler) serializerFor(mediaType string) (runtime.SerializerInfo, bool) {
	switch mediaType {
	case "*/*", "application/*":
		return h.jsonInfo, true
	}
	return runtime.SerializerInfoForMediaType(h.codecs.SupportedMediaTypes(), mediaType)
}

func notAcceptable(types []string) error {
	return &apierrors.StatusError{ErrStatus: metav1.Status{
		Status:  metav1.StatusFailure,
		Code:    http.StatusNotAcceptable,
		Reason:  metav1.StatusReasonNotAcceptable,
		Message: "only the following media types are accepted: " + strings.Join(types, ", "),
	}}
}

// setKind stamps obj with its kind in gv, as every response object carries
// apiVersion and kind.
func (h *handler) setKind(obj runtime.Object, gv schema.GroupVersion) {
	gvks, _, err := h.scheme.ObjectKinds(obj)
	if err != nil || len(gvks) == 0 {
		return
	}
	gvk := gvks[0]
	for _, k := range gvks {
		if k.GroupVersion() == gv {
			gvk = k
		}
	}
	if obj.GetObjectKind().GroupVersionKind() != gvk {
		obj.GetObjectKind().SetGroupVersionKind(gvk)
	}
}

// writeObject encodes obj (already in its response shape) with the
// negotiated serializer.
func (h *handler) writeObject(w http.ResponseWriter, r *http.Request, code int, obj runtime.Object, gv schema.GroupVersion, mc mediaChoice) {
	h.setKind(obj, gv)
	buf := getBuffer()
	defer putBuffer(buf)
	serializer := mc.info.Serializer
	if mc.info.PrettySerializer != nil && prettyPrint(r) {
		serializer = mc.info.PrettySerializer
	}
	var err error
	if !h.appendJSON(buf, serializer, obj) {
		err = serializer.Encode(obj, buf)
	}
	if err != nil {
		if code >= 400 {
			// Encoding the error itself failed: plain text is all that is left.
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		h.writeError(w, r, apierrors.NewInternalError(fmt.Errorf("encoding response: %w", err)))
		return
	}
	h.auditResponse(r, code, obj, buf.Bytes(), mc.info.MediaType == runtime.ContentTypeJSON)
	writeBody(w, r, code, mc.info.MediaType, buf.Bytes())
}

// auditResponse tells the request's audit record the Status it answers
// with, the name a create gave, and, at RequestResponse level, the
// response body as JSON.
func (h *handler) auditResponse(r *http.Request, code int, obj runtime.Object, body []byte, isJSON bool) {
	ctx := r.Context()
	switch o := obj.(type) {
	case *metav1.Status:
		audit.LogResponseStatus(ctx, o)
	case metav1.Object:
		if code == http.StatusCreated {
			audit.LogCreatedName(ctx, o.GetName())
		}
	}
	if !audit.WantsResponseObject(ctx) {
		return
	}
	if isJSON {
		body = bytes.Clone(body) // buf goes back to its pool
	} else {
		body = h.encodeJSON(obj)
	}
	audit.LogResponseObject(ctx, body)
}

// encodeJSON is obj as JSON, for the audit log (nil if it cannot be).
func (h *handler) encodeJSON(obj runtime.Object) []byte {
	var buf bytes.Buffer
	if err := h.jsonInfo.Serializer.Encode(obj, &buf); err != nil {
		return nil
	}
	return buf.Bytes()
}

// appendJSON writes obj with Options.AppendJSON when the response is
// compact JSON and it takes obj, as the JSON serializer would (newline
// included); false leaves buf empty for the serializer.
func (h *handler) appendJSON(buf *bytes.Buffer, serializer runtime.Serializer, obj runtime.Object) bool {
	if h.opts.AppendJSON == nil || serializer != h.jsonInfo.Serializer {
		return false
	}
	data, ok := h.opts.AppendJSON(buf.AvailableBuffer(), obj)
	if ok {
		buf.Write(data)
		buf.WriteByte('\n')
	}
	return ok
}

// prettyPrint is kube's rule for indented JSON: ?pretty=true (or false to
// refuse it), else for curl, wget and browsers, whose readers are people.
func prettyPrint(r *http.Request) bool {
	if strings.Contains(r.URL.RawQuery, "pretty") {
		if v := r.URL.Query().Get("pretty"); v != "" {
			pretty, _ := strconv.ParseBool(v)
			return pretty
		}
	}
	ua := r.UserAgent()
	return strings.HasPrefix(ua, "curl") || strings.HasPrefix(ua, "Wget") || strings.HasPrefix(ua, "Mozilla/5.0")
}

func writeBody(w http.ResponseWriter, r *http.Request, code int, contentType string, body []byte) {
	hdr := w.Header()
	hdr.Set("Content-Type", contentType)
	if len(body) > gzipThreshold && acceptsGzip(r) && !request.CompressionDisabled(r.Context()) {
		zbuf := getBuffer()
		defer putBuffer(zbuf)
		zw := gzipWriters.Get().(*gzip.Writer)
		zw.Reset(zbuf)
		_, _ = zw.Write(body)
		_ = zw.Close()
		zw.Reset(nil)
		gzipWriters.Put(zw)
		body = zbuf.Bytes()
		hdr.Set("Content-Encoding", "gzip")
		hdr.Add("Vary", "Accept-Encoding")
	}
	hdr.Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(code)
	if r.Method != http.MethodHead {
		_, _ = w.Write(body)
	}
}

// gzipWriters: a flate compressor is ~1 MB of state, too much to allocate
// per response. BestSpeed is kube-apiserver's level too; the default level
// costs several times the CPU for little gain on API objects. klauspost's
// gzip writes the same format at about twice the standard library's speed
// (a list of 2,000 ConfigMaps: ~0.9 → ~0.45 ms).
var gzipWriters = sync.Pool{New: func() any {
	zw, _ := gzip.NewWriterLevel(nil, gzip.BestSpeed)
	return zw
}}

// buffers hold encoded and compressed response bodies, which are copied to
// the connection before the handler returns.
var buffers = sync.Pool{New: func() any { return new(bytes.Buffer) }}

// maxPooledBuffer: larger buffers (huge lists) are left to the GC rather
// than pinned in the pool.
const maxPooledBuffer = 8 << 20

func getBuffer() *bytes.Buffer { return buffers.Get().(*bytes.Buffer) }

func putBuffer(b *bytes.Buffer) {
	if b.Cap() > maxPooledBuffer {
		return
	}
	b.Reset()
	buffers.Put(b)
}

func acceptsGzip(r *http.Request) bool {
	for _, enc := range strings.Split(r.Header.Get("Accept-Encoding"), ",") {
		if strings.TrimSpace(strings.SplitN(enc, ";", 2)[0]) == "gzip" {
			return true
		}
	}
	return false
}

// statusFor turns any error into the Status kube would send.
func statusFor(err error) *metav1.Status {
	var st metav1.Status
	if s, ok := err.(apierrors.APIStatus); ok {
		st = s.Status()
	} else {
		st = apierrors.NewInternalError(err).ErrStatus
	}
	st.Kind, st.APIVersion = "Status", "v1"
	if st.Status == "" {
		st.Status = metav1.StatusFailure
	}
	if st.Code == 0 {
		st.Code = http.StatusInternalServerError
	}
	return &st
}

// writeError answers with a Status in the negotiated format (JSON when
// negotiation itself failed).
func (h *handler) writeError(w http.ResponseWriter, r *http.Request, err error) {
	st := statusFor(err)
	mc, nerr := h.negotiate(r, true)
	if nerr != nil || mc.info.MediaType == "" {
		mc = mediaChoice{info: h.jsonInfo}
	}
	mc.as = asObject
	h.writeObject(w, r, int(st.Code), st, schema.GroupVersion{Version: "v1"}, mc)
}

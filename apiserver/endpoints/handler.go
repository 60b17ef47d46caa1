// Package endpoints serves the resource API under /api and /apis: the HTTP
// verbs of every resource in a registry.Registry, content negotiation,
// watches and discovery.
package endpoints

import (
	"context"
	"net/http"
	"slices"
	"sync/atomic"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer"

	"github.com/devplane/devplane/apiserver/audit"
	"github.com/devplane/devplane/apiserver/registry"
	"github.com/devplane/devplane/apiserver/request"
	"github.com/devplane/devplane/apiserver/storage"
)

// Options configure the API handler.
type Options struct {
	// Scheme and Codecs know every served type plus meta.k8s.io.
	Scheme *runtime.Scheme
	Codecs serializer.CodecFactory
	// NotFound serves what this handler does not: groups, versions and
	// non-resource paths it does not know (the next server in the
	// delegation chain). nil answers 404.
	NotFound http.Handler
	// Tables returns the table convertor for resources whose Resource.Table
	// is nil (printers.For); nil or a nil result gives NAME/CREATED AT.
	Tables func(gr schema.GroupResource) registry.TableConvertor
	// MaxBodyBytes bounds request bodies; 0 means 3 MiB as kube.
	MaxBodyBytes int64
	// MaxWatchTimeout is the watch duration when the client sets none
	// (kube picks 30-60 min); 0 means 30 minutes.
	MaxWatchTimeout time.Duration
	// DiscoveryRegistries are more registries whose resources this
	// handler's discovery lists (/apis, /apis/<group>[/<version>], legacy
	// and aggregated) although another server in the chain serves them:
	// the core server lists the extensions server's custom resources.
	DiscoveryRegistries []*registry.Registry
	// AppendJSON, when set, writes an object of a response in compact
	// JSON as the JSON serializer would (its bytes, without the newline),
	// or declines (false) and the serializer writes it: a faster writer
	// for a kind whose encoding/json output is slow to make (CRDs).
	AppendJSON func(dst []byte, obj runtime.Object) ([]byte, bool)
}

const defaultMaxBodyBytes = 3 * 1024 * 1024

type handler struct {
	reg        *registry.Registry
	opts       Options
	scheme     *runtime.Scheme
	codecs     serializer.CodecFactory
	params     runtime.ParameterCodec
	jsonInfo   runtime.SerializerInfo
	json       jsonDecoders // request bodies in JSON
	mediaTypes []string
	discovery  *DiscoveryHandler
	events     encodedEvents // recent watch events, encoded once for all watchers
	// busyWatches counts watches flushing at most once a window (watchFlusher).
	busyWatches atomic.Int64
}

// NewAPIHandler serves the resources of reg under /api and /apis, and
// their discovery documents.
func NewAPIHandler(reg *registry.Registry, opts Options) http.Handler {
	if opts.MaxBodyBytes == 0 {
		opts.MaxBodyBytes = defaultMaxBodyBytes
	}
	if opts.MaxWatchTimeout == 0 {
		opts.MaxWatchTimeout = 30 * time.Minute
	}
	h := &handler{reg: reg, opts: opts, scheme: opts.Scheme, codecs: opts.Codecs,
		params: runtime.NewParameterCodec(opts.Scheme), json: newJSONDecoders(opts.Scheme)}
	for _, info := range opts.Codecs.SupportedMediaTypes() {
		h.mediaTypes = append(h.mediaTypes, info.MediaType)
		if info.MediaType == runtime.ContentTypeJSON {
			h.jsonInfo = info
		}
	}
	h.discovery = NewDiscoveryHandler(reg, opts.DiscoveryRegistries...)
	h.discovery.notFound = h.notFound
	return h
}

func (h *handler) notFound(w http.ResponseWriter, r *http.Request) {
	if h.opts.NotFound != nil {
		h.opts.NotFound.ServeHTTP(w, r)
		return
	}
	h.writeError(w, r, apierrors.NewNotFound(schema.GroupResource{}, ""))
}

func (h *handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	info, ok := request.RequestInfoFrom(r.Context())
	if !ok {
		parsed, err := request.Parse(r)
		if err != nil {
			h.writeError(w, r, apierrors.NewBadRequest(err.Error()))
			return
		}
		info = parsed
	}
	if !info.IsResourceRequest {
		h.discovery.serve(w, r, info)
		return
	}
	res, ok := h.reg.Lookup(info.APIGroup, info.APIVersion, info.Resource)
	if !ok {
		if h.reg.ServesGroupVersion(schema.GroupVersion{Group: info.APIGroup, Version: info.APIVersion}) {
			h.writeError(w, r, resourceNotFound())
			return
		}
		h.notFound(w, r)
		return
	}
	h.serveResource(w, r, info, res)
}

func resourceNotFound() error {
	return apierrors.NewGenericServerResponse(http.StatusNotFound, "", schema.GroupResource{}, "",
		"the server could not find the requested resource", 0, false)
}

// methodNotAllowed is kube's answer to a method a (sub)resource does not
// serve (go-restful finds no route for it).
func methodNotAllowed() error {
	return apierrors.NewGenericServerResponse(http.StatusMethodNotAllowed, "", schema.GroupResource{}, "", "", 0, false)
}

// scope is what one resource request is about.
type scope struct {
	info      *request.RequestInfo
	res       *registry.Resource
	namespace string
	gv        schema.GroupVersion
}

func (h *handler) serveResource(w http.ResponseWriter, r *http.Request, info *request.RequestInfo, res *registry.Resource) {
	sc := &scope{info: info, res: res, gv: res.GVR.GroupVersion()}
	isNamespaceObject := res.GVR.Group == "" && res.GVR.Resource == "namespaces"
	switch {
	case isNamespaceObject:
		// /api/v1/namespaces/<name> names the object, not a scope.
	case res.Namespaced:
		sc.namespace = info.Namespace
	case info.Namespace != "":
		h.writeError(w, r, resourceNotFound())
		return
	}
	if !h.subresourceServed(res, info.Subresource) {
		h.writeError(w, r, resourceNotFound())
		return
	}
	mc, err := h.negotiate(r, servesTables(res, info.Subresource))
	if err != nil {
		h.writeError(w, r, err)
		return
	}
	ctx := r.Context()
	if c := res.ConnectSubresources[info.Subresource]; c != nil {
		if !slices.Contains(c.Verbs, info.Verb) {
			h.writeError(w, r, methodNotAllowed())
			return
		}
		if c.Stream != nil {
			if err := c.Stream(w, r, sc.namespace, info.Name); err != nil {
				h.writeError(w, r, err)
			}
			return
		}
		h.writeError(w, r, c.Serve(ctx, sc.namespace, info.Name))
		return
	}
	if res.Read != nil && info.Subresource == "" {
		h.virtualRead(ctx, w, r, sc, mc)
		return
	}
	if isVirtual(res, info.Subresource) {
		h.virtual(ctx, w, r, sc, mc)
		return
	}
	if info.Subresource != "" && !slices.Contains(res.SubresourceVerbs(info.Subresource), info.Verb) {
		// e.g. get or patch of namespaces/finalize, delete of a status.
		h.writeError(w, r, methodNotAllowed())
		return
	}
	if info.Subresource == "" && !slices.Contains(res.Verbs, info.Verb) {
		// e.g. deletecollection of namespaces, which kube does not offer.
		h.writeError(w, r, methodNotAllowed())
		return
	}
	switch info.Verb {
	case "get":
		h.get(ctx, w, r, sc, mc)
	case "list":
		h.list(ctx, w, r, sc, mc)
	case "watch":
		h.watch(ctx, w, r, sc, mc)
	case "create":
		if info.Name != "" {
			h.writeError(w, r, methodNotAllowed())
			return
		}
		h.create(ctx, w, r, sc, mc)
	case "update":
		h.update(ctx, w, r, sc, mc)
	case "patch":
		h.patch(ctx, w, r, sc, mc)
	case "delete":
		h.delete(ctx, w, r, sc, mc)
	case "deletecollection":
		h.deleteCollection(ctx, w, r, sc, mc)
	default:
		h.writeError(w, r, methodNotAllowed())
	}
}

// servesTables reports whether kube has a table convertor behind the
// endpoint: every stored or computed resource, their status and scale, and
// connect subresources (which do not answer objects); not create-only
// resources (reviews, tokenreviews) nor the other subresources (binding,
// eviction, token, resize, approval...).
func servesTables(res *registry.Resource, subresource string) bool {
	switch {
	case subresource == "":
		return !isVirtual(res, "")
	case subresource == "status", subresource == "scale":
		return true
	}
	return res.ConnectSubresources[subresource] != nil
}

func (h *handler) subresourceServed(res *registry.Resource, sub string) bool {
	if sub == "" {
		return true
	}
	for _, s := range res.Subresources() {
		if s == sub {
			return true
		}
	}
	return false
}

func (h *handler) get(ctx context.Context, w http.ResponseWriter, r *http.Request, sc *scope, mc mediaChoice) {
	var opts metav1.GetOptions
	if err := h.decodeOptions(r, &opts); err != nil {
		h.writeError(w, r, err)
		return
	}
	store := sc.res.Store
	if sc.info.Subresource == "scale" {
		scale, err := store.GetScale(ctx, sc.namespace, sc.info.Name, opts)
		if err != nil {
			h.writeError(w, r, err)
			return
		}
		h.writeObject(w, r, http.StatusOK, scale, scaleGV, mc)
		return
	}
	obj, err := store.Get(ctx, sc.namespace, sc.info.Name, opts)
	if err != nil {
		h.writeError(w, r, err)
		return
	}
	h.respond(ctx, w, r, http.StatusOK, obj, sc, mc)
}

func (h *handler) list(ctx context.Context, w http.ResponseWriter, r *http.Request, sc *scope, mc mediaChoice) {
	opts, err := h.listOptions(r)
	if err != nil {
		h.writeError(w, r, err)
		return
	}
	// A protobuf list of built-in objects reuses the watch cache's
	// encoding of each item; a JSON list reuses each item's JSON: the
	// cache's for built-in kinds (while JSON lists recur), each served
	// item's for custom resources.
	var encoded *storage.EncodedItems
	switch {
	case mc.as != asObject, audit.WantsResponseObject(ctx):
		// (an audited list is written through writeObject, which logs it)
	case mc.info.MediaType == mediaTypeProtobuf && !sc.res.Custom:
		encoded = &storage.EncodedItems{}
	case mc.info.MediaType == runtime.ContentTypeJSON && !prettyPrint(r):
		encoded = &storage.EncodedItems{WantJSON: true}
	}
	if encoded != nil {
		ctx = storage.WithEncodedItems(ctx, encoded)
	}
	list, err := sc.res.Store.List(ctx, sc.namespace, opts)
	if err != nil {
		h.writeError(w, r, err)
		return
	}
	if mc.as == asObject && !sc.res.Custom {
		clearItemKinds(list)
	}
	if encoded != nil && encoded.Valid && !encoded.WantJSON && h.writeProtobufList(w, r, http.StatusOK, list, sc.gv, encoded.Proto) {
		return
	}
	if encoded != nil && encoded.JSON != nil {
		if sc.res.Custom && writeJSONList(w, r, http.StatusOK, list, encoded.JSON) {
			return
		}
		if !sc.res.Custom && h.writeTypedJSONList(w, r, http.StatusOK, list, sc.gv, encoded.JSON) {
			return
		}
	}
	h.respond(ctx, w, r, http.StatusOK, list, sc, mc)
}

func (h *handler) listOptions(r *http.Request) (metav1.ListOptions, error) {
	var opts metav1.ListOptions
	err := h.decodeOptions(r, &opts)
	return opts, err
}

// respond writes obj in the shape the client asked for: the object itself,
// a Table or PartialObjectMetadata.
func (h *handler) respond(ctx context.Context, w http.ResponseWriter, r *http.Request, code int, obj runtime.Object, sc *scope, mc mediaChoice) {
	switch mc.as {
	case asTable:
		table, err := h.table(ctx, r, obj, sc, mc, true)
		if err != nil {
			h.writeError(w, r, err)
			return
		}
		h.writeObject(w, r, code, table, metaGV(mc), mc)
	case asPartialObjectMetadata, asPartialObjectList:
		pom, err := partialObjectMetadata(obj, metaGV(mc))
		if err != nil {
			h.writeError(w, r, err)
			return
		}
		h.writeObject(w, r, code, pom, metaGV(mc), mc)
	default:
		h.writeObject(w, r, code, obj, sc.gv, mc)
	}
}

func metaGV(mc mediaChoice) schema.GroupVersion {
	return schema.GroupVersion{Group: metav1.GroupName, Version: mc.metaVersion}
}

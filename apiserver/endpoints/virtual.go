package endpoints

import (
	"context"
	"net/http"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/devplane/devplane/apiserver/registry"
)

// isVirtual reports whether the request goes to a create-only resource
// (Resource.Create) or a create-only subresource (CreateSubresources).
func isVirtual(res *registry.Resource, subresource string) bool {
	if subresource != "" {
		return res.CreateSubresources[subresource] != nil
	}
	return res.Store == nil && res.Create != nil
}

// virtual serves the one verb of a create-only (sub)resource: POST.
func (h *handler) virtual(ctx context.Context, w http.ResponseWriter, r *http.Request, sc *scope, mc mediaChoice) {
	if sc.info.Verb != "create" {
		h.writeError(w, r, methodNotAllowed())
		return
	}
	// Only the query's well-formedness is checked here: create-only
	// resources do not look at dryRun.
	if err := h.decodeOptions(r, &metav1.CreateOptions{}); err != nil {
		h.writeError(w, r, err)
		return
	}
	wr, err := h.readWriteBody(r)
	if err != nil {
		h.writeError(w, r, err)
		return
	}
	gvk, newObj := sc.res.GroupVersionKind(), sc.res.New
	sub := sc.res.CreateSubresources[sc.info.Subresource]
	if sub != nil {
		gvk, newObj = sub.Kind, sub.New
	} else if sc.info.Name != "" {
		h.writeError(w, r, methodNotAllowed())
		return
	}
	obj, err := h.decodeBody(wr, gvk, newObj)
	if err != nil {
		h.writeError(w, r, err)
		return
	}
	h.auditRequestObject(ctx, wr, obj)
	var out = obj
	if sub != nil {
		out, err = sub.Create(ctx, sc.namespace, sc.info.Name, obj)
	} else {
		out, err = sc.res.Create(ctx, sc.namespace, obj)
	}
	if err != nil {
		h.writeError(w, r, err)
		return
	}
	wr.wn.writeTo(w)
	h.writeObject(w, r, http.StatusCreated, out, gvk.GroupVersion(), mc)
}

// virtualRead serves get and list of a computed resource (Resource.Read).
func (h *handler) virtualRead(ctx context.Context, w http.ResponseWriter, r *http.Request, sc *scope, mc mediaChoice) {
	read := sc.res.Read
	if read.Warning != "" {
		w.Header().Add("Warning", `299 - "`+read.Warning+`"`)
	}
	var obj runtime.Object
	var err error
	switch sc.info.Verb {
	case "get":
		obj, err = read.Get(ctx, sc.info.Name)
	case "list":
		obj, err = read.List(ctx)
	default:
		err = methodNotAllowed()
	}
	if err != nil {
		h.writeError(w, r, err)
		return
	}
	h.respond(ctx, w, r, http.StatusOK, obj, sc, mc)
}

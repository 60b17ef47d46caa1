package endpoints

import (
	"context"
	"net/http"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

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
		h.writeError(w, r, methodNotAllowed(sc.info.Verb))
		return
	}
	var opts metav1.CreateOptions
	if err := h.params.DecodeParameters(r.URL.Query(), metav1.SchemeGroupVersion, &opts); err != nil {
		h.writeError(w, r, apierrors.NewBadRequest(err.Error()))
		return
	}
	validation, err := fieldValidation(r)
	if err != nil {
		h.writeError(w, r, err)
		return
	}
	body, err := h.readBody(r)
	if err != nil {
		h.writeError(w, r, err)
		return
	}
	wn := &warnings{}
	gvk, newObj := sc.res.GroupVersionKind(), sc.res.New
	sub := sc.res.CreateSubresources[sc.info.Subresource]
	if sub != nil {
		gvk, newObj = sub.Kind, sub.New
	} else if sc.info.Name != "" {
		h.writeError(w, r, methodNotAllowed("create"))
		return
	}
	obj, err := h.decodeBody(body, requestMediaType(r), gvk, newObj, validation, wn)
	if err != nil {
		h.writeError(w, r, err)
		return
	}
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
	wn.writeTo(w)
	h.writeObject(w, r, http.StatusCreated, out, gvk.GroupVersion(), mc)
}

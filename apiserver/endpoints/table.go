package endpoints

import (
	"bytes"
	"context"
	"net/http"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/devplane/devplane/apiserver/registry"
)

func (h *handler) tableConvertor(res *registry.Resource) registry.TableConvertor {
	if res.Table != nil {
		return res.Table
	}
	if h.opts.Tables != nil {
		if t := h.opts.Tables(res.GVR.GroupResource()); t != nil {
			return t
		}
	}
	return defaultTable{}
}

// table renders obj (an object or a list) as a Table. Rows carry the
// object as includeObject asks: None, Metadata (the default) or Object.
func (h *handler) table(ctx context.Context, r *http.Request, obj runtime.Object, sc *scope, mc mediaChoice, withColumns bool) (*metav1.Table, error) {
	opts := &metav1.TableOptions{IncludeObject: metav1.IncludeMetadata}
	switch v := metav1.IncludeObjectPolicy(r.URL.Query().Get("includeObject")); v {
	case "":
	case metav1.IncludeNone, metav1.IncludeMetadata, metav1.IncludeObject:
		opts.IncludeObject = v
	default:
		return nil, apierrors.NewBadRequest("includeObject must be one of None, Metadata or Object")
	}
	t, err := h.tableConvertor(sc.res).ConvertToTable(ctx, obj, opts)
	if err != nil {
		return nil, err
	}
	gv := metaGV(mc)
	for i := range t.Rows {
		row := &t.Rows[i]
		item := row.Object.Object
		row.Object = runtime.RawExtension{}
		if item == nil {
			continue
		}
		switch opts.IncludeObject {
		case metav1.IncludeMetadata:
			pom, err := partialObjectMetadata(item, gv)
			if err != nil {
				return nil, err
			}
			item = pom
		case metav1.IncludeObject:
			item = item.DeepCopyObject()
			h.setKind(item, sc.gv)
		default:
			continue
		}
		row.Object.Object = item
		if mc.info.MediaType != runtime.ContentTypeJSON && mc.info.MediaType != runtime.ContentTypeYAML {
			// Binary encodings carry embedded objects as raw bytes.
			var buf bytes.Buffer
			if err := h.jsonInfo.Serializer.Encode(item, &buf); err != nil {
				return nil, apierrors.NewInternalError(err)
			}
			row.Object = runtime.RawExtension{Raw: buf.Bytes()}
		}
	}
	if !withColumns {
		t.ColumnDefinitions = nil
	}
	t.APIVersion, t.Kind = gv.String(), "Table"
	return t, nil
}

// partialObjectMetadata strips obj (or each item of a list) to metadata.
func partialObjectMetadata(obj runtime.Object, gv schema.GroupVersion) (runtime.Object, error) {
	if meta.IsListType(obj) {
		items, err := meta.ExtractList(obj)
		if err != nil {
			return nil, apierrors.NewInternalError(err)
		}
		listAcc, err := meta.ListAccessor(obj)
		if err != nil {
			return nil, apierrors.NewInternalError(err)
		}
		out := &metav1.PartialObjectMetadataList{
			TypeMeta: metav1.TypeMeta{APIVersion: gv.String(), Kind: "PartialObjectMetadataList"},
			ListMeta: metav1.ListMeta{ResourceVersion: listAcc.GetResourceVersion(), Continue: listAcc.GetContinue(),
				RemainingItemCount: listAcc.GetRemainingItemCount()},
			Items: make([]metav1.PartialObjectMetadata, 0, len(items)),
		}
		for _, item := range items {
			p, err := partialObjectMetadata(item, gv)
			if err != nil {
				return nil, err
			}
			// Each item is a PartialObjectMetadata with its apiVersion and
			// kind, as kube's asPartialObjectMetadataList sets them.
			out.Items = append(out.Items, *p.(*metav1.PartialObjectMetadata))
		}
		return out, nil
	}
	acc, err := meta.Accessor(obj)
	if err != nil {
		return nil, apierrors.NewInternalError(err)
	}
	pom := &metav1.PartialObjectMetadata{TypeMeta: metav1.TypeMeta{APIVersion: gv.String(), Kind: "PartialObjectMetadata"}}
	if om, ok := acc.(*metav1.ObjectMeta); ok {
		pom.ObjectMeta = *om.DeepCopy()
	} else {
		pom.ObjectMeta = metav1.ObjectMeta{Name: acc.GetName(), Namespace: acc.GetNamespace(), UID: acc.GetUID(),
			ResourceVersion: acc.GetResourceVersion(), Generation: acc.GetGeneration(),
			CreationTimestamp: acc.GetCreationTimestamp(), DeletionTimestamp: acc.GetDeletionTimestamp(),
			Labels: acc.GetLabels(), Annotations: acc.GetAnnotations(), Finalizers: acc.GetFinalizers(),
			OwnerReferences: acc.GetOwnerReferences(), GenerateName: acc.GetGenerateName(),
			DeletionGracePeriodSeconds: acc.GetDeletionGracePeriodSeconds(), ManagedFields: acc.GetManagedFields()}
	}
	return pom, nil
}

// defaultTable is kube's table for resources without a printer: NAME and
// CREATED AT.
type defaultTable struct{}

func (defaultTable) ConvertToTable(_ context.Context, obj runtime.Object, _ *metav1.TableOptions) (*metav1.Table, error) {
	t := &metav1.Table{ColumnDefinitions: []metav1.TableColumnDefinition{
		{Name: "Name", Type: "string", Format: "name", Description: "Name must be unique within a namespace."},
		{Name: "Created At", Type: "date", Description: "CreationTimestamp is when the object was created."},
	}}
	items := []runtime.Object{obj}
	if meta.IsListType(obj) {
		var err error
		if items, err = meta.ExtractList(obj); err != nil {
			return nil, err
		}
		if l, err := meta.ListAccessor(obj); err == nil {
			t.ResourceVersion, t.Continue, t.RemainingItemCount = l.GetResourceVersion(), l.GetContinue(), l.GetRemainingItemCount()
		}
	}
	for _, item := range items {
		acc, err := meta.Accessor(item)
		if err != nil {
			return nil, err
		}
		t.Rows = append(t.Rows, metav1.TableRow{
			Cells:  []interface{}{acc.GetName(), acc.GetCreationTimestamp().UTC().Format(time.RFC3339)},
			Object: runtime.RawExtension{Object: item},
		})
	}
	return t, nil
}

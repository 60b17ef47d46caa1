package crdschema

import (
	"context"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// ConvertToTable renders obj (an *unstructured.Unstructured or
// *unstructured.UnstructuredList) as a meta.k8s.io Table: NAME, then the
// version's additionalPrinterColumns (JSONPath, type, format, priority), or
// AGE when none are defined. Rows carry the object for includeObject.
func (v *Version) ConvertToTable(ctx context.Context, obj runtime.Object, opts *metav1.TableOptions) (*metav1.Table, error) {
	var tableOptions runtime.Object
	if opts != nil {
		tableOptions = opts
	}
	c, err := v.schema()
	if err != nil {
		return nil, err
	}
	return c.table.ConvertToTable(ctx, obj, tableOptions)
}

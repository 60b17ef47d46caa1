// Package printers implements server-side printing: it turns built-in objects
// into metav1.Table with the same columns kube-apiserver serves, so that
// `kubectl get` renders devplane resources exactly like a real cluster's.
package printers

import (
	"context"
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/duration"
)

// TableConvertor turns one object or a list (*v1.XList) into a Table.
type TableConvertor interface {
	ConvertToTable(ctx context.Context, obj runtime.Object, opts *metav1.TableOptions) (*metav1.Table, error)
}

// Default prints NAME and CREATED AT for any object with ObjectMeta. It is
// what kube serves for resources without printers (roles, limitranges,
// custom resources without additional printer columns...).
var Default TableConvertor = defaultConvertor{}

// For returns the convertor for a built-in resource; unknown resources get Default.
func For(gr schema.GroupResource) TableConvertor {
	if c, ok := registry[gr]; ok {
		return c
	}
	return Default
}

// cellFunc computes the cells of one row. It reports false when obj is not
// the type it prints, so one convertor can serve several API versions.
type cellFunc func(obj runtime.Object) (cells []interface{}, ok bool)

// cellsOf adapts a typed cell function to cellFunc.
func cellsOf[T runtime.Object](cells func(T) []interface{}) cellFunc {
	return func(obj runtime.Object) ([]interface{}, bool) {
		typed, ok := obj.(T)
		if !ok {
			return nil, false
		}
		return cells(typed), true
	}
}

// tableConvertor prints one resource: fixed columns, and cell functions for
// each Go type the resource may be stored or served as.
type tableConvertor struct {
	columns []metav1.TableColumnDefinition
	cells   []cellFunc
}

func newConvertor(columns []metav1.TableColumnDefinition, cells ...cellFunc) *tableConvertor {
	return &tableConvertor{columns: columns, cells: cells}
}

func (c *tableConvertor) ConvertToTable(_ context.Context, obj runtime.Object, opts *metav1.TableOptions) (*metav1.Table, error) {
	return buildTable(obj, opts, c.columns, c.row)
}

func (c *tableConvertor) row(obj runtime.Object) (metav1.TableRow, error) {
	for _, cells := range c.cells {
		if values, ok := cells(obj); ok {
			return metav1.TableRow{Cells: values, Object: runtime.RawExtension{Object: obj}}, nil
		}
	}
	return metav1.TableRow{}, fmt.Errorf("printers: no table printer for %T", obj)
}

// buildTable does the work shared by every convertor: list expansion, list
// metadata, and the NoHeaders option. Wide cells are always included, as
// kube-apiserver does; kubectl hides priority>0 columns itself.
func buildTable(obj runtime.Object, opts *metav1.TableOptions, columns []metav1.TableColumnDefinition, row func(runtime.Object) (metav1.TableRow, error)) (*metav1.Table, error) {
	table := &metav1.Table{}
	if opts == nil || !opts.NoHeaders {
		table.ColumnDefinitions = columns
	}
	if meta.IsListType(obj) {
		if err := meta.EachListItem(obj, func(item runtime.Object) error {
			r, err := row(item)
			if err != nil {
				return err
			}
			table.Rows = append(table.Rows, r)
			return nil
		}); err != nil {
			return nil, err
		}
		if list, err := meta.ListAccessor(obj); err == nil {
			table.ResourceVersion = list.GetResourceVersion()
			table.Continue = list.GetContinue()
			table.RemainingItemCount = list.GetRemainingItemCount()
		}
		if table.Rows == nil {
			// An empty list still serialises as "rows": [] for clients.
			table.Rows = []metav1.TableRow{}
		}
		return table, nil
	}
	r, err := row(obj)
	if err != nil {
		return nil, err
	}
	table.Rows = []metav1.TableRow{r}
	if accessor, err := meta.CommonAccessor(obj); err == nil {
		table.ResourceVersion = accessor.GetResourceVersion()
	}
	return table, nil
}

var defaultColumns = []metav1.TableColumnDefinition{
	nameColumn,
	{Name: "Created At", Type: "date", Description: "When the object was created (RFC 3339, UTC)."},
}

type defaultConvertor struct{}

func (defaultConvertor) ConvertToTable(_ context.Context, obj runtime.Object, opts *metav1.TableOptions) (*metav1.Table, error) {
	return buildTable(obj, opts, defaultColumns, func(item runtime.Object) (metav1.TableRow, error) {
		m, err := meta.Accessor(item)
		if err != nil {
			return metav1.TableRow{}, fmt.Errorf("printers: cannot print %T: %w", item, err)
		}
		return metav1.TableRow{
			Cells:  []interface{}{m.GetName(), m.GetCreationTimestamp().UTC().Format(time.RFC3339)},
			Object: runtime.RawExtension{Object: item},
		}, nil
	})
}

// Column definitions shared by most printers.
var (
	nameColumn       = metav1.TableColumnDefinition{Name: "Name", Type: "string", Format: "name", Description: "Name of the object, unique within its namespace."}
	ageColumn        = metav1.TableColumnDefinition{Name: "Age", Type: "string", Description: "Time since the object was created."}
	containersColumn = metav1.TableColumnDefinition{Name: "Containers", Type: "string", Priority: 1, Description: "Names of the containers in the pod template."}
	imagesColumn     = metav1.TableColumnDefinition{Name: "Images", Type: "string", Priority: 1, Description: "Images of the containers in the pod template."}
)

func column(name, typ, description string) metav1.TableColumnDefinition {
	return metav1.TableColumnDefinition{Name: name, Type: typ, Description: description}
}

func wideColumn(name, typ, description string) metav1.TableColumnDefinition {
	return metav1.TableColumnDefinition{Name: name, Type: typ, Priority: 1, Description: description}
}

// since renders the time elapsed since t like kubectl ("5m", "2d3h").
func since(t metav1.Time) string {
	if t.IsZero() {
		return "<unknown>"
	}
	return duration.HumanDuration(time.Since(t.Time))
}

func sinceMicro(t metav1.MicroTime) string {
	if t.IsZero() {
		return "<unknown>"
	}
	return duration.HumanDuration(time.Since(t.Time))
}

func age(m metav1.Object) string {
	return since(m.GetCreationTimestamp())
}

package patch

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
	"sync"

	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"
)

// The commonest update of all, a node's Lease renewed (a hundred a second
// for a thousand simulated nodes), changes one scalar: renewTime. Typing
// both objects for SMD (a JSON round trip for every MicroTime) and walking
// them three times was half the server's cost of the renewal. When live and
// new differ only in scalar fields that are set in both, SMD's Compare has
// nothing added or removed and modified exactly those fields, so the chain
// leaves manager's set S as it is when S holds them all (S less the
// modified fields, joined by them again as current-operation's set), and
// stamps the time when any changed. scalarsChangedWithin finds that case
// with one walk of the Go values; anything else (a list, map or pointer
// that changed, a field set or cleared, a field S does not hold, a stripped
// one) is left to the typed path.

// managedSets keeps parsed managedFields sets by their JSON: a resource's
// objects of one shape share a few.
var managedSets sync.Map // string → *fieldpath.Set

const maxManagedSets = 1024

var managedSetCount int64
var managedSetMu sync.Mutex

func managedSet(raw []byte) *fieldpath.Set {
	if set, ok := managedSets.Load(string(raw)); ok {
		return set.(*fieldpath.Set)
	}
	set := &fieldpath.Set{}
	if err := set.FromJSON(bytes.NewReader(raw)); err != nil {
		return nil
	}
	managedSetMu.Lock()
	defer managedSetMu.Unlock()
	if managedSetCount >= maxManagedSets {
		managedSets.Clear()
		managedSetCount = 0
	}
	managedSets.Store(string(raw), set)
	managedSetCount++
	return set
}

// scalarsChangedWithin reports whether new differs from live only in
// scalar fields set in both and held by the manager's set (raw), and
// whether any differs (stamp); ok false when it cannot tell so.
func (f *FieldManager) scalarsChangedWithin(raw []byte, live, new any) (stamp, ok bool) {
	set := managedSet(raw)
	if set == nil {
		return false, false
	}
	w := scalarWalk{owned: set}
	if !w.value(reflect.ValueOf(live), reflect.ValueOf(new), nil) {
		return false, false
	}
	return w.changed, true
}

type scalarWalk struct {
	owned   *fieldpath.Set
	changed bool
}

// value compares a and b (of one type) at path; false: not a case it
// decides.
func (w *scalarWalk) value(a, b reflect.Value, path fieldpath.Path) bool {
	t := a.Type()
	if marshals(t) {
		return w.leaf(a, b, path)
	}
	switch t.Kind() {
	case reflect.Pointer:
		if a.IsNil() || b.IsNil() {
			return a.IsNil() == b.IsNil()
		}
		return w.value(a.Elem(), b.Elem(), path)
	case reflect.Struct:
		for i := range t.NumField() {
			field := t.Field(i)
			if !field.IsExported() {
				continue
			}
			name, inline := jsonName(field)
			if name == "-" {
				continue
			}
			at := path
			if !inline {
				at = append(path[:len(path):len(path)], fieldpath.PathElement{FieldName: &name})
			}
			if !w.value(a.Field(i), b.Field(i), at) {
				return false
			}
		}
		return true
	case reflect.String, reflect.Bool, reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Float32, reflect.Float64:
		if a.Equal(b) {
			return true
		}
		return !a.IsZero() && !b.IsZero() && w.owns(path)
	default: // slices, maps, interfaces: decided only when equal
		return reflect.DeepEqual(a.Interface(), b.Interface())
	}
}

// leaf compares values that marshal themselves (times, quantities) by
// their JSON, as SMD compares them.
func (w *scalarWalk) leaf(a, b reflect.Value, path fieldpath.Path) bool {
	ja, errA := marshalJSON(a)
	jb, errB := marshalJSON(b)
	if errA != nil || errB != nil {
		return false
	}
	if bytes.Equal(ja, jb) {
		return true
	}
	unset := func(j []byte) bool { return string(j) == "null" || string(j) == `""` }
	return !unset(ja) && !unset(jb) && w.owns(path)
}

// owns records a changed field at path, if the manager's set holds it and
// stripMeta does not strip it.
func (w *scalarWalk) owns(path fieldpath.Path) bool {
	if len(path) == 0 || !w.owned.Has(path) || strippedSet.Has(path) {
		return false
	}
	w.changed = true
	return true
}

// marshalJSON is v's own JSON (its MarshalJSON when it has one by value:
// a time's is a format, encoding/json's reflection costs several times as
// much).
func marshalJSON(v reflect.Value) ([]byte, error) {
	if m, ok := v.Interface().(json.Marshaler); ok {
		return m.MarshalJSON()
	}
	return json.Marshal(v.Interface())
}

var jsonMarshalerType = reflect.TypeFor[json.Marshaler]()

func marshals(t reflect.Type) bool {
	return t.Kind() != reflect.Pointer && (t.Implements(jsonMarshalerType) || reflect.PointerTo(t).Implements(jsonMarshalerType))
}

// jsonName is a field's JSON name, and whether it is inlined (embedded
// without a name, or ",inline").
func jsonName(field reflect.StructField) (string, bool) {
	tag := field.Tag.Get("json")
	name, opts, _ := strings.Cut(tag, ",")
	if name == "-" && opts == "" {
		return "-", false
	}
	if name == "" && (field.Anonymous || strings.Contains(opts, "inline")) {
		return "", true
	}
	if name == "" {
		name = field.Name
	}
	return name, false
}

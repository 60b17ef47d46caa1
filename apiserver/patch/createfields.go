package patch

import (
	"errors"
	"sync"
	"time"
	"unicode/utf8"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/managedfields"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"
	smdschema "sigs.k8s.io/structured-merge-diff/v6/schema"
	"sigs.k8s.io/structured-merge-diff/v6/typed"
	"sigs.k8s.io/structured-merge-diff/v6/value"
)

// A create's managedFields through apimachinery's field manager cost a
// tenth of a create's CPU, most of it comparing the empty object with the
// new one. For the plain create (no managedFields sent, main resource) the
// chain's outcome reduces to one Update entry holding the fields the
// comparison finds added or modified, less stripMeta's; createEntry
// computes that set in one walk of the new object and falls back to the
// chain for anything it is not sure to reproduce byte for byte.
//
// Along the chain for such a create: versionCheck and both last-applied
// managers pass Updates through; skipNonApplied tracks every create
// (probability 1); capManagers has one updater to keep; buildManagerInfo
// and managedFieldsUpdater name the entry and stamp its time when its set
// is not empty; stripMeta removes stripped; structuredMerge types both
// objects and runs SMD's Updater.Update, which with no other managers and
// no reset fields keeps Compare's Added and Modified.

// stripped is what apimachinery's stripMeta manager removes from every
// entry (fields the server owns or sets itself): top-level fields, and
// fields under metadata.
var stripped = &strippedFields{
	here: fieldNames("apiVersion", "kind", "metadata"),
	below: map[string]*strippedFields{"metadata": {here: fieldNames(
		"name", "namespace", "creationTimestamp", "selfLink", "uid", "clusterName",
		"generation", "managedFields", "resourceVersion")}},
}

type strippedFields struct {
	here  map[string]bool
	below map[string]*strippedFields
}

func fieldNames(names ...string) map[string]bool {
	m := make(map[string]bool, len(names))
	for _, name := range names {
		m[name] = true
	}
	return m
}

// errNoShortcut sends a create to the general field manager.
var errNoShortcut = errors.New("create not handled by the managedFields shortcut")

// createBaseline is what every create of a kind is compared with: the
// typed empty object the chain builds for it.
type createBaseline struct {
	converter managedfields.TypeConverter
	schema    *smdschema.Schema
	typeRef   smdschema.TypeRef
	// empty holds the empty object as plain maps, safe to read from
	// concurrent creates.
	empty value.Value
}

// createBaseline returns the kind's baseline, nil when the kind cannot be
// typed (every create then takes the general path, which reports why).
func (f *FieldManager) createBaseline() *createBaseline {
	f.baselineOnce.Do(func() {
		tc, err := f.converter()
		if err != nil {
			return
		}
		empty, err := f.objectConvertor().ConvertToVersion(f.newEmpty(), f.gvk.GroupVersion())
		if err != nil {
			return
		}
		tv, err := tc.ObjectToTyped(empty, typed.AllowDuplicates)
		if err != nil {
			return
		}
		f.baseline = &createBaseline{
			converter: tc,
			schema:    tv.Schema(),
			typeRef:   tv.TypeRef(),
			empty:     value.NewValueInterface(tv.AsValue().Unstructured()),
		}
	})
	return f.baseline
}

// createEntry records manager's create of newObj in its managedFields as
// the general field manager would; only the entry's time can differ, as
// between two calls. It reports false when it cannot be sure to: the
// caller then runs the chain, which repeats what may have been done to
// newObj by then (empty managedFields dropped, apiVersion and kind set).
func (f *FieldManager) createEntry(newObj runtime.Object, manager string) bool {
	b := f.createBaseline()
	// Manager names go through JSON in the chain, which rewrites invalid
	// UTF-8.
	if b == nil || !utf8.ValidString(manager) {
		return false
	}
	accessor, err := meta.Accessor(newObj)
	if err != nil || len(accessor.GetManagedFields()) > 0 {
		return false
	}
	versioned, ok := f.plainVersioned(newObj)
	if !ok {
		return false
	}
	accessor.SetManagedFields(nil) // the chain types the object without them
	tv, err := b.converter.ObjectToTyped(versioned, typed.AllowDuplicates)
	if err != nil || tv.Schema() != b.schema {
		return false
	}
	if tr := tv.TypeRef(); !tr.Equals(&b.typeRef) {
		return false
	}
	fields, err := createdFields(b, tv.AsValue())
	if err != nil {
		return false
	}
	if fields == nil || fields.Empty() {
		return true // the chain drops an entry with no fields
	}
	raw, err := fields.ToJSON()
	if err != nil {
		return false
	}
	if manager == "" {
		manager = "unknown"
	}
	accessor.SetManagedFields([]metav1.ManagedFieldsEntry{{
		Manager:    manager,
		Operation:  metav1.ManagedFieldsOperationUpdate,
		APIVersion: f.gvk.GroupVersion().String(),
		Time:       &metav1.Time{Time: time.Now().UTC()},
		FieldsType: "FieldsV1",
		FieldsV1:   &metav1.FieldsV1{Raw: raw},
	}})
	return true
}

// plainVersioned is the chain's conversion of an object (a create's or
// an update's) to the kind's version, when it is a plain one: built-in objects of the kind's own type
// only get their apiVersion and kind set (in place, as the chain does);
// custom resources must already be of the kind (the chain types a copy
// that differs in nothing else).
func (f *FieldManager) plainVersioned(newObj runtime.Object) (runtime.Object, bool) {
	if f.custom {
		u, ok := newObj.(*unstructured.Unstructured)
		return u, ok && u.GroupVersionKind() == f.gvk
	}
	versioned, err := f.objectConvertor().ConvertToVersion(newObj, f.gvk.GroupVersion())
	if err != nil || versioned != newObj || newObj.GetObjectKind().GroupVersionKind() != f.gvk {
		return nil, false
	}
	return versioned, true
}

// createdFields returns the fields SMD's Compare of the baseline's empty
// object with obj finds added or modified, without the stripped ones (nil:
// none).
func createdFields(b *createBaseline, obj value.Value) (*fieldpath.Set, error) {
	w := walkers.Get().(*createFieldsWalker)
	defer walkers.Put(w)
	w.schema = b.schema
	changed, fields, err := w.node(b.empty, obj, b.typeRef, stripped)
	w.schema = nil
	if err != nil {
		return nil, err
	}
	if changed { // the object as a whole, as atomic objects would be
		return nil, errNoShortcut
	}
	return fields, nil
}

// walkers keep their allocators' free lists from one create to the next.
var walkers = sync.Pool{New: func() any {
	return &createFieldsWalker{allocator: value.NewFreelistAllocator()}
}}

// createFieldsWalker follows SMD's compare walker for a left-hand side
// that is absent or the empty object's, keeping only what it adds to
// Added and Modified. Anything the empty object cannot make it meet (a
// non-empty list on the left, atoms of different kinds) is errNoShortcut.
// Sets are built bottom up and only when not empty: the chain's hold no
// empty children.
type createFieldsWalker struct {
	schema    *smdschema.Schema
	allocator value.Allocator
}

// node visits obj (never nil) at some path with live the empty object's
// value there (nil when absent). It reports whether the path itself is
// added or modified and returns the changed fields below it (nil: none).
// strip holds what stripMeta removes below the path.
func (w *createFieldsWalker) node(live, obj value.Value, tr smdschema.TypeRef, strip *strippedFields) (bool, *fieldpath.Set, error) {
	a, ok := w.schema.Resolve(tr)
	if !ok {
		return false, nil, errNoShortcut
	}
	atom := deduceAtom(a, obj)
	if live != nil {
		// Both narrowed from a: the same kind has the same pointers.
		if liveAtom := deduceAtom(a, live); liveAtom != atom {
			return false, nil, errNoShortcut
		}
	}
	// SMD's order of preference for atoms of several kinds.
	switch {
	case atom.Map != nil:
		return w.mapNode(atom.Map, live, obj, strip)
	case atom.Scalar != nil:
		// Validation while typing obj already checked the scalar.
		return w.leafChanged(live, obj), nil, nil
	case atom.List != nil:
		return w.listNode(atom.List, live, obj)
	}
	return false, nil, errNoShortcut
}

// deduceAtom narrows an atom of several kinds (deduced, untyped schemas)
// to the one v has, as SMD does.
func deduceAtom(a smdschema.Atom, v value.Value) smdschema.Atom {
	switch {
	case v == nil:
	case v.IsFloat(), v.IsInt(), v.IsString(), v.IsBool():
		if a.Scalar != nil {
			return smdschema.Atom{Scalar: a.Scalar}
		}
	case v.IsList():
		if a.List != nil {
			return smdschema.Atom{List: a.List}
		}
	case v.IsMap():
		if a.Map != nil {
			return smdschema.Atom{Map: a.Map}
		}
	}
	return a
}

// leafChanged tells whether Compare puts a leaf (scalar, atomic, or empty
// on both sides) in Added or Modified.
func (w *createFieldsWalker) leafChanged(live, obj value.Value) bool {
	return live == nil || !value.EqualsUsing(w.allocator, obj, live)
}

func (w *createFieldsWalker) mapNode(t *smdschema.Map, live, obj value.Value, strip *strippedFields) (bool, *fieldpath.Set, error) {
	objMap, err := w.mapOf(obj)
	if err != nil {
		return false, nil, err
	}
	if objMap != nil {
		defer w.allocator.Free(objMap)
	}
	liveMap, err := w.mapOf(live)
	if err != nil {
		return false, nil, err
	}
	if liveMap != nil {
		defer w.allocator.Free(liveMap)
	}
	if t.ElementRelationship == smdschema.Atomic || (isEmptyMap(liveMap) && isEmptyMap(objMap)) {
		return w.leafChanged(live, obj), nil, nil
	}
	if objMap == nil { // null over a non-empty map: removals only
		return false, nil, nil
	}
	var fields *fieldpath.Set
	// Fields only the empty object has are Compare's removals: skipped.
	objMap.IterateUsing(w.allocator, func(key string, v value.Value) bool {
		fieldType := t.ElementType
		if sf, ok := t.FindField(key); ok {
			fieldType = sf.Type
		}
		var liveField value.Value
		if liveMap != nil {
			if lv, ok := liveMap.GetUsing(w.allocator, key); ok {
				defer w.allocator.Free(lv)
				liveField = lv
			}
		}
		var stripBelow *strippedFields
		if strip != nil {
			stripBelow = strip.below[key]
		}
		changed, below, nodeErr := w.node(liveField, v, fieldType, stripBelow)
		if nodeErr != nil {
			err = nodeErr
			return false
		}
		changed = changed && (strip == nil || !strip.here[key])
		if !changed && below == nil {
			return true
		}
		name := key
		pe := fieldpath.PathElement{FieldName: &name}
		if fields == nil {
			fields = &fieldpath.Set{}
		}
		if changed {
			fields.Members.Insert(pe)
		}
		if below != nil {
			*fields.Children.Descend(pe) = *below
		}
		return true
	})
	if err != nil {
		return false, nil, err
	}
	return live == nil, fields, nil
}

func (w *createFieldsWalker) listNode(t *smdschema.List, live, obj value.Value) (bool, *fieldpath.Set, error) {
	objList, err := w.listOf(obj)
	if err != nil {
		return false, nil, err
	}
	if objList != nil {
		defer w.allocator.Free(objList)
	}
	liveList, err := w.listOf(live)
	if err != nil {
		return false, nil, err
	}
	if liveList != nil {
		defer w.allocator.Free(liveList)
	}
	if t.ElementRelationship == smdschema.Atomic || (isEmptyList(liveList) && isEmptyList(objList)) {
		return w.leafChanged(live, obj), nil, nil
	}
	if !isEmptyList(liveList) {
		// Items would have to be matched with the empty object's: empty
		// objects have no such lists.
		return false, nil, errNoShortcut
	}
	n := objList.Length()
	items := make([]value.Value, n)
	pes := make([]fieldpath.PathElement, n)
	var seen, repeated fieldpath.PathElementSet
	for i := range n {
		items[i] = objList.At(i) // kept by set path elements: not pooled
		pe, err := w.itemPathElement(t, items[i])
		if err != nil {
			return false, nil, err
		}
		pes[i] = pe
		if n > 1 {
			if seen.Has(pe) {
				repeated.Insert(pe)
			}
			seen.Insert(pe)
		}
	}
	fields := &fieldpath.Set{}
	for i, pe := range pes {
		// New items are added; Compare adds a repeated key once, as a
		// whole.
		fields.Members.Insert(pe)
		if repeated.Has(pe) {
			continue
		}
		_, below, err := w.node(nil, items[i], t.ElementType, nil)
		if err != nil {
			return false, nil, err
		}
		if below != nil {
			*fields.Children.Descend(pe) = *below
		}
	}
	return live == nil, fields, nil
}

// itemPathElement names a list item as SMD does: by its key fields (or
// their schema defaults) in keyed lists, by value in sets.
func (w *createFieldsWalker) itemPathElement(t *smdschema.List, item value.Value) (fieldpath.PathElement, error) {
	if t.ElementRelationship != smdschema.Associative || item.IsNull() {
		return fieldpath.PathElement{}, errNoShortcut
	}
	if len(t.Keys) == 0 {
		if item.IsMap() || item.IsList() {
			return fieldpath.PathElement{}, errNoShortcut
		}
		return fieldpath.PathElement{Value: &item}, nil
	}
	if !item.IsMap() {
		return fieldpath.PathElement{}, errNoShortcut
	}
	m := item.AsMapUsing(w.allocator)
	defer w.allocator.Free(m)
	keys := make(value.FieldList, 0, len(t.Keys))
	for _, name := range t.Keys {
		if v, ok := m.Get(name); ok {
			keys = append(keys, value.Field{Name: name, Value: v})
			continue
		}
		element, ok := w.schema.Resolve(t.ElementType)
		if !ok || element.Map == nil {
			return fieldpath.PathElement{}, errNoShortcut
		}
		if sf, _ := element.Map.FindField(name); sf.Default != nil {
			keys = append(keys, value.Field{Name: name, Value: value.NewValueInterface(sf.Default)})
		}
	}
	if len(keys) == 0 {
		return fieldpath.PathElement{}, errNoShortcut
	}
	keys.Sort()
	return fieldpath.PathElement{Key: &keys}, nil
}

// mapOf is v as a map, nil for an absent or null v, as Compare reads it.
func (w *createFieldsWalker) mapOf(v value.Value) (value.Map, error) {
	switch {
	case v == nil || v.IsNull():
		return nil, nil
	case v.IsMap():
		return v.AsMapUsing(w.allocator), nil
	}
	return nil, errNoShortcut
}

func (w *createFieldsWalker) listOf(v value.Value) (value.List, error) {
	switch {
	case v == nil || v.IsNull():
		return nil, nil
	case v.IsList():
		return v.AsListUsing(w.allocator), nil
	}
	return nil, errNoShortcut
}

func isEmptyMap(m value.Map) bool   { return m == nil || m.Empty() }
func isEmptyList(l value.List) bool { return l == nil || l.Length() == 0 }

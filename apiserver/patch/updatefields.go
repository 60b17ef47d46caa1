package patch

import (
	"bytes"
	"time"
	"unicode/utf8"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"
	smdschema "sigs.k8s.io/structured-merge-diff/v6/schema"
	"sigs.k8s.io/structured-merge-diff/v6/typed"
	"sigs.k8s.io/structured-merge-diff/v6/value"
)

// An update's managedFields through apimachinery's field manager were two
// fifths of an update's handler CPU. The usual update of a built-in object
// is by its only manager, through Update, and that manager owns exactly
// the object's fields; updateEntry records that case without the chain.
// With the same fields before and after (some values changed) the entry
// stays and its time is stamped if a value changed, in three walks of the
// two objects; fields added or removed, or items of keyed lists changed,
// take SMD's Compare and the set arithmetic below. Every other update
// goes to the chain.
//
// Along the chain (createfields.go has the rest), with live's only entry
// manager's Update of the main resource owning set S: the structured merge
// runs as a fresh "current-operation" manager; SMD's Compare(live, new)
// gives Added, Modified and Removed; manager keeps S less all three;
// current-operation gets Added and Modified less stripMeta's fields, and
// if that is not empty it is merged into manager's set and manager's time
// stamped. So manager ends with S less Removed, plus current-operation's
// set; with nothing added or removed and S exactly the objects' fields,
// that is S again, stamped iff a value changed outside stripMeta's fields.

// updateEntry records manager's update of live to newObj in newObj's
// managedFields as the chain would (only the time stamped can differ, as
// between two calls), or reports false and leaves the managedFields as
// they were. live is the caller's private copy: like the chain, this sets
// its apiVersion and kind; its managedFields are left as they came.
func (f *FieldManager) updateEntry(live, newObj runtime.Object, manager string) bool {
	if f.custom || !utf8.ValidString(manager) {
		return false
	}
	b := f.createBaseline()
	if b == nil {
		return false
	}
	if manager == "" {
		manager = "unknown" // as the chain names an unnamed manager
	}
	liveAccessor, err := meta.Accessor(live)
	if err != nil {
		return false
	}
	newAccessor, err := meta.Accessor(newObj)
	if err != nil {
		return false
	}
	entries := liveAccessor.GetManagedFields()
	if len(entries) != 1 || !ownUpdateEntry(entries[0], manager, f.gvk.GroupVersion().String()) {
		return false
	}
	entry := entries[0]
	// The chain reads managedFields sent with the update in place of
	// live's; sent back unchanged (or not at all) they are live's.
	sent := newAccessor.GetManagedFields()
	if len(sent) > 0 && (len(sent) != 1 || !sameEntry(sent[0], entry)) {
		return false
	}
	versionedNew, ok := f.plainVersioned(newObj)
	if !ok {
		return false
	}
	versionedLive, ok := f.plainVersioned(live)
	if !ok {
		return false
	}
	// Both are typed without managedFields, which stripMeta's fields hold.
	liveAccessor.SetManagedFields(nil)
	defer liveAccessor.SetManagedFields(entries)
	newAccessor.SetManagedFields(nil)
	recorded := false
	defer func() {
		if !recorded {
			newAccessor.SetManagedFields(sent)
		}
	}()
	if stamp, ok := f.scalarsChangedWithin(entry.FieldsV1.Raw, versionedLive, versionedNew); ok {
		if stamp {
			entry.Time = &metav1.Time{Time: time.Now().UTC()}
		}
		newAccessor.SetManagedFields([]metav1.ManagedFieldsEntry{entry})
		recorded = true
		return true
	}
	tvNew, ok := typedLikeBaseline(b, versionedNew)
	if !ok {
		return false
	}
	tvLive, ok := typedLikeBaseline(b, versionedLive)
	if !ok {
		return false
	}
	liveFields, err := createdFields(b, tvLive.AsValue())
	if err != nil || liveFields == nil {
		return false
	}
	raw, err := liveFields.ToJSON()
	if err != nil || !bytes.Equal(raw, entry.FieldsV1.Raw) {
		return false // manager's set is not exactly live's fields
	}
	var changed bool
	fields, err := createdFields(b, tvNew.AsValue())
	sameFields := err == nil && fields != nil && fields.Equals(liveFields)
	if sameFields {
		changed, err = valuesChanged(b, tvLive.AsValue(), tvNew.AsValue())
	}
	if !sameFields || err != nil { // fields added or removed, or items of a keyed list changed
		if raw, changed, err = comparedEntry(tvLive, tvNew, liveFields); err != nil {
			return false
		}
	}
	entry.FieldsV1 = &metav1.FieldsV1{Raw: raw}
	if changed {
		entry.Time = &metav1.Time{Time: time.Now().UTC()}
	}
	newAccessor.SetManagedFields([]metav1.ManagedFieldsEntry{entry})
	recorded = true
	return true
}

// strippedSet is stripped as a set, which stripMeta takes from every
// entry.
var strippedSet = func() *fieldpath.Set {
	set := &fieldpath.Set{}
	var add func(prefix fieldpath.Path, strip *strippedFields)
	add = func(prefix fieldpath.Path, strip *strippedFields) {
		for name := range strip.here {
			set.Insert(append(prefix.Copy(), fieldpath.PathElement{FieldName: &name}))
		}
		for name, below := range strip.below {
			add(append(prefix.Copy(), fieldpath.PathElement{FieldName: &name}), below)
		}
	}
	add(nil, stripped)
	return set
}()

// comparedEntry is manager's set after the chain's update of live to obj
// when manager owned exactly live's fields (owned), with SMD's own
// Compare: owned less Removed, joined by Added and Modified less
// stripMeta's fields (current-operation's set, whose fields it took from
// manager as conflicts come back with it), and whether that last part
// stamps the time. A set left empty, which the chain drops, is
// errNoShortcut.
func comparedEntry(live, obj *typed.TypedValue, owned *fieldpath.Set) ([]byte, bool, error) {
	c, err := live.Compare(obj)
	if err != nil {
		return nil, false, errNoShortcut
	}
	taken := c.Modified.Union(c.Added).Difference(strippedSet)
	set := owned.Difference(c.Removed).Union(taken)
	if set.Empty() {
		return nil, false, errNoShortcut
	}
	raw, err := set.ToJSON()
	if err != nil {
		return nil, false, errNoShortcut
	}
	return raw, !taken.Empty(), nil
}

// ownUpdateEntry tells whether e is manager's Update entry of the main
// resource at apiVersion, in the form the chain writes.
func ownUpdateEntry(e metav1.ManagedFieldsEntry, manager, apiVersion string) bool {
	return e.Manager == manager && e.Operation == metav1.ManagedFieldsOperationUpdate &&
		e.APIVersion == apiVersion && e.Subresource == "" && e.FieldsType == "FieldsV1" &&
		e.FieldsV1 != nil && e.Time != nil
}

func sameEntry(a, b metav1.ManagedFieldsEntry) bool {
	return a.Manager == b.Manager && a.Operation == b.Operation && a.APIVersion == b.APIVersion &&
		a.Subresource == b.Subresource && a.FieldsType == b.FieldsType &&
		a.Time != nil && b.Time != nil && a.Time.Equal(b.Time) &&
		a.FieldsV1 != nil && b.FieldsV1 != nil && bytes.Equal(a.FieldsV1.Raw, b.FieldsV1.Raw)
}

// typedLikeBaseline types obj as the chain does, if it comes out of the
// baseline's schema and type.
func typedLikeBaseline(b *createBaseline, obj runtime.Object) (*typed.TypedValue, bool) {
	tv, err := b.converter.ObjectToTyped(obj, typed.AllowDuplicates)
	if err != nil || tv.Schema() != b.schema {
		return nil, false
	}
	if tr := tv.TypeRef(); !tr.Equals(&b.typeRef) {
		return nil, false
	}
	return tv, true
}

// valuesChanged tells whether Compare(live, obj) finds a field modified
// outside stripMeta's, for objects with the same fields. A non-atomic list
// whose items changed is errNoShortcut: Compare matches its items by key,
// which this walk does not repeat.
func valuesChanged(b *createBaseline, live, obj value.Value) (bool, error) {
	w := walkers.Get().(*createFieldsWalker)
	defer walkers.Put(w)
	w.schema = b.schema
	defer func() { w.schema = nil }()
	return w.changed(live, obj, b.typeRef, stripped)
}

func (w *createFieldsWalker) changed(live, obj value.Value, tr smdschema.TypeRef, strip *strippedFields) (bool, error) {
	a, ok := w.schema.Resolve(tr)
	if !ok {
		return false, errNoShortcut
	}
	atom := deduceAtom(a, obj)
	if deduceAtom(a, live) != atom {
		return false, errNoShortcut
	}
	switch {
	case atom.Map != nil:
		if atom.Map.ElementRelationship == smdschema.Atomic {
			return !value.EqualsUsing(w.allocator, live, obj), nil
		}
		return w.mapChanged(atom.Map, live, obj, strip)
	case atom.Scalar != nil:
		return !value.EqualsUsing(w.allocator, live, obj), nil
	case atom.List != nil:
		same := value.EqualsUsing(w.allocator, live, obj)
		if !same && atom.List.ElementRelationship != smdschema.Atomic {
			return false, errNoShortcut
		}
		return !same, nil
	}
	return false, errNoShortcut
}

func (w *createFieldsWalker) mapChanged(t *smdschema.Map, live, obj value.Value, strip *strippedFields) (bool, error) {
	objMap, err := w.mapOf(obj)
	if err != nil {
		return false, err
	}
	if objMap != nil {
		defer w.allocator.Free(objMap)
	}
	liveMap, err := w.mapOf(live)
	if err != nil {
		return false, err
	}
	if liveMap != nil {
		defer w.allocator.Free(liveMap)
	}
	if objMap == nil || liveMap == nil {
		if objMap == nil && liveMap == nil {
			return false, nil
		}
		return false, errNoShortcut
	}
	if unstrippedLength(objMap, strip) != unstrippedLength(liveMap, strip) {
		return false, errNoShortcut // a key only one side has
	}
	changed := false
	objMap.IterateUsing(w.allocator, func(key string, v value.Value) bool {
		var below *strippedFields
		if strip != nil {
			below = strip.below[key]
			if strip.here[key] && below == nil {
				return true // stripMeta's: whatever it holds
			}
		}
		lv, ok := liveMap.GetUsing(w.allocator, key)
		if !ok {
			err = errNoShortcut
			return false
		}
		defer w.allocator.Free(lv)
		fieldType := t.ElementType
		if sf, ok := t.FindField(key); ok {
			fieldType = sf.Type
		}
		changed, err = w.changed(lv, v, fieldType, below)
		return err == nil && !changed
	})
	if err != nil {
		return false, err
	}
	return changed, nil
}

// unstrippedLength is how many of m's keys are not stripMeta's.
func unstrippedLength(m value.Map, strip *strippedFields) int {
	n := m.Length()
	if strip == nil {
		return n
	}
	for key := range strip.here {
		if _, ok := strip.below[key]; !ok && m.Has(key) {
			n--
		}
	}
	return n
}

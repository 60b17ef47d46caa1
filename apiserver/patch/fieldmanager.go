package patch

import (
	"bytes"
	"fmt"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/managedfields"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"
	"sigs.k8s.io/yaml"

	"github.com/devplane/devplane/apiserver/builtin"
)

// FieldManager keeps metadata.managedFields of one kind as kube-apiserver
// does: an Update entry for every create, update and patch, server-side
// apply with conflict detection, and the client-side to server-side apply
// upgrade for the "kubectl" manager. Safe for concurrent use.
type FieldManager struct {
	gvk       schema.GroupVersionKind
	custom    bool
	converter func() (managedfields.TypeConverter, error)
	defaulter runtime.ObjectDefaulter

	mu            sync.Mutex
	bySubresource map[string]*managedfields.FieldManager
	// resets are, per subresource ("" the main resource), the fields a
	// write there resets (kube's GetResetFields of the kind's strategy for
	// it: the status on the main resource, the spec on /status): never
	// owned by that writer, never in conflict.
	resets map[string]*fieldpath.Set

	baselineOnce sync.Once
	baseline     *createBaseline // nil: creates take the general path
}

var builtinFieldManagers sync.Map // schema.GroupVersionKind → *FieldManager

// BuiltinFieldManager returns the FieldManager of a built-in kind (one per
// kind for the process). The kind's type converter is built on first use.
func BuiltinFieldManager(gvk schema.GroupVersionKind) *FieldManager {
	if f, ok := builtinFieldManagers.Load(gvk); ok {
		return f.(*FieldManager)
	}
	f, _ := builtinFieldManagers.LoadOrStore(gvk, &FieldManager{
		gvk:       gvk,
		converter: func() (managedfields.TypeConverter, error) { return BuiltinKindTypeConverter(gvk) },
		defaulter: kindDefaulter(gvk),
	})
	return f.(*FieldManager)
}

// NewCustomFieldManager returns a FieldManager for a custom resource of gvk,
// typing objects with the converter that converter returns, called once, on
// the first apply or update (nil: a deduced converter, every field atomic).
func NewCustomFieldManager(gvk schema.GroupVersionKind, converter func() managedfields.TypeConverter) *FieldManager {
	return &FieldManager{
		gvk:    gvk,
		custom: true,
		converter: sync.OnceValues(func() (managedfields.TypeConverter, error) {
			if converter != nil {
				if tc := converter(); tc != nil {
					return tc, nil
				}
			}
			return managedfields.NewDeducedTypeConverter(), nil
		}),
		defaulter: noDefaults{},
	}
}

// forSubresource returns the apimachinery field manager recording entries
// for subresource ("" for the main resource, "status", "scale").
func (f *FieldManager) forSubresource(subresource string) (*managedfields.FieldManager, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if m, ok := f.bySubresource[subresource]; ok {
		return m, nil
	}
	tc, err := f.converter()
	if err != nil {
		return nil, fmt.Errorf("building type converter: %w", err)
	}
	var m *managedfields.FieldManager
	gv := f.gvk.GroupVersion()
	var resets map[fieldpath.APIVersion]fieldpath.Filter
	if set := f.resets[subresource]; set != nil {
		resets = map[fieldpath.APIVersion]fieldpath.Filter{fieldpath.APIVersion(gv.String()): fieldpath.NewExcludeSetFilter(set)}
	}
	if f.custom {
		m, err = managedfields.NewDefaultCRDFieldManager(tc, f.objectConvertor(), f.defaulter, unstructuredCreater{}, f.gvk, gv, subresource, resets)
	} else {
		m, err = managedfields.NewDefaultFieldManager(tc, f.objectConvertor(), f.defaulter, builtin.Scheme, f.gvk, gv, subresource, resets)
	}
	if err != nil {
		return nil, err
	}
	if f.bySubresource == nil {
		f.bySubresource = map[string]*managedfields.FieldManager{}
	}
	f.bySubresource[subresource] = m
	return m, nil
}

// ResetOn names the fields a write to subresource ("" the main resource,
// "status") resets, as paths such as "spec" or "metadata.labels": its
// writers neither own them nor conflict on them, as in kube. Called when
// the kind is served; the same paths again change nothing.
func (f *FieldManager) ResetOn(subresource string, paths ...string) {
	set := &fieldpath.Set{}
	for _, p := range paths {
		var path fieldpath.Path
		for _, name := range strings.Split(p, ".") {
			path = append(path, fieldpath.PathElement{FieldName: &name})
		}
		set.Insert(path)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if old := f.resets[subresource]; old != nil && old.Equals(set) {
		return
	}
	if f.resets == nil {
		f.resets = map[string]*fieldpath.Set{}
	}
	f.resets[subresource] = set
	delete(f.bySubresource, subresource) // built again with them
}

// UpdateManagedFields records an Update by manager in newObj's managedFields
// for a create (live nil), update or non-apply patch, and returns the object
// to store. managedFields sent by the client are kept when they decode, as
// in kube; an empty list resets them. Use ManagerFromUserAgent when the
// request names no fieldManager.
func (f *FieldManager) UpdateManagedFields(live, newObj runtime.Object, manager, subresource string) (runtime.Object, error) {
	// Most creates: the chain's entry, computed for well under half its cost.
	if live == nil && subresource == "" && f.createEntry(newObj, manager) {
		return newObj, nil
	}
	// Most updates of built-in objects: the same, for a fraction of it.
	if live != nil && subresource == "" && f.updateEntry(live, newObj, manager) {
		return newObj, nil
	}
	m, err := f.forSubresource(subresource)
	if err != nil {
		return nil, asStatus(err)
	}
	if live == nil {
		live = f.newEmpty()
	}
	out, err := m.Update(live, newObj, manager)
	return out, asStatus(err)
}

// ApplyPatch performs a server-side apply of body (YAML or JSON) by manager
// onto live, or onto an empty object when live is nil (create on apply).
// Conflicts with other managers are kube's 409 with a FieldManagerConflict
// cause per field, unless force takes the fields over. Run CheckApplyBody
// afterwards for fieldValidation.
func (f *FieldManager) ApplyPatch(live runtime.Object, body []byte, manager string, force bool, subresource string) (runtime.Object, error) {
	if manager == "" {
		return nil, apierrors.NewInvalid(schema.GroupKind{Group: metav1.GroupName, Kind: "PatchOptions"}, "", field.ErrorList{
			field.Required(field.NewPath("fieldManager"), "is required for apply patch"),
		})
	}
	if errs := validation.ValidateFieldManager(manager, field.NewPath("fieldManager")); len(errs) > 0 {
		return nil, apierrors.NewInvalid(schema.GroupKind{Group: metav1.GroupName, Kind: "PatchOptions"}, "", errs)
	}
	applied := &unstructured.Unstructured{Object: map[string]any{}}
	if err := yaml.Unmarshal(body, &applied.Object); err != nil {
		return nil, apierrors.NewBadRequest(fmt.Sprintf("error decoding patch: %v", err))
	}
	if applied.Object == nil { // an empty or "null" body
		applied.Object = map[string]any{}
	}
	m, err := f.forSubresource(subresource)
	if err != nil {
		return nil, asStatus(err)
	}
	if live == nil {
		live = f.newEmpty()
	}
	out, err := m.Apply(live, applied, manager, force)
	return out, asStatus(err)
}

// objectConvertor converts objects to the kind's version for typing.
func (f *FieldManager) objectConvertor() runtime.ObjectConvertor {
	if f.custom {
		return unstructuredConvertor{}
	}
	return runtime.UnsafeObjectConvertor(builtin.Scheme)
}

func (f *FieldManager) newEmpty() runtime.Object {
	if f.custom {
		u := &unstructured.Unstructured{Object: map[string]any{}}
		u.SetGroupVersionKind(f.gvk)
		return u
	}
	return newObject(f.gvk)
}

// ManagerFromUserAgent is the manager kube records for requests without a
// fieldManager: the User-Agent up to its first "/", printable characters
// only, at most 128 bytes ("kubectl-edit/v1.32.0 (linux/amd64) ..." →
// "kubectl-edit").
func ManagerFromUserAgent(userAgent string) string {
	prefix, _, _ := strings.Cut(userAgent, "/")
	var buf bytes.Buffer
	for _, r := range prefix {
		if !unicode.IsPrint(r) {
			continue
		}
		if buf.Len()+utf8.RuneLen(r) > validation.FieldManagerMaxLength {
			break
		}
		buf.WriteRune(r)
	}
	return buf.String()
}

// kindDefaulter applies the built-in kind's defaults to applied objects,
// so that fields set by defaulting do not show up as changes.
func kindDefaulter(gvk schema.GroupVersionKind) runtime.ObjectDefaulter {
	for _, k := range builtin.Kinds() {
		if k.GroupVersion == gvk.GroupVersion() && k.Kind == gvk.Kind && k.Default != nil {
			return defaultFunc(k.Default)
		}
	}
	return noDefaults{}
}

type defaultFunc func(runtime.Object)

func (d defaultFunc) Default(obj runtime.Object) { d(obj) }

type noDefaults struct{}

func (noDefaults) Default(runtime.Object) {}

// unstructuredConvertor serves custom resources, stored in the version they
// are served in: converting only stamps the target version.
type unstructuredConvertor struct{}

func (unstructuredConvertor) Convert(in, out, context any) error {
	return fmt.Errorf("unstructured conversion from %T to %T is not supported", in, out)
}

func (unstructuredConvertor) ConvertToVersion(in runtime.Object, target runtime.GroupVersioner) (runtime.Object, error) {
	u, ok := in.(*unstructured.Unstructured)
	if !ok {
		return nil, fmt.Errorf("custom resources must be unstructured, got %T", in)
	}
	gvk, ok := target.KindForGroupVersionKinds([]schema.GroupVersionKind{u.GroupVersionKind()})
	if !ok {
		return nil, fmt.Errorf("%v cannot be converted to %v", u.GroupVersionKind(), target)
	}
	out := u.DeepCopy()
	out.SetGroupVersionKind(gvk)
	return out, nil
}

func (unstructuredConvertor) ConvertFieldLabel(gvk schema.GroupVersionKind, label, value string) (string, string, error) {
	return label, value, nil
}

type unstructuredCreater struct{}

func (unstructuredCreater) New(gvk schema.GroupVersionKind) (runtime.Object, error) {
	u := &unstructured.Unstructured{Object: map[string]any{}}
	u.SetGroupVersionKind(gvk)
	return u, nil
}

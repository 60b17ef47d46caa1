// Package historyview turns an object's stored versions (apiserver/history)
// into what `devplane history` prints: YAML, the unified diff between
// consecutive versions, and the changes of one field.
package historyview

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/pmezard/go-difflib/difflib"
	"sigs.k8s.io/yaml"

	"github.com/devplane/devplane/apiserver/history"
)

// YAML is a version's object as YAML, without metadata.resourceVersion
// (each version's header names it) and, unless keepManaged,
// metadata.managedFields. A deletion is "".
func YAML(v history.Version, keepManaged bool) (string, error) {
	if v.Object == nil {
		return "", nil
	}
	var obj map[string]any
	if err := json.Unmarshal(v.Object, &obj); err != nil {
		return "", fmt.Errorf("version %s: %w", v.ResourceVersion, err)
	}
	if md, ok := obj["metadata"].(map[string]any); ok {
		delete(md, "resourceVersion")
		if !keepManaged {
			delete(md, "managedFields")
		}
	}
	out, err := yaml.Marshal(obj)
	if err != nil {
		return "", fmt.Errorf("version %s: %w", v.ResourceVersion, err)
	}
	return string(out), nil
}

// Diff is the unified diff (three lines of context) from text a to b,
// "" when they are equal.
func Diff(a, b, fromLabel, toLabel string) string {
	out, err := difflib.GetUnifiedDiffString(difflib.UnifiedDiff{
		A: lines(a), B: lines(b),
		FromFile: fromLabel, ToFile: toLabel, Context: 3,
	})
	if err != nil { // only a failing writer errs, and it writes to memory
		return ""
	}
	return out
}

// lines are s's lines, each with its newline; none for "" (a creation
// is a diff from nothing, a deletion one to nothing).
func lines(s string) []string {
	if s == "" {
		return nil
	}
	return difflib.SplitLines(strings.TrimSuffix(s, "\n"))
}

// Field is a parsed field path: spec.replicas,
// spec.template.spec.containers[0].image, and, with dots in a key
// escaped, metadata.labels.app\.kubernetes\.io/name.
type Field struct {
	path  string
	steps []step
}

// step is a map key, or a list index when key is "" and index >= 0.
type step struct {
	key   string
	index int
}

func (f Field) String() string { return f.path }

// ParseField parses path.
func ParseField(path string) (Field, error) {
	f := Field{path: path}
	bad := func(why string) (Field, error) {
		return Field{}, fmt.Errorf("field %q: %s (write it as spec.replicas or spec.containers[0].image)", path, why)
	}
	var key strings.Builder
	inKey := false // key holds a key being read
	endKey := func() {
		if inKey {
			f.steps = append(f.steps, step{key: key.String(), index: -1})
			key.Reset()
			inKey = false
		}
	}
	for i := 0; i < len(path); i++ {
		switch c := path[i]; c {
		case '\\':
			if i+1 == len(path) {
				return bad("it ends with \\")
			}
			i++
			key.WriteByte(path[i])
			inKey = true
		case '.':
			if !inKey && (i == 0 || path[i-1] != ']') {
				return bad("an empty key")
			}
			endKey()
		case '[':
			endKey()
			end := strings.IndexByte(path[i:], ']')
			if end < 0 {
				return bad("a [ without ]")
			}
			n, err := strconv.Atoi(path[i+1 : i+end])
			if err != nil || n < 0 {
				return bad("a list index must be a number")
			}
			f.steps = append(f.steps, step{index: n})
			i += end
		default:
			key.WriteByte(c)
			inKey = true
		}
	}
	if strings.HasSuffix(path, ".") {
		return bad("an empty key")
	}
	endKey()
	if len(f.steps) == 0 {
		return bad("it is empty")
	}
	if f.steps[0].key == "" {
		return bad("it starts with a list index")
	}
	return f, nil
}

// valueIn is the value at f in obj (decoded JSON), and whether it is set.
func (f Field) valueIn(obj any) (any, bool) {
	for _, s := range f.steps {
		if s.key != "" {
			m, ok := obj.(map[string]any)
			if !ok {
				return nil, false
			}
			if obj, ok = m[s.key]; !ok {
				return nil, false
			}
			continue
		}
		l, ok := obj.([]any)
		if !ok || s.index >= len(l) {
			return nil, false
		}
		obj = l[s.index]
	}
	return obj, true
}

// Unset and Deleted stand for a field's value where it has none.
const (
	Unset   = "<unset>"
	Deleted = "<deleted>"
)

// Change is one version that changed a field: Version is its index in
// the versions, Old and New the field's value before and after.
type Change struct {
	Version  int
	Old, New string
}

// Changes are the versions (oldest first) in which f's value changed,
// with the value before and after: the object's creation when it set f,
// each write that changed it, its deletion. The oldest version, when it
// is not a creation (older ones were compacted away), is where the
// values start, not a change: who set its value is not known.
func Changes(versions []history.Version, f Field) ([]Change, error) {
	var changes []Change
	prev, known := Unset, false // the value before the version at hand
	for i, v := range versions {
		if v.Deleted {
			if known && prev != Unset {
				changes = append(changes, Change{Version: i, Old: prev, New: Deleted})
			}
			prev, known = Unset, true
			continue
		}
		var obj any
		if err := json.Unmarshal(v.Object, &obj); err != nil {
			return nil, fmt.Errorf("version %s: %w", v.ResourceVersion, err)
		}
		cur := Unset
		if value, ok := f.valueIn(obj); ok {
			cur = render(value)
		}
		if v.Created {
			prev, known = Unset, true
		}
		if known && cur != prev {
			changes = append(changes, Change{Version: i, Old: prev, New: cur})
		}
		prev, known = cur, true
	}
	return changes, nil
}

// render is a field's value as a person reads it: a string bare, anything
// else as compact JSON.
func render(v any) string {
	if s, ok := v.(string); ok {
		return s
	}
	out, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(out)
}

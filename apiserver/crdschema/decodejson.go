package crdschema

import (
	"bytes"
	"encoding/base64"
	"strconv"
	"strings"
	"time"
	"unicode/utf16"
	"unicode/utf8"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// DecodeCRDJSON decodes a CRD stored as JSON by the apimachinery JSON
// serializer into crd, which must be empty, in one pass. The reflection
// decoder spends most of a large CRD's decode time re-scanning schema
// subtrees (every JSONSchemaPropsOr* and JSON value has its own
// UnmarshalJSON); this one reads each byte once.
//
// It reports false, leaving crd empty, for anything whose result it does not
// reproduce exactly (a different apiVersion or kind, duplicate keys, invalid
// JSON or UTF-8, lone surrogates, values of unexpected types, numbers that
// do not fit): the caller then decodes with the codec, which also reports
// any error. When it reports true, crd is DeepEqual to what
// sigs.k8s.io/json's UnmarshalCaseSensitivePreserveInts gives for the same
// bytes (no defaulting: the versioning codec's defaulter runs after that).
func DecodeCRDJSON(data []byte, crd *apiextensionsv1.CustomResourceDefinition) (handled bool) {
	return DecodeCRDJSONLike(data, nil, crd)
}

// DecodeCRDJSONLike is DecodeCRDJSON given like (nil: none), a read-only
// CRD that data likely revises (the cached one). While data's UID and
// non-zero generation are like's, its spec is like's (kube bumps the
// generation with every spec change: status, finalizer and other metadata
// writes keep it), so the spec is only skipped over, and taken from like
// sharing its schemas (CopySharingSchemas). A CRD's status writes then
// decode a few hundred bytes instead of its schemas.
func DecodeCRDJSONLike(data []byte, like, crd *apiextensionsv1.CustomResourceDefinition) (handled bool) {
	*crd = apiextensionsv1.CustomResourceDefinition{}
	d := decoder{data: data, like: like}
	d.startSharing()
	defer d.stopSharing()
	defer func() {
		if r := recover(); r != nil {
			if _, ok := r.(notHandled); !ok && panicOnBug {
				panic(r)
			}
			*crd = apiextensionsv1.CustomResourceDefinition{}
			handled = false
		}
	}()
	d.crd(crd)
	d.ws()
	if d.i != len(d.data) {
		d.bail()
	}
	// The serializer creates another object (and converts) for other kinds.
	if crd.APIVersion != "apiextensions.k8s.io/v1" || crd.Kind != "CustomResourceDefinition" {
		d.bail()
	}
	return true
}

// panicOnBug makes a panic other than "not handled" crash, for tests; in
// production any panic just falls back to the codec.
var panicOnBug = false

// notHandled is panicked (and recovered in DecodeCRDJSON) to give up: it
// keeps every decoding step free of error plumbing.
type notHandled struct{}

// maxDepth is below encoding/json's nesting limit (10000), so anything the
// codec would reject as too deep is not handled here.
const maxDepth = 9000

type decoder struct {
	data    []byte
	i       int
	depth   int
	scratch []byte
	// tmp holds a temporary schema per nesting level (see tmpProps).
	tmp   []*apiextensionsv1.JSONSchemaProps
	level int
	// share finds equal subtrees decoded before (see decodeshare.go).
	share    *sharing
	shareBuf *[]int32
	// like: see DecodeCRDJSONLike.
	like *apiextensionsv1.CustomResourceDefinition
}

func (d *decoder) bail() { panic(notHandled{}) }

func (d *decoder) ws() {
	for d.i < len(d.data) {
		switch d.data[d.i] {
		case ' ', '\t', '\n', '\r':
			d.i++
		default:
			return
		}
	}
}

// peek skips whitespace and returns the next byte (0 at the end).
func (d *decoder) peek() byte {
	d.ws()
	if d.i >= len(d.data) {
		return 0
	}
	return d.data[d.i]
}

func (d *decoder) want(c byte) {
	if d.peek() != c {
		d.bail()
	}
	d.i++
}

// null consumes a null literal if one is next.
func (d *decoder) null() bool {
	if d.peek() == 'n' {
		d.literal("null")
		return true
	}
	return false
}

func (d *decoder) literal(lit string) {
	if len(d.data)-d.i < len(lit) || string(d.data[d.i:d.i+len(lit)]) != lit {
		d.bail()
	}
	d.i += len(lit)
}

// open consumes c ('{' or '['); next then walks the members until the
// matching close.
func (d *decoder) open(c byte) {
	d.want(c)
	d.depth++
	if d.depth > maxDepth {
		d.bail()
	}
}

// next reports whether another member follows, consuming the separating
// comma, or consumes close and reports false.
func (d *decoder) next(close byte, first *bool) bool {
	c := d.peek()
	if c == close {
		d.i++
		d.depth--
		return false
	}
	if !*first {
		if c != ',' {
			d.bail()
		}
		d.i++
	}
	*first = false
	return true
}

// key reads an object key and its colon. The result is valid until the
// next string is read.
func (d *decoder) key() []byte {
	if d.peek() != '"' {
		d.bail()
	}
	k := d.strBytes()
	d.want(':')
	return k
}

// seen marks field bit of a struct as read; a repeated key is not handled
// (the reflection decoder merges into what the first one set).
func (d *decoder) seen(mask *uint64, bit uint) {
	if *mask&(1<<bit) != 0 {
		d.bail()
	}
	*mask |= 1 << bit
}

// unknownKey skips the value of a key no field has. Matching is
// case-sensitive, as sigs.k8s.io/json's is.
func (d *decoder) unknownKey() { d.skip() }

// strBytes reads a string (the next byte is '"') and returns its unquoted
// bytes: a slice of the input when there are no escapes, else of scratch.
func (d *decoder) strBytes() []byte {
	start := d.i + 1
	i := start
	ascii := true
	for i < len(d.data) {
		c := d.data[i]
		switch {
		case c == '"':
			d.i = i + 1
			s := d.data[start:i]
			if !ascii && !utf8.Valid(s) {
				// The codec replaces invalid UTF-8 by U+FFFD.
				d.bail()
			}
			return s
		case c == '\\':
			return d.unescape(start, i)
		case c < 0x20:
			d.bail()
		case c >= utf8.RuneSelf:
			ascii = false
		}
		i++
	}
	d.bail()
	return nil
}

// unescape finishes a string with escapes that starts at start and has its
// first backslash at i.
func (d *decoder) unescape(start, i int) []byte {
	buf := append(d.scratch[:0], d.data[start:i]...)
	for i < len(d.data) {
		c := d.data[i]
		switch {
		case c == '"':
			d.i = i + 1
			if !utf8.Valid(buf) {
				d.bail()
			}
			d.scratch = buf
			return buf
		case c < 0x20:
			d.bail()
		case c != '\\':
			buf = append(buf, c)
			i++
			continue
		}
		if i+1 >= len(d.data) {
			d.bail()
		}
		switch d.data[i+1] {
		case '"', '\\', '/':
			buf = append(buf, d.data[i+1])
		case 'b':
			buf = append(buf, '\b')
		case 'f':
			buf = append(buf, '\f')
		case 'n':
			buf = append(buf, '\n')
		case 'r':
			buf = append(buf, '\r')
		case 't':
			buf = append(buf, '\t')
		case 'u':
			r := d.hex4(i + 2)
			i += 6
			if utf16.IsSurrogate(r) {
				// Only a valid pair; the codec turns lone halves into U+FFFD.
				if i+1 >= len(d.data) || d.data[i] != '\\' || d.data[i+1] != 'u' {
					d.bail()
				}
				r = utf16.DecodeRune(r, d.hex4(i+2))
				if r == utf8.RuneError {
					d.bail()
				}
				i += 6
			}
			buf = utf8.AppendRune(buf, r)
			continue
		default:
			d.bail()
		}
		i += 2
	}
	d.bail()
	return nil
}

func (d *decoder) hex4(i int) rune {
	if i+4 > len(d.data) {
		d.bail()
	}
	var r rune
	for _, c := range d.data[i : i+4] {
		switch {
		case '0' <= c && c <= '9':
			c -= '0'
		case 'a' <= c && c <= 'f':
			c = c - 'a' + 10
		case 'A' <= c && c <= 'F':
			c = c - 'A' + 10
		default:
			d.bail()
		}
		r = r*16 + rune(c)
	}
	return r
}

func (d *decoder) str() string {
	if d.peek() != '"' {
		d.bail()
	}
	return d.newString(d.strBytes())
}

// newString allocates each string alone, not in a chunk: the watch cache
// compacts a CRD's schema (CompactSchemas), and a chunk would keep the
// strings of every dropped duplicate alive with the one kept.
func (d *decoder) newString(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	return string(b)
}

// setStr sets *p from a string; null leaves it unchanged, as in
// encoding/json.
func setStr[T ~string](d *decoder, p *T) {
	if !d.null() {
		*p = T(d.str())
	}
}

func setStrPtr[T ~string](d *decoder, p **T) {
	if d.null() {
		*p = nil
		return
	}
	s := T(d.str())
	*p = &s
}

// internCommon returns a constant for the strings schemas repeat most (type and
// format values), saving an allocation each.
func (d *decoder) internCommon(b []byte) string {
	switch string(b) {
	case "string":
		return "string"
	case "object":
		return "object"
	case "array":
		return "array"
	case "integer":
		return "integer"
	case "boolean":
		return "boolean"
	case "number":
		return "number"
	case "int64":
		return "int64"
	case "int32":
		return "int32"
	case "date-time":
		return "date-time"
	case "atomic":
		return "atomic"
	case "map":
		return "map"
	case "set":
		return "set"
	case "granular":
		return "granular"
	}
	return d.newString(b)
}

func (d *decoder) setCommon(p *string) {
	if d.null() {
		return
	}
	if d.peek() != '"' {
		d.bail()
	}
	*p = d.internCommon(d.strBytes())
}

func (d *decoder) setBool(p *bool) {
	switch d.peek() {
	case 't':
		d.literal("true")
		*p = true
	case 'f':
		d.literal("false")
		*p = false
	case 'n':
		d.literal("null")
	default:
		d.bail()
	}
}

func (d *decoder) setBoolPtr(p **bool) {
	if d.null() {
		*p = nil
		return
	}
	b := new(bool)
	d.setBool(b)
	*p = b
}

// number reads a JSON number and returns its text.
func (d *decoder) number() []byte {
	d.ws()
	start := d.i
	i := d.i
	n := len(d.data)
	if i < n && d.data[i] == '-' {
		i++
	}
	switch {
	case i < n && d.data[i] == '0':
		i++
	case i < n && '1' <= d.data[i] && d.data[i] <= '9':
		for i < n && '0' <= d.data[i] && d.data[i] <= '9' {
			i++
		}
	default:
		d.bail()
	}
	if i < n && d.data[i] == '.' {
		i++
		if i >= n || d.data[i] < '0' || d.data[i] > '9' {
			d.bail()
		}
		for i < n && '0' <= d.data[i] && d.data[i] <= '9' {
			i++
		}
	}
	if i < n && (d.data[i] == 'e' || d.data[i] == 'E') {
		i++
		if i < n && (d.data[i] == '+' || d.data[i] == '-') {
			i++
		}
		if i >= n || d.data[i] < '0' || d.data[i] > '9' {
			d.bail()
		}
		for i < n && '0' <= d.data[i] && d.data[i] <= '9' {
			i++
		}
	}
	d.i = i
	return d.data[start:i]
}

// int parses an integer of bits bits as strconv.ParseInt does (a fraction
// or exponent does not fit an int field: the codec errors).
func (d *decoder) int(bits int) int64 {
	b := d.number()
	if len(b) <= 18 {
		neg := b[0] == '-'
		digits := b
		if neg {
			digits = b[1:]
		}
		var v int64
		for _, c := range digits {
			if c < '0' || c > '9' {
				d.bail()
			}
			v = v*10 + int64(c-'0')
		}
		if neg {
			v = -v
		}
		if bits < 64 && (v < -1<<(bits-1) || v >= 1<<(bits-1)) {
			d.bail()
		}
		return v
	}
	v, err := strconv.ParseInt(string(b), 10, bits)
	if err != nil {
		d.bail()
	}
	return v
}

func (d *decoder) setInt64(p *int64) {
	if !d.null() {
		*p = d.int(64)
	}
}

func (d *decoder) setInt32(p *int32) {
	if !d.null() {
		*p = int32(d.int(32))
	}
}

func (d *decoder) setInt64Ptr(p **int64) {
	if d.null() {
		*p = nil
		return
	}
	v := d.int(64)
	*p = &v
}

func (d *decoder) setInt32Ptr(p **int32) {
	if d.null() {
		*p = nil
		return
	}
	v := int32(d.int(32))
	*p = &v
}

func (d *decoder) setFloatPtr(p **float64) {
	if d.null() {
		*p = nil
		return
	}
	v, err := strconv.ParseFloat(string(d.number()), 64)
	if err != nil {
		d.bail()
	}
	*p = &v
}

// setStrings decodes a []string: null is nil, [] is empty and not nil.
func (d *decoder) setStrings(p *[]string) {
	array(d, p, func(s *string) { setStr(d, s) })
}

// array decodes a JSON array into *p, an element at a time with elem: null
// is nil, [] is empty and not nil, as in encoding/json.
func array[T any](d *decoder, p *[]T, elem func(*T)) {
	if d.null() {
		*p = nil
		return
	}
	d.open('[')
	out := []T{}
	for first := true; d.next(']', &first); {
		var zero T
		out = append(out, zero)
		elem(&out[len(out)-1])
	}
	*p = out
}

func (d *decoder) setStringMap(p *map[string]string) {
	if d.null() {
		*p = nil
		return
	}
	d.open('{')
	m := map[string]string{}
	for first := true; d.next('}', &first); {
		k := string(d.key())
		if _, dup := m[k]; dup {
			d.bail()
		}
		var v string
		setStr(d, &v)
		m[k] = v
	}
	*p = m
}

// raw skips a value, validating it, and returns its bytes.
func (d *decoder) raw() []byte {
	d.ws()
	start := d.i
	d.skip()
	return d.data[start:d.i]
}

// rawCopy is what JSON and FieldsV1 keep: a copy of the value's bytes, nil
// for null.
func (d *decoder) rawCopy() []byte {
	if d.null() {
		return nil
	}
	return bytes.Clone(d.raw()) // alone, as strings are (newString)
}

// skip validates and skips any value, as the codec's scanner would accept
// it (strings are not checked for UTF-8 there).
func (d *decoder) skip() {
	switch d.peek() {
	case '{':
		d.open('{')
		for first := true; d.next('}', &first); {
			d.skipString()
			d.want(':')
			d.skip()
		}
	case '[':
		d.open('[')
		for first := true; d.next(']', &first); {
			d.skip()
		}
	case '"':
		d.skipString()
	case 't':
		d.literal("true")
	case 'f':
		d.literal("false")
	case 'n':
		d.literal("null")
	default:
		d.number()
	}
}

func (d *decoder) skipString() {
	if d.peek() != '"' {
		d.bail()
	}
	i := d.i + 1
	for i < len(d.data) {
		c := d.data[i]
		switch {
		case c == '"':
			d.i = i + 1
			return
		case c < 0x20:
			d.bail()
		case c == '\\':
			if i+1 >= len(d.data) {
				d.bail()
			}
			switch d.data[i+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				i += 2
			case 'u':
				d.hex4(i + 2)
				i += 6
			default:
				d.bail()
			}
			continue
		}
		i++
	}
	d.bail()
}

// time decodes a metav1.Time as its UnmarshalJSON does.
func (d *decoder) time(t *metav1.Time) {
	if d.null() {
		t.Time = time.Time{}
		return
	}
	if d.peek() != '"' {
		d.bail()
	}
	pt, err := time.Parse(time.RFC3339, string(d.strBytes()))
	if err != nil {
		d.bail()
	}
	t.Time = pt.Local()
}

func (d *decoder) timePtr(p **metav1.Time) {
	if d.null() {
		*p = nil
		return
	}
	t := &metav1.Time{}
	d.time(t)
	*p = t
}

// crd decodes the top-level object.
func (d *decoder) crd(crd *apiextensionsv1.CustomResourceDefinition) {
	d.open('{')
	var mask uint64
	for first := true; d.next('}', &first); {
		k := d.key()
		switch string(k) {
		case "apiVersion":
			d.seen(&mask, 0)
			setStr(d, &crd.APIVersion)
		case "kind":
			d.seen(&mask, 1)
			setStr(d, &crd.Kind)
		case "metadata":
			d.seen(&mask, 2)
			d.objectMeta(&crd.ObjectMeta)
		case "spec":
			d.seen(&mask, 3)
			// Metadata comes first in what the server stores.
			if l := d.like; l != nil && crd.UID != "" && crd.UID == l.UID && crd.Generation != 0 && crd.Generation == l.Generation {
				d.skip()
				crd.Spec = specSharingSchemas(&l.Spec)
			} else {
				d.spec(&crd.Spec)
			}
		case "status":
			d.seen(&mask, 4)
			d.status(&crd.Status)
		default:
			// The serializer finds apiVersion and kind with encoding/json,
			// which matches keys case-insensitively (and folds some
			// non-ASCII letters).
			if strings.EqualFold(string(k), "apiVersion") || strings.EqualFold(string(k), "kind") || !isASCII(k) {
				d.bail()
			}
			d.unknownKey()
		}
	}
}

func isASCII(b []byte) bool {
	for _, c := range b {
		if c >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

func (d *decoder) objectMeta(m *metav1.ObjectMeta) {
	if d.null() {
		return
	}
	d.open('{')
	var mask uint64
	for first := true; d.next('}', &first); {
		switch string(d.key()) {
		case "name":
			d.seen(&mask, 0)
			setStr(d, &m.Name)
		case "generateName":
			d.seen(&mask, 1)
			setStr(d, &m.GenerateName)
		case "namespace":
			d.seen(&mask, 2)
			setStr(d, &m.Namespace)
		case "selfLink":
			d.seen(&mask, 3)
			setStr(d, &m.SelfLink)
		case "uid":
			d.seen(&mask, 4)
			setStr(d, &m.UID)
		case "resourceVersion":
			d.seen(&mask, 5)
			setStr(d, &m.ResourceVersion)
		case "generation":
			d.seen(&mask, 6)
			d.setInt64(&m.Generation)
		case "creationTimestamp":
			d.seen(&mask, 7)
			d.time(&m.CreationTimestamp)
		case "deletionTimestamp":
			d.seen(&mask, 8)
			d.timePtr(&m.DeletionTimestamp)
		case "deletionGracePeriodSeconds":
			d.seen(&mask, 9)
			d.setInt64Ptr(&m.DeletionGracePeriodSeconds)
		case "labels":
			d.seen(&mask, 10)
			d.setStringMap(&m.Labels)
		case "annotations":
			d.seen(&mask, 11)
			d.setStringMap(&m.Annotations)
		case "ownerReferences":
			d.seen(&mask, 12)
			d.ownerReferences(&m.OwnerReferences)
		case "finalizers":
			d.seen(&mask, 13)
			d.setStrings(&m.Finalizers)
		case "managedFields":
			d.seen(&mask, 14)
			d.managedFields(&m.ManagedFields)
		default:
			d.unknownKey()
		}
	}
}

func (d *decoder) ownerReferences(p *[]metav1.OwnerReference) {
	array(d, p, func(r *metav1.OwnerReference) {
		if d.null() {
			return
		}
		d.open('{')
		var mask uint64
		for first := true; d.next('}', &first); {
			switch string(d.key()) {
			case "apiVersion":
				d.seen(&mask, 0)
				setStr(d, &r.APIVersion)
			case "kind":
				d.seen(&mask, 1)
				setStr(d, &r.Kind)
			case "name":
				d.seen(&mask, 2)
				setStr(d, &r.Name)
			case "uid":
				d.seen(&mask, 3)
				setStr[types.UID](d, &r.UID)
			case "controller":
				d.seen(&mask, 4)
				d.setBoolPtr(&r.Controller)
			case "blockOwnerDeletion":
				d.seen(&mask, 5)
				d.setBoolPtr(&r.BlockOwnerDeletion)
			default:
				d.unknownKey()
			}
		}
	})
}

func (d *decoder) managedFields(p *[]metav1.ManagedFieldsEntry) {
	array(d, p, func(e *metav1.ManagedFieldsEntry) {
		if d.null() {
			return
		}
		d.open('{')
		var mask uint64
		for first := true; d.next('}', &first); {
			switch string(d.key()) {
			case "manager":
				d.seen(&mask, 0)
				setStr(d, &e.Manager)
			case "operation":
				d.seen(&mask, 1)
				setStr(d, &e.Operation)
			case "apiVersion":
				d.seen(&mask, 2)
				setStr(d, &e.APIVersion)
			case "time":
				d.seen(&mask, 3)
				d.timePtr(&e.Time)
			case "fieldsType":
				d.seen(&mask, 4)
				setStr(d, &e.FieldsType)
			case "fieldsV1":
				d.seen(&mask, 5)
				if d.null() {
					e.FieldsV1 = nil
					continue
				}
				// SetRawBytes, as FieldsV1.UnmarshalJSON, whatever
				// FieldsV1's representation.
				f := &metav1.FieldsV1{}
				f.SetRawBytes(d.raw())
				e.FieldsV1 = f
			case "subresource":
				d.seen(&mask, 6)
				setStr(d, &e.Subresource)
			default:
				d.unknownKey()
			}
		}
	})
}

func (d *decoder) spec(s *apiextensionsv1.CustomResourceDefinitionSpec) {
	if d.null() {
		return
	}
	d.open('{')
	var mask uint64
	for first := true; d.next('}', &first); {
		switch string(d.key()) {
		case "group":
			d.seen(&mask, 0)
			setStr(d, &s.Group)
		case "names":
			d.seen(&mask, 1)
			d.names(&s.Names)
		case "scope":
			d.seen(&mask, 2)
			setStr(d, &s.Scope)
		case "versions":
			d.seen(&mask, 3)
			d.versions(&s.Versions)
		case "conversion":
			d.seen(&mask, 4)
			d.conversion(&s.Conversion)
		case "preserveUnknownFields":
			d.seen(&mask, 5)
			d.setBool(&s.PreserveUnknownFields)
		default:
			d.unknownKey()
		}
	}
}

func (d *decoder) names(n *apiextensionsv1.CustomResourceDefinitionNames) {
	if d.null() {
		return
	}
	d.open('{')
	var mask uint64
	for first := true; d.next('}', &first); {
		switch string(d.key()) {
		case "plural":
			d.seen(&mask, 0)
			setStr(d, &n.Plural)
		case "singular":
			d.seen(&mask, 1)
			setStr(d, &n.Singular)
		case "shortNames":
			d.seen(&mask, 2)
			d.setStrings(&n.ShortNames)
		case "kind":
			d.seen(&mask, 3)
			setStr(d, &n.Kind)
		case "listKind":
			d.seen(&mask, 4)
			setStr(d, &n.ListKind)
		case "categories":
			d.seen(&mask, 5)
			d.setStrings(&n.Categories)
		default:
			d.unknownKey()
		}
	}
}

func (d *decoder) versions(p *[]apiextensionsv1.CustomResourceDefinitionVersion) {
	array(d, p, d.version)
}

func (d *decoder) version(v *apiextensionsv1.CustomResourceDefinitionVersion) {
	if d.null() {
		return
	}
	d.open('{')
	var mask uint64
	for first := true; d.next('}', &first); {
		switch string(d.key()) {
		case "name":
			d.seen(&mask, 0)
			setStr(d, &v.Name)
		case "served":
			d.seen(&mask, 1)
			d.setBool(&v.Served)
		case "storage":
			d.seen(&mask, 2)
			d.setBool(&v.Storage)
		case "deprecated":
			d.seen(&mask, 3)
			d.setBool(&v.Deprecated)
		case "deprecationWarning":
			d.seen(&mask, 4)
			setStrPtr(d, &v.DeprecationWarning)
		case "schema":
			d.seen(&mask, 5)
			if d.null() {
				v.Schema = nil
				continue
			}
			v.Schema = &apiextensionsv1.CustomResourceValidation{}
			d.open('{')
			var m2 uint64
			for first := true; d.next('}', &first); {
				switch string(d.key()) {
				case "openAPIV3Schema":
					d.seen(&m2, 0)
					v.Schema.OpenAPIV3Schema = d.propsPtr()
				default:
					d.unknownKey()
				}
			}
		case "subresources":
			d.seen(&mask, 6)
			d.subresources(&v.Subresources)
		case "additionalPrinterColumns":
			d.seen(&mask, 7)
			d.columns(&v.AdditionalPrinterColumns)
		case "selectableFields":
			d.seen(&mask, 8)
			d.selectableFields(&v.SelectableFields)
		default:
			d.unknownKey()
		}
	}
}

func (d *decoder) subresources(p **apiextensionsv1.CustomResourceSubresources) {
	if d.null() {
		*p = nil
		return
	}
	s := &apiextensionsv1.CustomResourceSubresources{}
	*p = s
	d.open('{')
	var mask uint64
	for first := true; d.next('}', &first); {
		switch string(d.key()) {
		case "status":
			d.seen(&mask, 0)
			if d.null() {
				s.Status = nil
				continue
			}
			// An empty struct: any members are unknown fields.
			if d.peek() != '{' {
				d.bail()
			}
			d.skip()
			s.Status = &apiextensionsv1.CustomResourceSubresourceStatus{}
		case "scale":
			d.seen(&mask, 1)
			if d.null() {
				s.Scale = nil
				continue
			}
			sc := &apiextensionsv1.CustomResourceSubresourceScale{}
			s.Scale = sc
			d.open('{')
			var m2 uint64
			for first := true; d.next('}', &first); {
				switch string(d.key()) {
				case "specReplicasPath":
					d.seen(&m2, 0)
					setStr(d, &sc.SpecReplicasPath)
				case "statusReplicasPath":
					d.seen(&m2, 1)
					setStr(d, &sc.StatusReplicasPath)
				case "labelSelectorPath":
					d.seen(&m2, 2)
					setStrPtr(d, &sc.LabelSelectorPath)
				default:
					d.unknownKey()
				}
			}
		default:
			d.unknownKey()
		}
	}
}

func (d *decoder) columns(p *[]apiextensionsv1.CustomResourceColumnDefinition) {
	array(d, p, func(c *apiextensionsv1.CustomResourceColumnDefinition) {
		if d.null() {
			return
		}
		d.open('{')
		var mask uint64
		for first := true; d.next('}', &first); {
			switch string(d.key()) {
			case "name":
				d.seen(&mask, 0)
				setStr(d, &c.Name)
			case "type":
				d.seen(&mask, 1)
				d.setCommon(&c.Type)
			case "format":
				d.seen(&mask, 2)
				d.setCommon(&c.Format)
			case "description":
				d.seen(&mask, 3)
				setStr(d, &c.Description)
			case "priority":
				d.seen(&mask, 4)
				d.setInt32(&c.Priority)
			case "jsonPath":
				d.seen(&mask, 5)
				setStr(d, &c.JSONPath)
			default:
				d.unknownKey()
			}
		}
	})
}

func (d *decoder) selectableFields(p *[]apiextensionsv1.SelectableField) {
	array(d, p, func(f *apiextensionsv1.SelectableField) {
		if d.null() {
			return
		}
		d.open('{')
		var mask uint64
		for first := true; d.next('}', &first); {
			switch string(d.key()) {
			case "jsonPath":
				d.seen(&mask, 0)
				setStr(d, &f.JSONPath)
			default:
				d.unknownKey()
			}
		}
	})
}

func (d *decoder) conversion(p **apiextensionsv1.CustomResourceConversion) {
	if d.null() {
		*p = nil
		return
	}
	c := &apiextensionsv1.CustomResourceConversion{}
	*p = c
	d.open('{')
	var mask uint64
	for first := true; d.next('}', &first); {
		switch string(d.key()) {
		case "strategy":
			d.seen(&mask, 0)
			setStr(d, &c.Strategy)
		case "webhook":
			d.seen(&mask, 1)
			d.webhook(&c.Webhook)
		default:
			d.unknownKey()
		}
	}
}

func (d *decoder) webhook(p **apiextensionsv1.WebhookConversion) {
	if d.null() {
		*p = nil
		return
	}
	w := &apiextensionsv1.WebhookConversion{}
	*p = w
	d.open('{')
	var mask uint64
	for first := true; d.next('}', &first); {
		switch string(d.key()) {
		case "clientConfig":
			d.seen(&mask, 0)
			d.clientConfig(&w.ClientConfig)
		case "conversionReviewVersions":
			d.seen(&mask, 1)
			d.setStrings(&w.ConversionReviewVersions)
		default:
			d.unknownKey()
		}
	}
}

func (d *decoder) clientConfig(p **apiextensionsv1.WebhookClientConfig) {
	if d.null() {
		*p = nil
		return
	}
	c := &apiextensionsv1.WebhookClientConfig{}
	*p = c
	d.open('{')
	var mask uint64
	for first := true; d.next('}', &first); {
		switch string(d.key()) {
		case "url":
			d.seen(&mask, 0)
			setStrPtr(d, &c.URL)
		case "service":
			d.seen(&mask, 1)
			if d.null() {
				c.Service = nil
				continue
			}
			s := &apiextensionsv1.ServiceReference{}
			c.Service = s
			d.open('{')
			var m2 uint64
			for first := true; d.next('}', &first); {
				switch string(d.key()) {
				case "namespace":
					d.seen(&m2, 0)
					setStr(d, &s.Namespace)
				case "name":
					d.seen(&m2, 1)
					setStr(d, &s.Name)
				case "path":
					d.seen(&m2, 2)
					setStrPtr(d, &s.Path)
				case "port":
					d.seen(&m2, 3)
					d.setInt32Ptr(&s.Port)
				default:
					d.unknownKey()
				}
			}
		case "caBundle":
			d.seen(&mask, 2)
			if d.null() {
				c.CABundle = nil
				continue
			}
			if d.peek() != '"' {
				d.bail()
			}
			// As encoding/json decodes a []byte.
			s := d.strBytes()
			b := make([]byte, base64.StdEncoding.DecodedLen(len(s)))
			n, err := base64.StdEncoding.Decode(b, s)
			if err != nil {
				d.bail()
			}
			c.CABundle = b[:n]
		default:
			d.unknownKey()
		}
	}
}

func (d *decoder) status(s *apiextensionsv1.CustomResourceDefinitionStatus) {
	if d.null() {
		return
	}
	d.open('{')
	var mask uint64
	for first := true; d.next('}', &first); {
		switch string(d.key()) {
		case "conditions":
			d.seen(&mask, 0)
			d.conditions(&s.Conditions)
		case "acceptedNames":
			d.seen(&mask, 1)
			d.names(&s.AcceptedNames)
		case "storedVersions":
			d.seen(&mask, 2)
			d.setStrings(&s.StoredVersions)
		case "observedGeneration":
			d.seen(&mask, 3)
			d.setInt64(&s.ObservedGeneration)
		default:
			d.unknownKey()
		}
	}
}

func (d *decoder) conditions(p *[]apiextensionsv1.CustomResourceDefinitionCondition) {
	array(d, p, func(c *apiextensionsv1.CustomResourceDefinitionCondition) {
		if d.null() {
			return
		}
		d.open('{')
		var mask uint64
		for first := true; d.next('}', &first); {
			switch string(d.key()) {
			case "type":
				d.seen(&mask, 0)
				setStr(d, &c.Type)
			case "status":
				d.seen(&mask, 1)
				setStr(d, &c.Status)
			case "lastTransitionTime":
				d.seen(&mask, 2)
				d.time(&c.LastTransitionTime)
			case "reason":
				d.seen(&mask, 3)
				setStr(d, &c.Reason)
			case "message":
				d.seen(&mask, 4)
				setStr(d, &c.Message)
			case "observedGeneration":
				d.seen(&mask, 5)
				d.setInt64(&c.ObservedGeneration)
			default:
				d.unknownKey()
			}
		}
	})
}

func (d *decoder) propsPtr() *apiextensionsv1.JSONSchemaProps {
	if d.null() {
		return nil
	}
	return d.sharedProps()
}

// jsonPtr decodes a *JSON: null is nil (UnmarshalJSON is not called).
func (d *decoder) jsonPtr() *apiextensionsv1.JSON {
	if d.null() {
		return nil
	}
	return &apiextensionsv1.JSON{Raw: d.rawCopy()}
}

func (d *decoder) propsSlice(p *[]apiextensionsv1.JSONSchemaProps) {
	array(d, p, d.props)
}

func (d *decoder) propsMap(p *map[string]apiextensionsv1.JSONSchemaProps) {
	if d.null() {
		*p = nil
		return
	}
	key, shared := d.sharedKey()
	if shared {
		if m, found := d.share.maps[key]; found {
			d.i += len(key)
			*p = m
			return
		}
	}
	start := d.i
	d.open('{')
	m := map[string]apiextensionsv1.JSONSchemaProps{}
	if shared {
		defer func() {
			if d.i-start == len(key) { // decoded exactly the key's bytes
				d.share.maps[key] = m
			}
		}()
	}
	for first := true; d.next('}', &first); {
		k := string(d.key())
		if _, dup := m[k]; dup {
			d.bail()
		}
		// A map value is copied in; decoding it in a reused temporary
		// saves allocating each twice (the recursion makes a local escape).
		v := d.tmpProps()
		d.props(v)
		m[k] = *v
		*v = apiextensionsv1.JSONSchemaProps{}
		d.level--
	}
	*p = m
}

// tmpProps returns the temporary schema of the current nesting level and
// enters the next; the caller leaves it (d.level--) once done with it.
func (d *decoder) tmpProps() *apiextensionsv1.JSONSchemaProps {
	if d.level == len(d.tmp) {
		d.tmp = append(d.tmp, &apiextensionsv1.JSONSchemaProps{})
	}
	v := d.tmp[d.level]
	d.level++
	return v
}

// orBool decodes additionalProperties/additionalItems as
// JSONSchemaPropsOrBool.UnmarshalJSON does.
func (d *decoder) orBool() *apiextensionsv1.JSONSchemaPropsOrBool {
	switch d.peek() {
	case 'n':
		d.literal("null")
		return nil
	case 't':
		d.literal("true")
		return &apiextensionsv1.JSONSchemaPropsOrBool{Allows: true}
	case 'f':
		d.literal("false")
		return &apiextensionsv1.JSONSchemaPropsOrBool{}
	case '{':
		return &apiextensionsv1.JSONSchemaPropsOrBool{Allows: true, Schema: d.sharedProps()}
	}
	d.bail()
	return nil
}

// orArray decodes items as JSONSchemaPropsOrArray.UnmarshalJSON does: a
// value neither object nor array gives an empty one.
func (d *decoder) orArray() *apiextensionsv1.JSONSchemaPropsOrArray {
	switch d.peek() {
	case 'n':
		d.literal("null")
		return nil
	case '{':
		return &apiextensionsv1.JSONSchemaPropsOrArray{Schema: d.sharedProps()}
	case '[':
		o := &apiextensionsv1.JSONSchemaPropsOrArray{}
		d.propsSlice(&o.JSONSchemas)
		return o
	}
	d.skip()
	return &apiextensionsv1.JSONSchemaPropsOrArray{}
}

// dependencies decodes JSONSchemaDependencies; its values'
// UnmarshalJSON gives an empty value for null and other non-object,
// non-array values.
func (d *decoder) dependencies(p *apiextensionsv1.JSONSchemaDependencies) {
	if d.null() {
		*p = nil
		return
	}
	d.open('{')
	m := apiextensionsv1.JSONSchemaDependencies{}
	for first := true; d.next('}', &first); {
		k := string(d.key())
		if _, dup := m[k]; dup {
			d.bail()
		}
		var v apiextensionsv1.JSONSchemaPropsOrStringArray
		switch d.peek() {
		case '{':
			v.Schema = &apiextensionsv1.JSONSchemaProps{}
			d.props(v.Schema)
		case '[':
			d.setStrings(&v.Property)
		default:
			d.skip()
		}
		m[k] = v
	}
	*p = m
}

func (d *decoder) validations(p *apiextensionsv1.ValidationRules) {
	if d.null() {
		*p = nil
		return
	}
	d.open('[')
	out := apiextensionsv1.ValidationRules{}
	for first := true; d.next(']', &first); {
		out = append(out, apiextensionsv1.ValidationRule{})
		r := &out[len(out)-1]
		if d.null() {
			continue
		}
		d.open('{')
		var mask uint64
		for first := true; d.next('}', &first); {
			switch string(d.key()) {
			case "rule":
				d.seen(&mask, 0)
				setStr(d, &r.Rule)
			case "message":
				d.seen(&mask, 1)
				setStr(d, &r.Message)
			case "messageExpression":
				d.seen(&mask, 2)
				setStr(d, &r.MessageExpression)
			case "reason":
				d.seen(&mask, 3)
				setStrPtr(d, &r.Reason)
			case "fieldPath":
				d.seen(&mask, 4)
				setStr(d, &r.FieldPath)
			case "optionalOldSelf":
				d.seen(&mask, 5)
				d.setBoolPtr(&r.OptionalOldSelf)
			default:
				d.unknownKey()
			}
		}
	}
	*p = out
}

// props decodes a schema; null leaves it empty.
func (d *decoder) props(p *apiextensionsv1.JSONSchemaProps) {
	if d.null() {
		return
	}
	d.open('{')
	var mask uint64
	for first := true; d.next('}', &first); {
		switch string(d.key()) {
		case "id":
			d.seen(&mask, 0)
			setStr(d, &p.ID)
		case "$schema":
			d.seen(&mask, 1)
			setStr(d, &p.Schema)
		case "$ref":
			d.seen(&mask, 2)
			setStrPtr(d, &p.Ref)
		case "description":
			d.seen(&mask, 3)
			setStr(d, &p.Description)
		case "type":
			d.seen(&mask, 4)
			d.setCommon(&p.Type)
		case "format":
			d.seen(&mask, 5)
			d.setCommon(&p.Format)
		case "title":
			d.seen(&mask, 6)
			setStr(d, &p.Title)
		case "default":
			d.seen(&mask, 7)
			p.Default = d.jsonPtr()
		case "maximum":
			d.seen(&mask, 8)
			d.setFloatPtr(&p.Maximum)
		case "exclusiveMaximum":
			d.seen(&mask, 9)
			d.setBool(&p.ExclusiveMaximum)
		case "minimum":
			d.seen(&mask, 10)
			d.setFloatPtr(&p.Minimum)
		case "exclusiveMinimum":
			d.seen(&mask, 11)
			d.setBool(&p.ExclusiveMinimum)
		case "maxLength":
			d.seen(&mask, 12)
			d.setInt64Ptr(&p.MaxLength)
		case "minLength":
			d.seen(&mask, 13)
			d.setInt64Ptr(&p.MinLength)
		case "pattern":
			d.seen(&mask, 14)
			setStr(d, &p.Pattern)
		case "maxItems":
			d.seen(&mask, 15)
			d.setInt64Ptr(&p.MaxItems)
		case "minItems":
			d.seen(&mask, 16)
			d.setInt64Ptr(&p.MinItems)
		case "uniqueItems":
			d.seen(&mask, 17)
			d.setBool(&p.UniqueItems)
		case "multipleOf":
			d.seen(&mask, 18)
			d.setFloatPtr(&p.MultipleOf)
		case "enum":
			d.seen(&mask, 19)
			if d.null() {
				p.Enum = nil
				continue
			}
			d.open('[')
			enum := []apiextensionsv1.JSON{}
			for first := true; d.next(']', &first); {
				enum = append(enum, apiextensionsv1.JSON{Raw: d.rawCopy()})
			}
			p.Enum = enum
		case "maxProperties":
			d.seen(&mask, 20)
			d.setInt64Ptr(&p.MaxProperties)
		case "minProperties":
			d.seen(&mask, 21)
			d.setInt64Ptr(&p.MinProperties)
		case "required":
			d.seen(&mask, 22)
			d.setStrings(&p.Required)
		case "items":
			d.seen(&mask, 23)
			p.Items = d.orArray()
		case "allOf":
			d.seen(&mask, 24)
			d.propsSlice(&p.AllOf)
		case "oneOf":
			d.seen(&mask, 25)
			d.propsSlice(&p.OneOf)
		case "anyOf":
			d.seen(&mask, 26)
			d.propsSlice(&p.AnyOf)
		case "not":
			d.seen(&mask, 27)
			p.Not = d.propsPtr()
		case "properties":
			d.seen(&mask, 28)
			d.propsMap(&p.Properties)
		case "additionalProperties":
			d.seen(&mask, 29)
			p.AdditionalProperties = d.orBool()
		case "patternProperties":
			d.seen(&mask, 30)
			d.propsMap(&p.PatternProperties)
		case "dependencies":
			d.seen(&mask, 31)
			d.dependencies(&p.Dependencies)
		case "additionalItems":
			d.seen(&mask, 32)
			p.AdditionalItems = d.orBool()
		case "definitions":
			d.seen(&mask, 33)
			m := map[string]apiextensionsv1.JSONSchemaProps(p.Definitions)
			d.propsMap(&m)
			p.Definitions = m
		case "externalDocs":
			d.seen(&mask, 34)
			if d.null() {
				p.ExternalDocs = nil
				continue
			}
			e := &apiextensionsv1.ExternalDocumentation{}
			p.ExternalDocs = e
			d.open('{')
			var m2 uint64
			for first := true; d.next('}', &first); {
				switch string(d.key()) {
				case "description":
					d.seen(&m2, 0)
					setStr(d, &e.Description)
				case "url":
					d.seen(&m2, 1)
					setStr(d, &e.URL)
				default:
					d.unknownKey()
				}
			}
		case "example":
			d.seen(&mask, 35)
			p.Example = d.jsonPtr()
		case "nullable":
			d.seen(&mask, 36)
			d.setBool(&p.Nullable)
		case "x-kubernetes-preserve-unknown-fields":
			d.seen(&mask, 37)
			d.setBoolPtr(&p.XPreserveUnknownFields)
		case "x-kubernetes-embedded-resource":
			d.seen(&mask, 38)
			d.setBool(&p.XEmbeddedResource)
		case "x-kubernetes-int-or-string":
			d.seen(&mask, 39)
			d.setBool(&p.XIntOrString)
		case "x-kubernetes-list-map-keys":
			d.seen(&mask, 40)
			d.setStrings(&p.XListMapKeys)
		case "x-kubernetes-list-type":
			d.seen(&mask, 41)
			setStrPtr(d, &p.XListType)
		case "x-kubernetes-map-type":
			d.seen(&mask, 42)
			setStrPtr(d, &p.XMapType)
		case "x-kubernetes-validations":
			d.seen(&mask, 43)
			d.validations(&p.XValidations)
		default:
			d.unknownKey()
		}
	}
}

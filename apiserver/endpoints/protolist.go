package endpoints

import (
	"encoding/binary"
	"net/http"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// protobufEnvelope starts every Kubernetes protobuf body ("k8s\x00"),
// followed by a runtime.Unknown holding the object's type and message.
var protobufEnvelope = []byte{0x6b, 0x38, 0x73, 0x00}

const mediaTypeProtobuf = "application/vnd.kubernetes.protobuf"

// writeProtobufList writes a list as the protobuf serializer would, byte
// for byte, but with each item's message taken from cached (in list order,
// from the watch cache) when it has it: a list of thousands of objects is
// mostly copying then, not marshalling. It reports false (nothing written)
// for objects it cannot encode this way.
func (h *handler) writeProtobufList(w http.ResponseWriter, r *http.Request, code int, list runtime.Object, gv schema.GroupVersion, cached [][]byte) bool {
	// Typed lists embed a ListMeta; unstructured ones do not.
	withMeta, ok := list.(metav1.ListMetaAccessor)
	if !ok {
		return false
	}
	lm, ok := withMeta.GetListMeta().(*metav1.ListMeta)
	if !ok {
		return false
	}
	h.setKind(list, gv)
	gvk := list.GetObjectKind().GroupVersionKind()
	if gvk.Kind == "" {
		return false
	}
	head, err := lm.Marshal()
	if err != nil {
		return false
	}
	n := meta.LenList(list)
	if len(cached) != n {
		cached = nil // not this list's: marshal every item
	}
	items := make([][]byte, 0, n)
	size := fieldSize(len(head))
	err = meta.EachListItem(list, func(item runtime.Object) error {
		var b []byte
		if i := len(items); cached != nil {
			b = cached[i]
		}
		if b == nil {
			m, isProto := item.(interface{ Marshal() ([]byte, error) })
			if !isProto {
				return errNotProtobuf
			}
			var err error
			if b, err = m.Marshal(); err != nil {
				return err
			}
		}
		items = append(items, b)
		size += fieldSize(len(b))
		return nil
	})
	if err != nil {
		return false
	}
	// The body: the envelope, then a runtime.Unknown whose fields are
	// typeMeta (1), raw (2: the list message, ListMeta as field 1 and the
	// items repeating field 2) and the empty contentEncoding (3) and
	// contentType (4), written straight into one buffer.
	apiVersion, kind := gvk.GroupVersion().String(), gvk.Kind
	typeMeta := fieldSize(len(apiVersion)) + fieldSize(len(kind))
	total := len(protobufEnvelope) + fieldSize(typeMeta) + fieldSize(size) + 2 + 2
	buf := getBuffer()
	defer putBuffer(buf)
	buf.Grow(total)
	out := buf.AvailableBuffer() // buf's memory, returned to the pool after writeBody
	out = append(out, protobufEnvelope...)
	out = appendTag(out, 1, typeMeta)
	out = appendBytesField(out, 1, []byte(apiVersion))
	out = appendBytesField(out, 2, []byte(kind))
	out = appendTag(out, 2, size)
	out = appendBytesField(out, 1, head)
	for _, b := range items {
		out = appendBytesField(out, 2, b)
	}
	out = append(out, 3<<3|2, 0, 4<<3|2, 0)
	writeBody(w, r, code, mediaTypeProtobuf, out)
	return true
}

type encodeError string

func (e encodeError) Error() string { return string(e) }

const errNotProtobuf = encodeError("item has no protobuf form")

// fieldSize is the wire size of a length-delimited field of n bytes (with
// a one-byte tag, true for field numbers below 16).
func fieldSize(n int) int { return 1 + varintSize(uint64(n)) + n }

func varintSize(v uint64) int {
	n := 1
	for v >= 0x80 {
		v >>= 7
		n++
	}
	return n
}

// appendTag starts a length-delimited field (wire type 2) of n bytes.
func appendTag(dst []byte, field, n int) []byte {
	dst = append(dst, byte(field<<3|2))
	return binary.AppendUvarint(dst, uint64(n))
}

func appendBytesField(dst []byte, field int, b []byte) []byte {
	return append(appendTag(dst, field, len(b)), b...)
}

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

// itemEncoder returns an item's protobuf message, typically from the watch
// cache; false means marshal the item here.
type itemEncoder func(item runtime.Object) ([]byte, bool)

// writeProtobufList writes a list as the protobuf serializer would, byte
// for byte, but with each item's message taken from cached when it has it:
// a list of thousands of objects is mostly copying then, not marshalling.
// It reports false (nothing written) for objects it cannot encode this way.
func (h *handler) writeProtobufList(w http.ResponseWriter, r *http.Request, code int, list runtime.Object, gv schema.GroupVersion, cached itemEncoder) bool {
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
	items := make([][]byte, 0, meta.LenList(list))
	size := fieldSize(len(head))
	err = meta.EachListItem(list, func(item runtime.Object) error {
		b, ok := cached(item)
		if !ok {
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
	// The list message: ListMeta is field 1, the items repeat field 2.
	msg := make([]byte, 0, size)
	msg = appendBytesField(msg, 1, head)
	for _, b := range items {
		msg = appendBytesField(msg, 2, b)
	}
	unknown := runtime.Unknown{TypeMeta: runtime.TypeMeta{APIVersion: gvk.GroupVersion().String(), Kind: gvk.Kind}, Raw: msg}
	buf := getBuffer()
	defer putBuffer(buf)
	buf.Grow(len(protobufEnvelope) + unknown.Size())
	buf.Write(protobufEnvelope)
	body := buf.AvailableBuffer()[:unknown.Size()]
	if _, err := unknown.MarshalToSizedBuffer(body); err != nil {
		return false
	}
	buf.Write(body)
	writeBody(w, r, code, mediaTypeProtobuf, buf.Bytes())
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

func appendBytesField(dst []byte, field int, b []byte) []byte {
	dst = append(dst, byte(field<<3|2)) // wire type 2: length-delimited
	dst = binary.AppendUvarint(dst, uint64(len(b)))
	return append(dst, b...)
}

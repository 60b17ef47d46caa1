package registry

import (
	"bytes"
	"reflect"

	"google.golang.org/protobuf/encoding/protowire"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/devplane/devplane/apiserver/builtin"
)

// storedProtobufDecoder decodes a built-in kind's stored bytes as its codec
// does (storage.Config.Decode): the "k8s\x00" magic, a runtime.Unknown
// envelope naming the kind, then the object's own protobuf. The codec
// copies the object's bytes out of the envelope and finds the type by
// reflection before unmarshalling; every write decodes twice (its answer
// and the watch cache's copy) and every page read from etcd decodes each
// item, so this reads the envelope in place. Anything else (another kind, a
// content encoding, a field it does not know, a malformed envelope) is left
// to the codec, which decodes it or reports what is wrong.
func storedProtobufDecoder(gvk schema.GroupVersionKind) func(data []byte, like, into runtime.Object) (bool, error) {
	apiVersion, kind := gvk.GroupVersion().String(), gvk.Kind
	return func(data []byte, _, into runtime.Object) (bool, error) {
		if _, nested := into.(runtime.NestedObjectDecoder); nested {
			return false, nil
		}
		target, ok := into.(interface{ Unmarshal([]byte) error })
		if !ok {
			return false, nil
		}
		raw, ok := storedObjectBytes(data, apiVersion, kind)
		if !ok {
			return false, nil
		}
		if err := target.Unmarshal(raw); err != nil {
			// Left for the codec to report, from an empty object again.
			return false, runtime.SetZeroValue(into)
		}
		into.GetObjectKind().SetGroupVersionKind(gvk)
		builtin.Scheme.Default(into) // what the codec's decode does too
		return true, nil
	}
}

var protobufMagic = []byte("k8s\x00")

// storedObjectBytes returns the object's bytes inside data's envelope
// when the envelope is exactly one this kind's codec writes.
func storedObjectBytes(data []byte, apiVersion, kind string) ([]byte, bool) {
	rest, ok := bytes.CutPrefix(data, protobufMagic)
	if !ok {
		return nil, false
	}
	var raw []byte
	var sawType, sawRaw bool
	ok = eachBytesField(rest, func(num protowire.Number, value []byte) bool {
		switch num {
		case 1: // typeMeta
			if sawType || !typeMetaIs(value, apiVersion, kind) {
				return false
			}
			sawType = true
		case 2: // raw
			if sawRaw {
				return false
			}
			raw, sawRaw = value, true
		case 3, 4: // contentEncoding, contentType: written empty
			return len(value) == 0
		default:
			return false
		}
		return true
	})
	return raw, ok && sawType
}

// typeMetaIs reports whether a runtime.TypeMeta message names exactly
// apiVersion and kind.
func typeMetaIs(msg []byte, apiVersion, kind string) bool {
	var versionIs, kindIs bool
	ok := eachBytesField(msg, func(num protowire.Number, value []byte) bool {
		switch num {
		case 1:
			versionIs = string(value) == apiVersion
		case 2:
			kindIs = string(value) == kind
		default:
			return false
		}
		return true
	})
	return ok && versionIs && kindIs
}

// eachBytesField calls fn with each field of msg, all of which must be
// length-delimited (the envelope's are); false when one is not, msg is
// malformed, or fn says stop.
func eachBytesField(msg []byte, fn func(num protowire.Number, value []byte) bool) bool {
	for len(msg) > 0 {
		num, typ, n := protowire.ConsumeTag(msg)
		if n < 0 || typ != protowire.BytesType {
			return false
		}
		msg = msg[n:]
		value, n := protowire.ConsumeBytes(msg)
		if n < 0 || !fn(num, value) {
			return false
		}
		msg = msg[n:]
	}
	return true
}

// storedProtobufEncoder encodes objects of a built-in kind for storage as
// its codec does (storage.Config.Encode), byte for byte: the magic, then
// the envelope with the object marshalled inside it. The codec finds the
// kind by reflection, sets it on the object and back, and copies its
// output once more into a buffer; every write encodes. Objects of another
// type go to the codec.
func storedProtobufEncoder(gvk schema.GroupVersionKind, typ reflect.Type) func(obj runtime.Object) ([]byte, bool, error) {
	meta := runtime.TypeMeta{APIVersion: gvk.GroupVersion().String(), Kind: gvk.Kind}
	return func(obj runtime.Object) ([]byte, bool, error) {
		if reflect.TypeOf(obj) != typ {
			return nil, false, nil
		}
		m, ok := obj.(runtime.ProtobufMarshaller)
		if !ok {
			return nil, false, nil
		}
		unk := runtime.Unknown{TypeMeta: meta}
		size := uint64(m.Size())
		// The codec's bound: the envelope, a tag, a length, the object.
		data := make([]byte, uint64(len(protobufMagic))+uint64(unk.Size())+1+8+size)
		n, err := unk.NestedMarshalTo(data[len(protobufMagic):], m, size)
		if err != nil {
			return nil, true, err
		}
		copy(data, protobufMagic)
		return data[:len(protobufMagic)+n], true, nil
	}
}

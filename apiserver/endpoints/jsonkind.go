package endpoints

import (
	"strings"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	kjson "k8s.io/apimachinery/pkg/runtime/serializer/json"
)

// apimachinery's JSON serializer finds a body's apiVersion and kind by
// decoding the whole body with encoding/json into a two-field struct
// before decoding it for real: two fifths of a JSON create's decoding.
// kindSniffer reads the two fields from the top-level object's keys and
// skips the values in between; whatever it is not sure to read as
// encoding/json would (escapes, non-ASCII or differently cased keys,
// values that are not plain strings, anything but one object) goes to
// the default. It does not validate the values it skips: a body that is
// not JSON fails the real decoding instead, and decodeBody then reports
// the default's error, as the serializer would have (decodeJSON).
type kindSniffer struct{}

func (kindSniffer) Interpret(data []byte) (*schema.GroupVersionKind, error) {
	apiVersion, kind, ok := sniffKind(data)
	if !ok {
		return kjson.DefaultMetaFactory.Interpret(data)
	}
	gv, err := schema.ParseGroupVersion(apiVersion)
	if err != nil {
		return nil, err
	}
	return &schema.GroupVersionKind{Group: gv.Group, Version: gv.Version, Kind: kind}, nil
}

// jsonDecoders are the JSON serializer and its strict form, as the codec
// factory builds them, with kindSniffer.
type jsonDecoders struct{ plain, strict runtime.Serializer }

func newJSONDecoders(scheme *runtime.Scheme) jsonDecoders {
	return jsonDecoders{
		plain:  kjson.NewSerializerWithOptions(kindSniffer{}, scheme, scheme, kjson.SerializerOptions{}),
		strict: kjson.NewSerializerWithOptions(kindSniffer{}, scheme, scheme, kjson.SerializerOptions{Strict: true}),
	}
}

// decodeJSON decodes with d; an error where the default would have failed
// to read apiVersion and kind is that failure, as the serializer reports
// it first.
func decodeJSON(d runtime.Decoder, body []byte, gvk *schema.GroupVersionKind, into runtime.Object) (runtime.Object, *schema.GroupVersionKind, error) {
	obj, got, err := d.Decode(body, gvk, into)
	if err != nil {
		if _, isStrict := runtime.AsStrictDecodingError(err); !isStrict {
			if _, kindErr := kjson.DefaultMetaFactory.Interpret(body); kindErr != nil {
				return nil, nil, kindErr
			}
		}
	}
	return obj, got, err
}

// sniffKind returns the last apiVersion and kind of the JSON object in
// data; ok is false when it cannot be sure.
func sniffKind(data []byte) (apiVersion, kind string, ok bool) {
	i := skipSpace(data, 0)
	if i >= len(data) || data[i] != '{' {
		return "", "", false
	}
	i = skipSpace(data, i+1)
	if i < len(data) && data[i] == '}' {
		return "", "", skipSpace(data, i+1) == len(data)
	}
	for {
		key, next, ok := plainString(data, i)
		if !ok {
			return "", "", false
		}
		i = skipSpace(data, next)
		if i >= len(data) || data[i] != ':' {
			return "", "", false
		}
		i = skipSpace(data, i+1)
		switch {
		case key == "apiVersion" || key == "kind":
			value, next, ok := plainString(data, i)
			if !ok {
				return "", "", false
			}
			if key == "kind" {
				kind = value
			} else {
				apiVersion = value
			}
			i = next
		case strings.EqualFold(key, "apiVersion") || strings.EqualFold(key, "kind"):
			return "", "", false // encoding/json matches keys case-insensitively
		default:
			if i, ok = skipValue(data, i); !ok {
				return "", "", false
			}
		}
		i = skipSpace(data, i)
		if i >= len(data) {
			return "", "", false
		}
		switch data[i] {
		case ',':
			i = skipSpace(data, i+1)
		case '}':
			return apiVersion, kind, skipSpace(data, i+1) == len(data)
		default:
			return "", "", false
		}
	}
}

func skipSpace(data []byte, i int) int {
	for i < len(data) && (data[i] == ' ' || data[i] == '\t' || data[i] == '\n' || data[i] == '\r') {
		i++
	}
	return i
}

// plainString reads the string at data[i] when it is printable ASCII
// without escapes, returning the index after it.
func plainString(data []byte, i int) (string, int, bool) {
	if i >= len(data) || data[i] != '"' {
		return "", i, false
	}
	for j := i + 1; j < len(data); j++ {
		switch c := data[j]; {
		case c == '"':
			return string(data[i+1 : j]), j + 1, true
		case c == '\\' || c < 0x20 || c >= 0x7f:
			return "", i, false
		}
	}
	return "", i, false
}

// skipValue returns the index after the value starting at data[i],
// matching brackets and skipping strings; it does not check what it skips.
func skipValue(data []byte, i int) (int, bool) {
	depth := 0
	for ; i < len(data); i++ {
		switch data[i] {
		case '"':
			for i++; i < len(data) && data[i] != '"'; i++ {
				if data[i] == '\\' {
					i++
				}
			}
			if i >= len(data) {
				return i, false
			}
		case '{', '[':
			depth++
		case '}', ']':
			if depth == 0 {
				return i, true // the end of the enclosing object
			}
			depth--
		case ',':
			if depth == 0 {
				return i, true
			}
		}
		if depth == 0 && (data[i] == '"' || data[i] == '}' || data[i] == ']') {
			return i + 1, true
		}
	}
	return i, depth == 0
}

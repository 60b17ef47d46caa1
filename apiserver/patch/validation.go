package patch

import (
	"bytes"
	stdjson "encoding/json"
	"fmt"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer/json"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/yaml"

	"github.com/devplane/devplane/apiserver/builtin"
)

// FieldValidation returns the effective fieldValidation directive of a
// request: kube defaults an empty value to Warn and rejects unknown ones.
func FieldValidation(directive string) (string, error) {
	switch directive {
	case "":
		return metav1.FieldValidationWarn, nil
	case metav1.FieldValidationIgnore, metav1.FieldValidationWarn, metav1.FieldValidationStrict:
		return directive, nil
	}
	errs := field.ErrorList{field.NotSupported(field.NewPath("fieldValidation"), directive,
		[]string{metav1.FieldValidationIgnore, metav1.FieldValidationWarn, metav1.FieldValidationStrict})}
	return "", apierrors.NewBadRequest(errs.ToAggregate().Error())
}

// checksFields reports whether the directive asks for unknown and duplicate
// field detection at all.
func checksFields(directive string) bool {
	return directive == metav1.FieldValidationWarn || directive == metav1.FieldValidationStrict
}

// Decoders for create and update bodies. The strict ones report unknown and
// duplicate fields as a runtime.StrictDecodingError next to a decoded object.
var (
	jsonDecoder       = json.NewSerializerWithOptions(json.DefaultMetaFactory, builtin.Scheme, builtin.Scheme, json.SerializerOptions{})
	strictJSONDecoder = json.NewSerializerWithOptions(json.DefaultMetaFactory, builtin.Scheme, builtin.Scheme, json.SerializerOptions{Strict: true})
	yamlDecoder       = json.NewSerializerWithOptions(json.DefaultMetaFactory, builtin.Scheme, builtin.Scheme, json.SerializerOptions{Yaml: true})
	strictYAMLDecoder = json.NewSerializerWithOptions(json.DefaultMetaFactory, builtin.Scheme, builtin.Scheme, json.SerializerOptions{Yaml: true, Strict: true})
)

func decoderFor(isYAML, strict bool) runtime.Decoder {
	switch {
	case isYAML && strict:
		return strictYAMLDecoder
	case isYAML:
		return yamlDecoder
	case strict:
		return strictJSONDecoder
	}
	return jsonDecoder
}

// DecodeBody decodes a create or update body (JSON, or YAML when isYAML) as
// gvk, the kind served at the request's path, honouring the fieldValidation
// directive ("" means Warn, as in kube). Kinds unknown to builtin.Scheme
// (custom resources) decode as *unstructured.Unstructured.
//
// With Warn the unknown and duplicate fields come back as warnings, one per
// field, ready for `Warning: 299 - "<text>"` headers. With Strict they are a
// 400 worded as kube-apiserver does:
// `Deployment in version "v1" cannot be handled as a Deployment: strict
// decoding error: unknown field "spec.foo"`.
func DecodeBody(body []byte, isYAML bool, gvk schema.GroupVersionKind, directive string) (runtime.Object, []string, error) {
	directive, err := FieldValidation(directive)
	if err != nil {
		return nil, nil, err
	}
	into := newObject(gvk)
	obj, dataGVK, err := decoderFor(isYAML, checksFields(directive)).Decode(body, &gvk, into)
	if err == nil {
		return obj, nil, nil
	}
	strictErr, isStrict := runtime.AsStrictDecodingError(err)
	if isStrict && obj != nil && directive == metav1.FieldValidationWarn {
		return obj, warningsFrom(strictErr.Errors()), nil
	}
	return nil, nil, decodeError(err, gvk, dataGVK, body)
}

// decodeError words a body decoding failure like kube-apiserver's
// transformDecodeError.
func decodeError(err error, served schema.GroupVersionKind, data *schema.GroupVersionKind, body []byte) error {
	if data != nil && data.Kind != "" {
		return apierrors.NewBadRequest(fmt.Sprintf("%s in version %q cannot be handled as a %s: %v", data.Kind, data.Version, served.Kind, err))
	}
	return apierrors.NewBadRequest(fmt.Sprintf("the object provided is unrecognized (must be of type %s): %v (%s)", served.Kind, err, summarize(body, 30)))
}

// summarize shortens a body for an error message like kube's summarizeData.
func summarize(body []byte, max int) string {
	if len(body) <= max {
		return string(body)
	}
	return string(body[:max]) + " ..."
}

// newObject returns an empty object of gvk: typed when builtin.Scheme knows
// the kind, unstructured otherwise.
func newObject(gvk schema.GroupVersionKind) runtime.Object {
	if obj, err := builtin.Scheme.New(gvk); err == nil {
		obj.GetObjectKind().SetGroupVersionKind(gvk)
		return obj
	}
	u := &unstructured.Unstructured{Object: map[string]any{}}
	u.SetGroupVersionKind(gvk)
	return u
}

// YAML strict errors arrive as one error listing every violation on its own
// line; kube sends one warning per line.
const (
	yamlErrorsShortPrefix = "yaml: unmarshal errors:\n"
	yamlErrorsLongPrefix  = "error converting YAML to JSON: yaml: unmarshal errors:\n"
)

func warningsFrom(errs []error) []string {
	var out []string
	for _, e := range errs {
		text := e.Error()
		rest, found := strings.CutPrefix(text, yamlErrorsShortPrefix)
		if !found {
			rest, found = strings.CutPrefix(text, yamlErrorsLongPrefix)
		}
		if !found {
			out = append(out, text)
			continue
		}
		for _, line := range strings.Split(rest, "\n") {
			out = append(out, strings.TrimSpace(line))
		}
	}
	return out
}

// CheckApplyBody runs kube's field validation for a server-side apply body
// after the apply itself succeeded: unknown fields are already rejected by
// the schema, so only duplicate fields remain. Strict gives kube's 400
// "error strict decoding patch: ...", Warn gives warnings.
func CheckApplyBody(body []byte, directive string) ([]string, error) {
	directive, err := FieldValidation(directive)
	if err != nil || !checksFields(directive) {
		return nil, err
	}
	if jsonWithoutDuplicates(body) {
		return nil, nil // what the YAML check finds nothing in, found faster
	}
	if err := yaml.UnmarshalStrict(body, &map[string]any{}); err != nil {
		if directive == metav1.FieldValidationStrict {
			return nil, apierrors.NewBadRequest(fmt.Sprintf("error strict decoding patch: %v", err))
		}
		return warningsFrom([]error{err}), nil
	}
	return nil, nil
}

// jsonWithoutDuplicates reports whether body is a JSON object in which no
// object repeats a member name, with nothing the YAML parser could read
// differently (escaped names, surrogate escapes): then the strict YAML
// decoding finds no error. kubectl sends apply bodies as JSON, and the
// YAML parser took several milliseconds over a large CRD. false means
// "not known": the YAML check runs, and reports as before.
func jsonWithoutDuplicates(body []byte) bool {
	body = bytes.TrimSpace(body)
	if len(body) == 0 || body[0] != '{' || bytes.IndexByte(body, '\t') >= 0 || !stdjson.Valid(body) {
		return false // tabs: JSON space, but not all YAML allows
	}
	// One entry per open bracket: the member names of an object, nil for
	// an array.
	var open []map[string]bool
	expectName := false
	for i := 0; i < len(body); i++ {
		switch body[i] {
		case '{':
			open = append(open, map[string]bool{})
			expectName = true
		case '[':
			open = append(open, nil)
			expectName = false
		case '}', ']':
			open = open[:len(open)-1]
			expectName = false
		case ',':
			expectName = open[len(open)-1] != nil
		case '"':
			end := i + 1
			escaped := false
			for ; body[end] != '"'; end++ {
				if body[end] == '\\' {
					escaped = true
					switch body[end+1] {
					case '"', '\\', 'n', 't', 'r', 'b', 'f':
					case 'u':
						if body[end+2] == 'd' || body[end+2] == 'D' {
							return false // a surrogate half: YAML decodes it its own way
						}
					default:
						return false // \/: valid JSON, not an escape YAML knows
					}
					end++
				}
			}
			if expectName {
				names := open[len(open)-1]
				name := string(body[i+1 : end])
				if escaped || names[name] {
					return false
				}
				names[name] = true
				expectName = false
			}
			i = end
		}
	}
	return true
}

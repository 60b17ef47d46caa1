package openapi

// The protobuf form of a v2 member is what gnostic makes of its JSON
// (openapi_v2.NewDocument on a yaml.Node tree, values kept as YAML in
// Any), but gnostic spends most of its time building node trees and
// marshalling them to YAML. The transcoder here reads the member's JSON
// once and fills gnostic's messages directly, following gnostic's rules for
// the shapes Kubernetes documents use. Anything outside those shapes (a key
// gnostic would reject, a value of an unexpected type, a rarely used field)
// makes it give up with errFallback, and the member goes through gnostic as
// before: the two must agree byte for byte (v2transcode_test.go).

import (
	"bytes"
	"errors"
	"strconv"
	"strings"
	"unsafe"

	"github.com/google/gnostic-models/compiler"
	openapi_v2 "github.com/google/gnostic-models/openapiv2"
)

var errFallback = errors.New("openapi v2: member left to gnostic")

// transcodeV2Member converts a member with the transcoder, or through
// gnostic when the transcoder leaves it.
func transcodeV2Member(section int, member []byte) (*openapi_v2.Document, error) {
	t := &v2Transcoder{jsonScanner: jsonScanner{data: member}}
	doc, err := t.member(section)
	if err == nil {
		return doc, nil
	}
	return gnosticV2Member(section, member)
}

type v2Transcoder struct {
	jsonScanner
	yaml yamlWriter
}

func (t *v2Transcoder) member(section int) (*openapi_v2.Document, error) {
	name, err := t.str()
	if err != nil || !t.expect(':') {
		return nil, errFallback
	}
	var doc *openapi_v2.Document
	if section == pathsSection {
		if !strings.HasPrefix(name, "/") { // gnostic: a vendor extension or invalid
			return nil, errFallback
		}
		item, err := t.pathItem()
		if err != nil {
			return nil, err
		}
		doc = &openapi_v2.Document{Paths: &openapi_v2.Paths{Path: []*openapi_v2.NamedPathItem{{Name: name, Value: item}}}}
	} else {
		schema, err := t.schema()
		if err != nil {
			return nil, err
		}
		doc = &openapi_v2.Document{Definitions: &openapi_v2.Definitions{AdditionalProperties: []*openapi_v2.NamedSchema{{Name: name, Value: schema}}}}
	}
	if t.skipSpace(); t.at != len(t.data) {
		return nil, errFallback
	}
	return doc, nil
}

// Tokens. Strings without escapes point into the fragment's JSON, which
// is never modified, instead of being copied: the messages built from them
// only live until they are marshalled.

func (t *v2Transcoder) peek() byte {
	t.skipSpace()
	if t.at < len(t.data) {
		return t.data[t.at]
	}
	return 0
}

func (t *v2Transcoder) str() (string, error) {
	if t.peek() != '"' {
		return "", errFallback
	}
	value, ok := t.stringView()
	if !ok {
		return "", errFallback
	}
	return value, nil
}

func (t *v2Transcoder) boolean() (bool, error) {
	switch {
	case bytes.HasPrefix(t.data[t.at:], []byte("true")):
		t.at += 4
		return true, nil
	case bytes.HasPrefix(t.data[t.at:], []byte("false")):
		t.at += 5
		return false, nil
	}
	return false, errFallback
}

// numberText is a number token as gnostic's nodes hold it, and whether it
// is an !!int there (see jsonScanner.number).
func (t *v2Transcoder) numberText() (string, bool, error) {
	if c := t.peek(); c != '-' && (c < '0' || c > '9') {
		return "", false, errFallback
	}
	token := t.numberToken()
	text := unsafe.String(unsafe.SliceData(token), len(token))
	return text, isYAMLInt(text), nil
}

func (t *v2Transcoder) integer() (int64, error) {
	text, _, err := t.numberText()
	if err != nil {
		return 0, err
	}
	v, err := strconv.ParseInt(text, 10, 64)
	if err != nil { // an !!int only as uint64, or a float: gnostic rejects it
		return 0, errFallback
	}
	return v, nil
}

func (t *v2Transcoder) float() (float64, error) {
	text, _, err := t.numberText()
	if err != nil {
		return 0, err
	}
	v, err := strconv.ParseFloat(text, 64)
	if err != nil {
		return 0, errFallback
	}
	return v, nil
}

// object calls member for each member name, the cursor on its value.
func (t *v2Transcoder) object(member func(name string) error) error {
	if !t.expect('{') {
		return errFallback
	}
	if t.expect('}') {
		return nil
	}
	for {
		name, err := t.str()
		if err != nil {
			return err
		}
		if !t.expect(':') {
			return errFallback
		}
		if err := member(name); err != nil {
			return err
		}
		if t.expect('}') {
			return nil
		}
		if !t.expect(',') {
			return errFallback
		}
	}
}

// array calls item for each item, the cursor on it.
func (t *v2Transcoder) array(item func() error) error {
	if !t.expect('[') {
		return errFallback
	}
	if t.expect(']') {
		return nil
	}
	for {
		if err := item(); err != nil {
			return err
		}
		if t.expect(']') {
			return nil
		}
		if !t.expect(',') {
			return errFallback
		}
	}
}

// strings reads an array of strings (gnostic would also take numbers and
// nulls as strings: left to it).
func (t *v2Transcoder) strings() ([]string, error) {
	var out []string
	err := t.array(func() error {
		s, err := t.str()
		out = append(out, s)
		return err
	})
	return out, err
}

// seen marks a known key as read: gnostic takes the first of duplicates,
// which the transcoder does not try to.
type seen uint64

func (s *seen) first(bit uint) error {
	if *s&(1<<bit) != 0 {
		return errFallback
	}
	*s |= 1 << bit
	return nil
}

// any is gnostic's Any: the value as yaml.v3 marshals its node.
func (t *v2Transcoder) any() (*openapi_v2.Any, error) {
	t.skipSpace()
	start := t.at
	t.yaml.reset()
	if t.yaml.value(&t.jsonScanner, -1, yamlRoot) {
		return &openapi_v2.Any{Yaml: t.yaml.text()}, nil
	}
	// Something the writer does not do: yaml.v3 on the value's node.
	t.at = start
	node, err := t.value()
	if err != nil {
		return nil, errFallback
	}
	return &openapi_v2.Any{Yaml: string(compiler.Marshal(node))}, nil
}

func (t *v2Transcoder) namedAny(name string) (*openapi_v2.NamedAny, error) {
	value, err := t.any()
	return &openapi_v2.NamedAny{Name: name, Value: value}, err
}

func isExtension(name string) bool { return strings.HasPrefix(name, "x-") }

func (t *v2Transcoder) pathItem() (*openapi_v2.PathItem, error) {
	item := &openapi_v2.PathItem{}
	var keys seen
	err := t.object(func(name string) error {
		var err error
		operation := func(bit uint, to **openapi_v2.Operation) error {
			if err := keys.first(bit); err != nil {
				return err
			}
			*to, err = t.operation()
			return err
		}
		switch name {
		case "$ref":
			if err = keys.first(0); err == nil {
				item.XRef, err = t.str()
			}
		case "get":
			err = operation(1, &item.Get)
		case "put":
			err = operation(2, &item.Put)
		case "post":
			err = operation(3, &item.Post)
		case "delete":
			err = operation(4, &item.Delete)
		case "options":
			err = operation(5, &item.Options)
		case "head":
			err = operation(6, &item.Head)
		case "patch":
			err = operation(7, &item.Patch)
		case "parameters":
			if err = keys.first(8); err == nil {
				item.Parameters, err = t.parameters()
			}
		default:
			if !isExtension(name) {
				return errFallback
			}
			var extension *openapi_v2.NamedAny
			extension, err = t.namedAny(name)
			item.VendorExtension = append(item.VendorExtension, extension)
		}
		return err
	})
	return item, err
}

func (t *v2Transcoder) operation() (*openapi_v2.Operation, error) {
	op := &openapi_v2.Operation{}
	var keys seen
	err := t.object(func(name string) error {
		var err error
		switch name {
		case "tags":
			if err = keys.first(0); err == nil {
				op.Tags, err = t.strings()
			}
		case "summary":
			if err = keys.first(1); err == nil {
				op.Summary, err = t.str()
			}
		case "description":
			if err = keys.first(2); err == nil {
				op.Description, err = t.str()
			}
		case "operationId":
			if err = keys.first(3); err == nil {
				op.OperationId, err = t.str()
			}
		case "produces":
			if err = keys.first(4); err == nil {
				op.Produces, err = t.strings()
			}
		case "consumes":
			if err = keys.first(5); err == nil {
				op.Consumes, err = t.strings()
			}
		case "parameters":
			if err = keys.first(6); err == nil {
				op.Parameters, err = t.parameters()
			}
		case "responses":
			if err = keys.first(7); err == nil {
				op.Responses, err = t.responses()
			}
		case "schemes":
			if err = keys.first(8); err == nil {
				op.Schemes, err = t.strings()
				for _, scheme := range op.Schemes {
					if scheme != "http" && scheme != "https" && scheme != "ws" && scheme != "wss" {
						return errFallback
					}
				}
			}
		case "deprecated":
			if err = keys.first(9); err == nil {
				op.Deprecated, err = t.boolean()
			}
		default: // externalDocs and security too: left to gnostic
			if !isExtension(name) {
				return errFallback
			}
			var extension *openapi_v2.NamedAny
			extension, err = t.namedAny(name)
			op.VendorExtension = append(op.VendorExtension, extension)
		}
		return err
	})
	if err == nil && op.Responses == nil { // required
		return nil, errFallback
	}
	return op, err
}

func (t *v2Transcoder) parameters() ([]*openapi_v2.ParametersItem, error) {
	var out []*openapi_v2.ParametersItem
	err := t.array(func() error {
		p, err := t.parameter()
		out = append(out, p)
		return err
	})
	return out, err
}

// v2Parameter holds a parameter's members until "in" tells which message
// gnostic makes of it.
type v2Parameter struct {
	keys                         seen
	ref, name, in, description   string
	typ, format                  string
	required, unique, allowEmpty bool
	schema                       *openapi_v2.Schema
	extensions                   []*openapi_v2.NamedAny
}

const (
	keyRef = iota
	keyName
	keyIn
	keyDescription
	keyType
	keyFormat
	keyRequired
	keyUniqueItems
	keyAllowEmptyValue
	keySchema
)

func (t *v2Transcoder) parameter() (*openapi_v2.ParametersItem, error) {
	var p v2Parameter
	err := t.object(func(name string) error {
		field := func(bit uint, read func() error) error {
			if err := p.keys.first(bit); err != nil {
				return err
			}
			return read()
		}
		text := func(bit uint, to *string) error {
			return field(bit, func() (err error) { *to, err = t.str(); return })
		}
		flag := func(bit uint, to *bool) error {
			return field(bit, func() (err error) { *to, err = t.boolean(); return })
		}
		switch name {
		case "$ref":
			return text(keyRef, &p.ref)
		case "name":
			return text(keyName, &p.name)
		case "in":
			return text(keyIn, &p.in)
		case "description":
			return text(keyDescription, &p.description)
		case "type":
			return text(keyType, &p.typ)
		case "format":
			return text(keyFormat, &p.format)
		case "required":
			return flag(keyRequired, &p.required)
		case "uniqueItems":
			return flag(keyUniqueItems, &p.unique)
		case "allowEmptyValue":
			return flag(keyAllowEmptyValue, &p.allowEmpty)
		case "schema":
			return field(keySchema, func() (err error) { p.schema, err = t.schema(); return })
		}
		if !isExtension(name) { // items, default, enum, bounds...: left to gnostic
			return errFallback
		}
		extension, err := t.namedAny(name)
		p.extensions = append(p.extensions, extension)
		return err
	})
	if err != nil {
		return nil, err
	}
	return p.item()
}

func (p *v2Parameter) has(bits ...uint) bool {
	for _, bit := range bits {
		if p.keys&(1<<bit) == 0 {
			return false
		}
	}
	return true
}

// only reports whether no key outside bits was given.
func (p *v2Parameter) only(bits ...uint) bool {
	var allowed seen
	for _, bit := range bits {
		allowed |= 1 << bit
	}
	return p.keys&^allowed == 0
}

// item is gnostic's ParametersItem: a JsonReference when there is a $ref
// (no parameter form allows one), else a body parameter or, by "in", one of
// the non-body forms.
func (p *v2Parameter) item() (*openapi_v2.ParametersItem, error) {
	if p.has(keyRef) {
		if !p.only(keyRef, keyDescription) || len(p.extensions) > 0 {
			return nil, errFallback
		}
		return &openapi_v2.ParametersItem{Oneof: &openapi_v2.ParametersItem_JsonReference{
			JsonReference: &openapi_v2.JsonReference{XRef: p.ref, Description: p.description}}}, nil
	}
	var parameter *openapi_v2.Parameter
	switch p.in {
	case "body":
		if !p.has(keyIn, keyName, keySchema) || !p.only(keyIn, keyName, keySchema, keyDescription, keyRequired) {
			return nil, errFallback
		}
		parameter = &openapi_v2.Parameter{Oneof: &openapi_v2.Parameter_BodyParameter{BodyParameter: &openapi_v2.BodyParameter{
			Description: p.description, Name: p.name, In: p.in, Required: p.required, Schema: p.schema, VendorExtension: p.extensions,
		}}}
	case "query", "path":
		if p.has(keySchema) || p.has(keyType) && !validParameterType(p.typ) {
			return nil, errFallback
		}
		nonBody := &openapi_v2.NonBodyParameter{}
		if p.in == "query" {
			nonBody.Oneof = &openapi_v2.NonBodyParameter_QueryParameterSubSchema{QueryParameterSubSchema: &openapi_v2.QueryParameterSubSchema{
				Required: p.required, In: p.in, Description: p.description, Name: p.name, AllowEmptyValue: p.allowEmpty,
				Type: p.typ, Format: p.format, UniqueItems: p.unique, VendorExtension: p.extensions,
			}}
		} else {
			if !p.has(keyRequired) || p.has(keyAllowEmptyValue) {
				return nil, errFallback
			}
			nonBody.Oneof = &openapi_v2.NonBodyParameter_PathParameterSubSchema{PathParameterSubSchema: &openapi_v2.PathParameterSubSchema{
				Required: p.required, In: p.in, Description: p.description, Name: p.name,
				Type: p.typ, Format: p.format, UniqueItems: p.unique, VendorExtension: p.extensions,
			}}
		}
		parameter = &openapi_v2.Parameter{Oneof: &openapi_v2.Parameter_NonBodyParameter{NonBodyParameter: nonBody}}
	default: // header, formData, none
		return nil, errFallback
	}
	return &openapi_v2.ParametersItem{Oneof: &openapi_v2.ParametersItem_Parameter{Parameter: parameter}}, nil
}

func validParameterType(typ string) bool {
	switch typ {
	case "string", "number", "boolean", "integer", "array":
		return true
	}
	return false
}

func (t *v2Transcoder) responses() (*openapi_v2.Responses, error) {
	responses := &openapi_v2.Responses{}
	err := t.object(func(name string) error {
		if isExtension(name) {
			extension, err := t.namedAny(name)
			responses.VendorExtension = append(responses.VendorExtension, extension)
			return err
		}
		if !isResponseCode(name) {
			return errFallback
		}
		value, err := t.responseValue()
		responses.ResponseCode = append(responses.ResponseCode, &openapi_v2.NamedResponseValue{Name: name, Value: value})
		return err
	})
	return responses, err
}

// isResponseCode is gnostic's ^([0-9]{3})$|^(default)$.
func isResponseCode(name string) bool {
	if name == "default" {
		return true
	}
	return len(name) == 3 && name[0] >= '0' && name[0] <= '9' && name[1] >= '0' && name[1] <= '9' && name[2] >= '0' && name[2] <= '9'
}

// responseValue is a Response, or a JsonReference when there is a $ref.
func (t *v2Transcoder) responseValue() (*openapi_v2.ResponseValue, error) {
	response := &openapi_v2.Response{}
	var ref string
	var keys seen
	err := t.object(func(name string) error {
		var err error
		switch name {
		case "description":
			if err = keys.first(0); err == nil {
				response.Description, err = t.str()
			}
		case "schema":
			if err = keys.first(1); err == nil {
				var schema *openapi_v2.Schema
				if schema, err = t.schema(); err == nil && schema.GetType() != nil && strings.Contains(strings.Join(schema.Type.Value, ","), "file") {
					return errFallback // perhaps a FileSchema
				}
				response.Schema = &openapi_v2.SchemaItem{Oneof: &openapi_v2.SchemaItem_Schema{Schema: schema}}
			}
		case "$ref":
			if err = keys.first(2); err == nil {
				ref, err = t.str()
			}
		default: // headers, examples: left to gnostic
			if !isExtension(name) {
				return errFallback
			}
			var extension *openapi_v2.NamedAny
			extension, err = t.namedAny(name)
			response.VendorExtension = append(response.VendorExtension, extension)
		}
		return err
	})
	switch {
	case err != nil:
		return nil, err
	case keys&(1<<2) != 0:
		if keys&^(1<<0|1<<2) != 0 || len(response.VendorExtension) > 0 {
			return nil, errFallback
		}
		return &openapi_v2.ResponseValue{Oneof: &openapi_v2.ResponseValue_JsonReference{
			JsonReference: &openapi_v2.JsonReference{XRef: ref, Description: response.Description}}}, nil
	case keys&(1<<0) == 0: // description is required
		return nil, errFallback
	}
	return &openapi_v2.ResponseValue{Oneof: &openapi_v2.ResponseValue_Response{Response: response}}, nil
}

// schema is gnostic's Schema of a JSON object (gnostic makes empty schemas
// of other values: left to it).
func (t *v2Transcoder) schema() (*openapi_v2.Schema, error) {
	s := &openapi_v2.Schema{}
	var keys seen
	err := t.object(func(name string) error {
		text := func(bit uint, to *string) (err error) {
			if err = keys.first(bit); err == nil {
				*to, err = t.str()
			}
			return err
		}
		number := func(bit uint, to *float64) (err error) {
			if err = keys.first(bit); err == nil {
				*to, err = t.float()
			}
			return err
		}
		integer := func(bit uint, to *int64) (err error) {
			if err = keys.first(bit); err == nil {
				*to, err = t.integer()
			}
			return err
		}
		flag := func(bit uint, to *bool) (err error) {
			if err = keys.first(bit); err == nil {
				*to, err = t.boolean()
			}
			return err
		}
		anyValue := func(bit uint, to **openapi_v2.Any) (err error) {
			if err = keys.first(bit); err == nil {
				*to, err = t.any()
			}
			return err
		}
		switch name {
		case "$ref":
			return text(1, &s.XRef)
		case "format":
			return text(2, &s.Format)
		case "title":
			return text(3, &s.Title)
		case "description":
			return text(4, &s.Description)
		case "default":
			return anyValue(5, &s.Default)
		case "multipleOf":
			return number(6, &s.MultipleOf)
		case "maximum":
			return number(7, &s.Maximum)
		case "exclusiveMaximum":
			return flag(8, &s.ExclusiveMaximum)
		case "minimum":
			return number(9, &s.Minimum)
		case "exclusiveMinimum":
			return flag(10, &s.ExclusiveMinimum)
		case "maxLength":
			return integer(11, &s.MaxLength)
		case "minLength":
			return integer(12, &s.MinLength)
		case "pattern":
			return text(13, &s.Pattern)
		case "maxItems":
			return integer(14, &s.MaxItems)
		case "minItems":
			return integer(15, &s.MinItems)
		case "uniqueItems":
			return flag(16, &s.UniqueItems)
		case "maxProperties":
			return integer(17, &s.MaxProperties)
		case "minProperties":
			return integer(18, &s.MinProperties)
		case "required":
			err := keys.first(19)
			if err == nil {
				s.Required, err = t.strings()
			}
			return err
		case "enum":
			err := keys.first(20)
			if err == nil {
				err = t.array(func() error {
					value, err := t.any()
					s.Enum = append(s.Enum, value)
					return err
				})
			}
			return err
		case "additionalProperties":
			err := keys.first(21)
			if err != nil {
				return err
			}
			switch t.peek() {
			case '{':
				var schema *openapi_v2.Schema
				schema, err = t.schema()
				s.AdditionalProperties = &openapi_v2.AdditionalPropertiesItem{Oneof: &openapi_v2.AdditionalPropertiesItem_Schema{Schema: schema}}
			case 't', 'f':
				var b bool
				b, err = t.boolean()
				s.AdditionalProperties = &openapi_v2.AdditionalPropertiesItem{Oneof: &openapi_v2.AdditionalPropertiesItem_Boolean{Boolean: b}}
			default:
				return errFallback
			}
			return err
		case "type":
			err := keys.first(22)
			if err != nil {
				return err
			}
			s.Type = &openapi_v2.TypeItem{}
			if t.peek() == '[' {
				s.Type.Value, err = t.strings()
			} else {
				var typ string
				typ, err = t.str()
				s.Type.Value = []string{typ}
			}
			return err
		case "items":
			err := keys.first(23)
			if err == nil {
				var schema *openapi_v2.Schema
				schema, err = t.schema()
				s.Items = &openapi_v2.ItemsItem{Schema: []*openapi_v2.Schema{schema}}
			}
			return err
		case "allOf":
			err := keys.first(24)
			if err == nil {
				err = t.array(func() error {
					schema, err := t.schema()
					s.AllOf = append(s.AllOf, schema)
					return err
				})
			}
			return err
		case "properties":
			err := keys.first(25)
			if err == nil {
				s.Properties = &openapi_v2.Properties{}
				err = t.object(func(name string) error {
					schema, err := t.schema()
					s.Properties.AdditionalProperties = append(s.Properties.AdditionalProperties, &openapi_v2.NamedSchema{Name: name, Value: schema})
					return err
				})
			}
			return err
		case "discriminator":
			return text(26, &s.Discriminator)
		case "readOnly":
			return flag(27, &s.ReadOnly)
		case "example":
			return anyValue(30, &s.Example)
		}
		if !isExtension(name) { // xml, externalDocs and unknown keys: left to gnostic
			return errFallback
		}
		extension, err := t.namedAny(name)
		s.VendorExtension = append(s.VendorExtension, extension)
		return err
	})
	return s, err
}

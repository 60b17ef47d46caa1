package openapi

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"unsafe"

	"github.com/google/gnostic-models/compiler"
	openapi_v2 "github.com/google/gnostic-models/openapiv2"
	yaml "go.yaml.in/yaml/v3"
)

// parseV2Document is gnostic's ParseDocument (what kube-openapi's handler
// converts JSON with) for JSON input: the yaml.Node tree gnostic reads is
// built by a JSON scanner instead of the YAML parser, several times faster
// and not behind the global lock gnostic's reader takes, so fragments are
// converted in parallel.
func parseV2Document(data []byte) (*openapi_v2.Document, error) {
	scanner := &jsonScanner{data: data}
	root, err := scanner.value()
	if err != nil {
		return nil, err
	}
	if scanner.skipSpace(); scanner.at < len(data) {
		return nil, scanner.errorf("data after the document")
	}
	return openapi_v2.NewDocument(root, compiler.NewContextWithExtensions("$root", root, nil, nil))
}

// jsonScanner reads JSON into the yaml.Node tree yaml.v3 parses it to: the
// same kinds, tags and values (numbers are !!int when they fit 64 bits, as
// yaml resolves them, !!float otherwise).
type jsonScanner struct {
	data []byte
	at   int
}

func (s *jsonScanner) errorf(format string, args ...any) error {
	return fmt.Errorf("openapi v2 JSON at offset %d: %s", s.at, fmt.Sprintf(format, args...))
}

func (s *jsonScanner) skipSpace() {
	for s.at < len(s.data) {
		switch s.data[s.at] {
		case ' ', '\t', '\n', '\r':
			s.at++
		default:
			return
		}
	}
}

// expect consumes c after any space, reporting whether it was there.
func (s *jsonScanner) expect(c byte) bool {
	s.skipSpace()
	if s.at < len(s.data) && s.data[s.at] == c {
		s.at++
		return true
	}
	return false
}

func (s *jsonScanner) value() (*yaml.Node, error) {
	s.skipSpace()
	if s.at >= len(s.data) {
		return nil, s.errorf("unexpected end")
	}
	switch c := s.data[s.at]; {
	case c == '{' || c == '[':
		return s.container(c)
	case c == '"':
		value, err := s.string()
		return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: value}, err
	case c == '-' || c >= '0' && c <= '9':
		return s.number(), nil
	}
	for _, literal := range []struct{ text, tag string }{{"true", "!!bool"}, {"false", "!!bool"}, {"null", "!!null"}} {
		if bytes.HasPrefix(s.data[s.at:], []byte(literal.text)) {
			s.at += len(literal.text)
			return &yaml.Node{Kind: yaml.ScalarNode, Tag: literal.tag, Value: literal.text}, nil
		}
	}
	return nil, s.errorf("unexpected %q", s.data[s.at])
}

func (s *jsonScanner) container(open byte) (*yaml.Node, error) {
	s.at++
	node, end := &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"}, byte('}')
	if open == '[' {
		node.Kind, node.Tag, end = yaml.SequenceNode, "!!seq", ']'
	}
	if s.expect(end) {
		return node, nil
	}
	for {
		if node.Kind == yaml.MappingNode {
			if s.skipSpace(); s.at >= len(s.data) || s.data[s.at] != '"' {
				return nil, s.errorf("expected a member name")
			}
			key, err := s.string()
			if err != nil {
				return nil, err
			}
			if !s.expect(':') {
				return nil, s.errorf("expected ':'")
			}
			node.Content = append(node.Content, &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: key})
		}
		child, err := s.value()
		if err != nil {
			return nil, err
		}
		node.Content = append(node.Content, child)
		if s.expect(end) {
			return node, nil
		}
		if !s.expect(',') {
			return nil, s.errorf("expected ',' or %q", end)
		}
	}
}

// string reads a JSON string; ones with escapes go through encoding/json.
func (s *jsonScanner) string() (string, error) {
	start := s.at
	escaped := false
	for s.at++; s.at < len(s.data); s.at++ {
		switch s.data[s.at] {
		case '\\':
			escaped = true
			s.at++
		case '"':
			s.at++
			raw := s.data[start:s.at]
			if !escaped {
				return string(raw[1 : len(raw)-1]), nil
			}
			var value string
			err := json.Unmarshal(raw, &value)
			return value, err
		}
	}
	return "", s.errorf("unterminated string")
}

func (s *jsonScanner) number() *yaml.Node {
	text := string(s.numberToken())
	tag := "!!float"
	if isYAMLInt(text) {
		tag = "!!int"
	}
	return &yaml.Node{Kind: yaml.ScalarNode, Tag: tag, Value: text}
}

func (s *jsonScanner) numberToken() []byte {
	start := s.at
	for s.at < len(s.data) && bytes.IndexByte([]byte("+-0123456789.eE"), s.data[s.at]) >= 0 {
		s.at++
	}
	return s.data[start:s.at]
}

// isYAMLInt: yaml resolves a number to !!int when it fits 64 bits.
func isYAMLInt(text string) bool {
	if _, err := strconv.ParseInt(text, 10, 64); err == nil {
		return true
	}
	_, err := strconv.ParseUint(text, 10, 64)
	return err == nil
}

// stringView reads a JSON string like string, but one without escapes is
// returned as a view of data, not a copy: only for data never modified
// and strings not kept past it.
func (s *jsonScanner) stringView() (string, bool) {
	rest := s.data[s.at+1:]
	end := bytes.IndexByte(rest, '"')
	if end < 0 {
		return "", false
	}
	if bytes.IndexByte(rest[:end], '\\') >= 0 {
		value, err := s.string()
		return value, err == nil
	}
	s.at += end + 2
	return unsafe.String(unsafe.SliceData(rest), end), true
}

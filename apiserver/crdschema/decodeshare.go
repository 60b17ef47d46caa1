package crdschema

import (
	"sync"
	"unsafe"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
)

// A stored CRD is JSON this server wrote (sorted keys, no spaces), so
// equal schema subtrees are equal bytes. The decoder gives equal bytes one
// decoded node or property map, shared as CompactSchemas would share them
// afterwards: generated CRDs repeat most of their subtrees, and decoding
// each copy only for compaction to drop it was most of a restart's work.

// minShared is the smallest object worth a lookup: smaller ones cost
// little to decode twice.
const minShared = 128

// sharing is what the decoder needs to find and share equal subtrees.
type sharing struct {
	ends  []int32 // offset of each '{' → one past its matching '}'
	nodes map[string]*apiextensionsv1.JSONSchemaProps
	maps  map[string]map[string]apiextensionsv1.JSONSchemaProps
}

var endsPool = sync.Pool{New: func() any { return new([]int32) }}

// startSharing scans data once for where its objects end. A document
// nested deeper than maxDepth is not shared (decoding it bails anyway, and
// a skipped subtree must not hide its depth).
func (d *decoder) startSharing() {
	buf := endsPool.Get().(*[]int32)
	if cap(*buf) < len(d.data) {
		*buf = make([]int32, len(d.data))
	}
	ends := (*buf)[:len(d.data)]
	var stack []int32
	inString, escaped := false, false
	for i, c := range d.data {
		switch {
		case inString:
			switch {
			case escaped:
				escaped = false
			case c == '\\':
				escaped = true
			case c == '"':
				inString = false
			}
		case c == '"':
			inString = true
		case c == '{' || c == '[':
			stack = append(stack, int32(i))
			if len(stack) > maxDepth {
				endsPool.Put(buf)
				return
			}
		case c == '}' || c == ']':
			if len(stack) == 0 {
				endsPool.Put(buf)
				return // malformed: the decoder will say so
			}
			open := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			ends[open] = int32(i + 1)
		}
	}
	if len(stack) != 0 || inString {
		endsPool.Put(buf) // unclosed: some ends would be stale
		return
	}
	d.share = &sharing{ends: ends, nodes: map[string]*apiextensionsv1.JSONSchemaProps{},
		maps: map[string]map[string]apiextensionsv1.JSONSchemaProps{}}
	d.shareBuf = buf
}

// stopSharing returns the scan's buffer; the keys point into data, so the
// tables go with it.
func (d *decoder) stopSharing() {
	if d.shareBuf != nil {
		endsPool.Put(d.shareBuf)
	}
	d.share, d.shareBuf = nil, nil
}

// sharedKey is the bytes of the object at d.i when worth sharing.
func (d *decoder) sharedKey() (string, bool) {
	if d.share == nil || d.peek() != '{' {
		return "", false
	}
	end := int(d.share.ends[d.i])
	if end-d.i < minShared {
		return "", false
	}
	return unsafe.String(&d.data[d.i], end-d.i), true
}

// sharedProps decodes the schema object at d.i, or returns the node
// decoded from equal bytes before.
func (d *decoder) sharedProps() *apiextensionsv1.JSONSchemaProps {
	key, ok := d.sharedKey()
	if ok {
		if p, found := d.share.nodes[key]; found {
			d.i += len(key)
			return p
		}
	}
	start := d.i
	p := &apiextensionsv1.JSONSchemaProps{}
	d.props(p)
	if ok && d.i-start == len(key) { // decoded exactly the key's bytes
		d.share.nodes[key] = p
	}
	return p
}

// Package jsonw holds what devplane's hand-written JSON writers (stored
// CRDs, CRD schemas in OpenAPI form, OpenAPI definitions) share: members
// of an object appended to a buffer, and numbers formatted as the JSON
// encoders do. The two schema writers also share SchemaWriter, which
// writes schema members and values as spec.Schema.MarshalJSON does; the
// stored-CRD writer keeps encoding/json's quoting, which differs.
package jsonw

import (
	"math"
	"strconv"
)

// Appender appends to Buf; writers embed it.
type Appender struct{ Buf []byte }

// Key starts a member of the object being written: a comma unless it is
// the first, then the name, which needs no escaping.
func (a *Appender) Key(name string) {
	if a.Buf[len(a.Buf)-1] != '{' {
		a.Buf = append(a.Buf, ',')
	}
	a.Buf = append(a.Buf, '"')
	a.Buf = append(a.Buf, name...)
	a.Buf = append(a.Buf, '"', ':')
}

// Bool writes a true member; false is omitted (omitempty).
func (a *Appender) Bool(name string, value bool) {
	if value {
		a.Key(name)
		a.Buf = append(a.Buf, "true"...)
	}
}

// Int writes an integer member; nil is omitted.
func (a *Appender) Int(name string, value *int64) {
	if value != nil {
		a.Key(name)
		a.Buf = strconv.AppendInt(a.Buf, *value, 10)
	}
}

// AppendFloat formats a finite f as encoding/json and go-json-experiment
// (and ES6) do: plain notation between 1e-6 and 1e21, else an exponent
// without leading zeros.
func AppendFloat(dst []byte, f float64) []byte {
	format := byte('f')
	if abs := math.Abs(f); abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		format = 'e'
	}
	dst = strconv.AppendFloat(dst, f, format, -1, 64)
	if format == 'e' { // e-07 -> e-7
		if n := len(dst); n >= 4 && dst[n-4] == 'e' && dst[n-3] == '-' && dst[n-2] == '0' {
			dst[n-2] = dst[n-1]
			dst = dst[:n-1]
		}
	}
	return dst
}

// AppendEscaped appends the JSON escape of an ASCII byte that needs one
// ('"', '\\', a control character; encoding/json also escapes <, > and &),
// as the JSON encoders write it: a short escape where there is one, else
// \u00XX in lower-case hex.
func AppendEscaped(dst []byte, c byte) []byte {
	switch c {
	case '"', '\\':
		return append(dst, '\\', c)
	case '\b':
		return append(dst, '\\', 'b')
	case '\f':
		return append(dst, '\\', 'f')
	case '\n':
		return append(dst, '\\', 'n')
	case '\r':
		return append(dst, '\\', 'r')
	case '\t':
		return append(dst, '\\', 't')
	}
	const hexDigits = "0123456789abcdef"
	return append(dst, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xF])
}

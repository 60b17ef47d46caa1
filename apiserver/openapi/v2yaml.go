package openapi

// yamlWriter writes a JSON value as the YAML text yaml.v3's Marshal makes
// of the node gnostic builds for it (block style, indent 4, no line
// folding), for gnostic's Any. It reports false for what it does not do
// (long or multi-line keys, line and paragraph separators, strings that
// may read as timestamps, numbers a float64 cannot hold); the caller then
// asks yaml.v3. The rules follow yaml.v3's emitter: which style a scalar
// may take, how each style is written, how block collections indent.

import (
	"bytes"
	"strconv"
	"strings"
	"unicode/utf8"
	"unsafe"
)

type yamlWriter struct{ buf []byte }

// Where a node is written: at the root, as a mapping value or as a
// sequence item.
const (
	yamlRoot = iota
	yamlMapValue
	yamlSeqItem
)

func (w *yamlWriter) reset() { w.buf = w.buf[:0] }

func (w *yamlWriter) text() string {
	if n := len(w.buf); n == 0 || w.buf[n-1] != '\n' {
		w.buf = append(w.buf, '\n')
	}
	return string(w.buf)
}

// line starts a line at indent (a block scalar may have ended one).
func (w *yamlWriter) line(indent int) {
	if n := len(w.buf); n > 0 && w.buf[n-1] != '\n' {
		w.buf = append(w.buf, '\n')
	}
	for range indent {
		w.buf = append(w.buf, ' ')
	}
}

// childIndent is the indent of a collection or block scalar under a parent
// at indent parent: after "- " in a sequence, else the next multiple of 4.
func childIndent(parent, where int) int {
	switch where {
	case yamlRoot:
		return 0
	case yamlSeqItem:
		return parent + 2
	}
	return 4 * ((parent + 4) / 4)
}

// blockScalarIndent is the indent of a block scalar's lines: at the root,
// yaml.v3 indents them as a flow child of indent -1.
func blockScalarIndent(parent, where int) int {
	if where == yamlRoot {
		return 4
	}
	return childIndent(parent, where)
}

// value writes the JSON value at s's cursor, which it reads past.
func (w *yamlWriter) value(s *jsonScanner, parent, where int) bool {
	s.skipSpace()
	if s.at >= len(s.data) {
		return false
	}
	switch c := s.data[s.at]; {
	case c == '{' || c == '[':
		return w.collection(s, parent, where)
	case c == '"':
		value, ok := s.stringView()
		return ok && w.scalar(value, false, parent, where)
	case c == '-' || c >= '0' && c <= '9':
		token := s.numberToken()
		text := unsafe.String(unsafe.SliceData(token), len(token))
		if !isYAMLInt(text) {
			// !!float: plain when yaml.v3 reads it back as one, which it
			// does for any JSON number ParseFloat takes.
			if _, err := strconv.ParseFloat(text, 64); err != nil {
				return false
			}
		}
		w.plain(text, where)
		return true
	}
	for _, literal := range []string{"true", "false", "null"} {
		if bytes.HasPrefix(s.data[s.at:], []byte(literal)) {
			s.at += len(literal)
			w.plain(literal, where)
			return true
		}
	}
	return false
}

func (w *yamlWriter) plain(text string, where int) {
	if where != yamlRoot {
		w.buf = append(w.buf, ' ')
	}
	w.buf = append(w.buf, text...)
}

// collection writes a mapping or sequence: empty ones in flow style, others
// as blocks.
func (w *yamlWriter) collection(s *jsonScanner, parent, where int) bool {
	open := s.data[s.at]
	end := byte('}')
	if open == '[' {
		end = ']'
	}
	s.at++
	if s.expect(end) {
		if where != yamlRoot {
			w.buf = append(w.buf, ' ')
		}
		w.buf = append(w.buf, open, end)
		return true
	}
	indent := childIndent(parent, where)
	for first := true; ; first = false {
		switch {
		case first && where == yamlRoot:
		case first && where == yamlSeqItem: // on the line of the "- "
			w.buf = append(w.buf, ' ')
		default:
			w.line(indent)
		}
		if open == '[' {
			w.buf = append(w.buf, '-')
			if !w.value(s, indent, yamlSeqItem) {
				return false
			}
		} else {
			if s.skipSpace(); s.at >= len(s.data) || s.data[s.at] != '"' {
				return false
			}
			key, ok := s.stringView()
			if !ok || !w.scalar(key, true, indent, yamlRoot) || !s.expect(':') {
				return false
			}
			w.buf = append(w.buf, ':')
			if !w.value(s, indent, yamlMapValue) {
				return false
			}
		}
		if s.expect(end) {
			return true
		}
		if !s.expect(',') {
			return false
		}
	}
}

const (
	yamlPlain = iota
	yamlSingleQuoted
	yamlDoubleQuoted
	yamlLiteral
)

// scalar writes a string: a mapping key when key (then where is yamlRoot,
// written where the cursor is).
func (w *yamlWriter) scalar(value string, key bool, parent, where int) bool {
	if !utf8.ValidString(value) || strings.Contains(value, "\u2028") || strings.Contains(value, "\u2029") {
		return false
	}
	a := analyzeYAMLScalar(value)
	if key && (a.multiline || len(value) > 128) { // not a simple key
		return false
	}
	style := yamlPlain
	switch {
	case strings.Contains(value, "\n"):
		style = yamlLiteral
	default:
		str, sure := yamlResolvesToString(value)
		if !sure {
			return false
		}
		if !str { // tagged !!str, read back as something else: quoted
			style = yamlDoubleQuoted
		}
	}
	if key && a.multiline {
		style = yamlDoubleQuoted
	}
	if style == yamlPlain && !a.blockPlain {
		style = yamlSingleQuoted
	}
	if style == yamlSingleQuoted && !a.singleQuoted {
		style = yamlDoubleQuoted
	}
	if style == yamlLiteral && (!a.block || key) {
		style = yamlDoubleQuoted
	}
	if where != yamlRoot {
		w.buf = append(w.buf, ' ')
	}
	switch style {
	case yamlPlain:
		w.buf = append(w.buf, value...)
	case yamlSingleQuoted:
		w.buf = append(w.buf, '\'')
		for i := 0; i < len(value); i++ {
			if value[i] == '\'' {
				w.buf = append(w.buf, '\'')
			}
			w.buf = append(w.buf, value[i])
		}
		w.buf = append(w.buf, '\'')
	case yamlDoubleQuoted:
		w.doubleQuoted(value)
	case yamlLiteral:
		w.literal(value, blockScalarIndent(parent, where))
	}
	return true
}

// yamlShortEscapes are the characters yaml.v3 writes as a backslash and
// one letter; it writes others as \x, \u or \U and hex digits.
var yamlShortEscapes = map[rune]byte{
	0x00: '0', 0x07: 'a', 0x08: 'b', 0x09: 't', 0x0A: 'n', 0x0B: 'v', 0x0C: 'f', 0x0D: 'r', 0x1B: 'e',
	'"': '"', '\\': '\\', 0x85: 'N', 0xA0: '_', 0x2028: 'L', 0x2029: 'P',
}

func (w *yamlWriter) doubleQuoted(value string) {
	w.buf = append(w.buf, '"')
	// yaml.v3 checks for a BOM at the start, not at each character: a
	// leading BOM has every character escaped.
	bom := strings.HasPrefix(value, "\uFEFF")
	for i := 0; i < len(value); {
		c := value[i]
		if yamlPrintable(value, i) && !bom && !isYAMLBreak(value, i) && c != '"' && c != '\\' {
			n := yamlWidth(c)
			w.buf = append(w.buf, value[i:i+n]...)
			i += n
			continue
		}
		r, n := utf8.DecodeRuneInString(value[i:])
		i += n
		w.buf = append(w.buf, '\\')
		if short, ok := yamlShortEscapes[r]; ok {
			w.buf = append(w.buf, short)
			continue
		}
		digits, letter := 2, byte('x')
		if r > 0xFFFF {
			digits, letter = 8, 'U'
		} else if r > 0xFF {
			digits, letter = 4, 'u'
		}
		w.buf = append(w.buf, letter)
		for k := (digits - 1) * 4; k >= 0; k -= 4 {
			w.buf = append(w.buf, "0123456789ABCDEF"[(r>>k)&0xF])
		}
	}
	w.buf = append(w.buf, '"')
}

// literal writes a block scalar: "|", an indentation hint when the text
// starts with a space or break, a chomping hint, then the lines at indent
// (empty ones without spaces).
func (w *yamlWriter) literal(value string, indent int) {
	w.buf = append(w.buf, '|')
	if value[0] == ' ' || value[0] == '\n' {
		w.buf = append(w.buf, '4')
	}
	switch n := len(value); {
	case value[n-1] != '\n':
		w.buf = append(w.buf, '-')
	case n == 1 || value[n-2] == '\n':
		w.buf = append(w.buf, '+')
	}
	w.buf = append(w.buf, '\n')
	atStart := true
	for i := 0; i < len(value); i++ {
		if value[i] == '\n' {
			w.buf = append(w.buf, '\n')
			atStart = true
			continue
		}
		if atStart {
			for range indent {
				w.buf = append(w.buf, ' ')
			}
			atStart = false
		}
		w.buf = append(w.buf, value[i])
	}
}

// yamlScalarAnalysis is which styles yaml.v3's emitter allows a string.
type yamlScalarAnalysis struct {
	multiline, blockPlain, singleQuoted, block bool
}

func analyzeYAMLScalar(value string) yamlScalarAnalysis {
	if value == "" {
		return yamlScalarAnalysis{blockPlain: true, singleQuoted: true}
	}
	var indicators, lineBreaks, special, tabs bool
	var leadingSpace, leadingBreak, trailingSpace, trailingBreak, breakSpace, spaceBreak bool
	if strings.HasPrefix(value, "---") || strings.HasPrefix(value, "...") {
		indicators = true
	}
	precededBySpace, previousSpace, previousBreak := true, false, false
	for i := 0; i < len(value); {
		c := value[i]
		n := yamlWidth(c)
		followedBySpace := i+n >= len(value) || value[i+n] == ' ' || value[i+n] == '\t'
		if i == 0 {
			switch c {
			case '#', ',', '[', ']', '{', '}', '&', '*', '!', '|', '>', '\'', '"', '%', '@', '`':
				indicators = true
			case '?', ':', '-':
				if followedBySpace {
					indicators = true
				}
			}
		} else if c == ':' && followedBySpace || c == '#' && precededBySpace {
			indicators = true
		}
		if c == '\t' {
			tabs = true
		} else if !yamlPrintable(value, i) {
			special = true
		}
		switch {
		case c == ' ':
			leadingSpace = leadingSpace || i == 0
			trailingSpace = trailingSpace || i+1 == len(value)
			breakSpace = breakSpace || previousBreak
			previousSpace, previousBreak = true, false
		case isYAMLBreak(value, i):
			lineBreaks = true
			leadingBreak = leadingBreak || i == 0
			trailingBreak = trailingBreak || i+n == len(value)
			spaceBreak = spaceBreak || previousSpace
			previousSpace, previousBreak = false, true
		default:
			previousSpace, previousBreak = false, false
		}
		precededBySpace = c == ' ' || c == '\t' || c == 0 || isYAMLBreak(value, i)
		i += n
	}
	a := yamlScalarAnalysis{multiline: lineBreaks, blockPlain: true, singleQuoted: true, block: true}
	if leadingSpace || leadingBreak || trailingSpace || trailingBreak || lineBreaks || indicators {
		a.blockPlain = false
	}
	if breakSpace || spaceBreak || tabs || special {
		a.blockPlain, a.singleQuoted = false, false
	}
	if trailingSpace || spaceBreak || special {
		a.block = false
	}
	return a
}

func yamlWidth(c byte) int {
	switch {
	case c&0x80 == 0:
		return 1
	case c&0xE0 == 0xC0:
		return 2
	case c&0xF0 == 0xE0:
		return 3
	}
	return 4
}

// yamlPrintable is the YAML printable set the emitter writes unescaped:
// LF, ASCII 0x20-0x7E, U+00A0-U+D7FF and U+E000-U+FFFD but the BOM.
func yamlPrintable(value string, i int) bool {
	c := value[i]
	switch {
	case c == '\n' || c >= 0x20 && c <= 0x7E:
		return true
	case c == 0xC2:
		return value[i+1] >= 0xA0
	case c > 0xC2 && c < 0xED, c == 0xEE:
		return true
	case c == 0xED:
		return value[i+1] < 0xA0
	case c == 0xEF:
		return !(value[i+1] == 0xBB && value[i+2] == 0xBF) && !(value[i+1] == 0xBF && (value[i+2] == 0xBE || value[i+2] == 0xBF))
	}
	return false
}

func isYAMLBreak(value string, i int) bool {
	switch value[i] {
	case '\r', '\n':
		return true
	case 0xC2:
		return value[i+1] == 0x85
	case 0xE2:
		return value[i+1] == 0x80 && (value[i+2] == 0xA8 || value[i+2] == 0xA9)
	}
	return false
}

// yamlResolvesToString reports whether yaml.v3 reads value, unquoted, back
// as a string; sure is false where the writer does not decide (what may be
// a timestamp).
func yamlResolvesToString(value string) (str, sure bool) {
	if value == "" {
		return false, true
	}
	switch c := value[0]; {
	case c == '.':
		if yamlSpecialWord(value) {
			return false, true
		}
		_, err := strconv.ParseFloat(value, 64)
		return err != nil, true
	case strings.IndexByte("yYnNtTfFoO~", c) >= 0:
		return !yamlSpecialWord(value), true
	case c == '+' || c == '-' || c >= '0' && c <= '9':
		if yamlSpecialWord(value) {
			return false, true
		}
		if len(value) > 4 && value[4] == '-' && strings.Trim(value[:4], "0123456789") == "" {
			return false, false
		}
		return !yamlNumber(strings.ReplaceAll(value, "_", "")), true
	}
	return true, true
}

// yamlSpecialWord: the words yaml.v3 resolves to booleans, null, infinities
// and NaN.
func yamlSpecialWord(value string) bool {
	switch value {
	case "true", "True", "TRUE", "false", "False", "FALSE", "~", "null", "Null", "NULL",
		".nan", ".NaN", ".NAN", ".inf", ".Inf", ".INF", "+.inf", "+.Inf", "+.INF", "-.inf", "-.Inf", "-.INF":
		return true
	}
	return false
}

// yamlNumber reports whether yaml.v3 reads plain (underscores removed) as
// an int or a float.
func yamlNumber(plain string) bool {
	if _, err := strconv.ParseInt(plain, 0, 64); err == nil {
		return true
	}
	if _, err := strconv.ParseUint(plain, 0, 64); err == nil {
		return true
	}
	if yamlFloatSyntax(plain) {
		if _, err := strconv.ParseFloat(plain, 64); err == nil {
			return true
		}
	}
	for _, prefix := range []struct {
		text string
		base int
		neg  bool
	}{{"0b", 2, false}, {"-0b", 2, true}, {"0o", 8, false}, {"-0o", 8, true}} {
		digits, ok := strings.CutPrefix(plain, prefix.text)
		if !ok {
			continue
		}
		if prefix.neg {
			digits = "-" + digits
		}
		if _, err := strconv.ParseInt(digits, prefix.base, 64); err == nil {
			return true
		}
		if _, err := strconv.ParseUint(digits, prefix.base, 64); err == nil && !prefix.neg {
			return true
		}
	}
	return false
}

// yamlFloatSyntax is ^[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?$.
func yamlFloatSyntax(s string) bool {
	digits := func(from int) int {
		i := from
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
		}
		return i
	}
	i := 0
	if i < len(s) && (s[i] == '+' || s[i] == '-') {
		i++
	}
	if i < len(s) && s[i] == '.' {
		j := digits(i + 1)
		if j == i+1 {
			return false
		}
		i = j
	} else {
		j := digits(i)
		if j == i {
			return false
		}
		i = j
		if i < len(s) && s[i] == '.' {
			i = digits(i + 1)
		}
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			i++
		}
		j := digits(i)
		if j == i {
			return false
		}
		i = j
	}
	return i == len(s)
}

package jsonw

import (
	"encoding/json"
	"math"
	"testing"
)

// AppendFloat writes what encoding/json writes for finite floats.
func TestAppendFloatAsEncodingJSON(t *testing.T) {
	for _, f := range []float64{0, math.Copysign(0, -1), 1, -1.5, 1e-6, 9.99e-7, 1e-7, 1e20, 1e21, 123456789.125,
		-2.5e-300, math.MaxFloat64, math.SmallestNonzeroFloat64, 0.1 + 0.2} {
		want, err := json.Marshal(f)
		if err != nil {
			t.Fatal(err)
		}
		if got := AppendFloat([]byte("x"), f); string(got) != "x"+string(want) {
			t.Errorf("%v: got %s, want x%s", f, got, want)
		}
	}
}

// Members: a comma before all but the first, empty values omitted.
func TestAppenderMembers(t *testing.T) {
	one := int64(-7)
	a := Appender{Buf: []byte("{")}
	a.Bool("no", false)
	a.Int("none", nil)
	a.Bool("yes", true)
	a.Int("n", &one)
	a.Key("k")
	a.Buf = append(a.Buf, `"v"}`...)
	if want := `{"yes":true,"n":-7,"k":"v"}`; string(a.Buf) != want {
		t.Errorf("got %s, want %s", a.Buf, want)
	}
}

// AppendEscaped writes what encoding/json writes for every ASCII byte it
// escapes.
func TestAppendEscapedAsEncodingJSON(t *testing.T) {
	escaped := 0
	for c := range byte(0x80) {
		want, err := json.Marshal(string([]byte{c}))
		if err != nil {
			t.Fatal(err)
		}
		want = want[1 : len(want)-1]
		if string(want) == string([]byte{c}) {
			continue
		}
		escaped++
		if got := AppendEscaped([]byte("x"), c); string(got) != "x"+string(want) {
			t.Errorf("%#x: got %s, want x%s", c, got, want)
		}
	}
	if escaped != 0x20+5 { // control characters, '"', '\\', <, > and &
		t.Errorf("encoding/json escaped %d ASCII bytes, want 37", escaped)
	}
}

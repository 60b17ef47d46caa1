package endpoints

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/devplane/devplane/apiserver/builtin"
)

// kindBodies are bodies whose apiVersion and kind the sniffer reads, or
// must leave to the default: cased and escaped keys, odd values, bodies
// that are not one JSON object, and bodies that are not JSON at all.
var kindBodies = []string{
	`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a"},"data":{"k":"v"}}`,
	` { "kind" : "ConfigMap" , "apiVersion" : "v1" } `,
	`{"metadata":{"name":"a","labels":{"kind":"x","apiVersion":"y"}},"kind":"ConfigMap","apiVersion":"v1"}`,
	`{"apiVersion":"v1","kind":"ConfigMap","data":{"a":"}]\"{["},"binaryData":null,"immutable":true}`,
	`{"apiVersion":"v1","kind":"ConfigMap","x":[1,2,{"y":[]}],"z":-1.5e3}`,
	`{"apiVersion":"v1","kind":"Secret"}`,
	`{"apiVersion":"apps/v1","kind":"ConfigMap"}`,
	`{"apiVersion":"a/b/c","kind":"ConfigMap"}`,
	`{"apiVersion":"v1","kind":"ConfigMap","kind":"Pod"}`,
	`{"APIVERSION":"v1","Kind":"ConfigMap"}`,
	`{"apiversion":"v2","apiVersion":"v1","kind":"ConfigMap"}`,
	`{"apiVersion":"v1","kind":"ConfigMap","KIND":"Pod"}`,
	`{"apiVersion":"v1","ApiVersion":"apps/v1","kind":"ConfigMap"}`,
	`{"apiVersion":"v1","kind":"Config\u004dap"}`,
	`{"api\u0056ersion":"v1","kind":"ConfigMap"}`,
	`{"apiVersion":"v1","\u212aind":"ConfigMap"}`,
	`{"apiVersion":"v1","kind":"ConfigMäp"}`,
	`{"apiVersion":"v1","kind":5}`,
	`{"apiVersion":null,"kind":"ConfigMap"}`,
	`{"apiVersion":"v1","kind":["ConfigMap"]}`,
	`{"apiVersion":"v1"}`,
	`{"kind":"ConfigMap"}`,
	`{}`,
	`{ }`,
	`[]`,
	`null`,
	`"ConfigMap"`,
	``,
	`{`,
	`{"apiVersion":"v1","kind":"ConfigMap"`,
	`{"apiVersion":"v1","kind":"ConfigMap",}`,
	`{"apiVersion":"v1","kind":"ConfigMap"}}`,
	`{"apiVersion":"v1","kind":"ConfigMap"} {}`,
	`{"apiVersion":"v1","kind":"ConfigMap","data":{"a":tru}}`,
	`{"apiVersion":"v1","kind":"ConfigMap","data":{"a":"b"]}`,
	`{"apiVersion":"v1","kind":"ConfigMap","data":{"a" "b"}}`,
	`{"apiVersion":"v1","kind":"ConfigMap","data":{"a":"b",}}`,
	`{"apiVersion":"v1","kind":"ConfigMap","data":,"x":1}`,
	`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a"},"data":{"k":"v"},"unknown":1}`,
	`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a","name":"b"}}`,
	`{"apiVersion":"v1","kind":"ConfigMap","data":{"k":1}}`,
	`{"apiVersion":"v1","kind":"ConfigMap","data":"nope"}`,
	"{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"data\":{\"a\":\"\x01\"}}",
	"{\"apiVersion\":\"v1\",\"kind\":\"Config\tMap\"}",
	"\xef\xbb\xbf{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\"}",
}

// decodeBoth decodes body with the codec factory's JSON serializer and
// with the handler's, returning each outcome as text.
func decodeBoth(t testing.TB, body string, strict bool) (want, got string) {
	info, ok := runtime.SerializerInfoForMediaType(builtin.Codecs.SupportedMediaTypes(), runtime.ContentTypeJSON)
	if !ok {
		t.Fatal("no JSON serializer")
	}
	ours := newJSONDecoders(builtin.Scheme)
	codec, mine := info.Serializer, ours.plain
	if strict {
		codec, mine = info.StrictSerializer, ours.strict
	}
	gvk := corev1.SchemeGroupVersion.WithKind("ConfigMap")
	outcome := func(obj runtime.Object, got any, err error) string {
		errText := "<nil>"
		if err != nil {
			errText = err.Error()
		}
		objJSON, _ := json.Marshal(obj)
		return fmt.Sprintf("obj %T %s\ngvk %v\nerr %s", obj, objJSON, got, errText)
	}
	wantGVK := gvk
	obj, g, err := codec.Decode([]byte(body), &wantGVK, &corev1.ConfigMap{})
	want = outcome(obj, g, err)
	gotGVK := gvk
	obj, g, err = decodeJSON(mine, []byte(body), &gotGVK, &corev1.ConfigMap{})
	got = outcome(obj, g, err)
	if !reflect.DeepEqual(wantGVK, gotGVK) {
		got += fmt.Sprintf("\ndefaults changed to %v, the codec's to %v", gotGVK, wantGVK)
	}
	return want, got
}

// The handler's JSON decoding ends as the codec factory's does, for every
// body: the same object, kind, and error text.
func TestJSONDecodersMatchCodecs(t *testing.T) {
	sniffed := 0
	for _, body := range kindBodies {
		if _, _, ok := sniffKind([]byte(body)); ok {
			sniffed++
		}
		for _, strict := range []bool{false, true} {
			if want, got := decodeBoth(t, body, strict); want != got {
				t.Errorf("body %q (strict %v):\ncodec:   %s\nhandler: %s", body, strict, want, got)
			}
		}
	}
	// The sniffer must take the usual bodies, or it saves nothing.
	if _, _, ok := sniffKind([]byte(kindBodies[0])); !ok || sniffed < 10 {
		t.Errorf("the sniffer read %d of %d bodies, the usual one %v", sniffed, len(kindBodies), ok)
	}
}

// Where the sniffer reads a body, it reads what encoding/json reads.
func TestSniffKindAgreesWithDefault(t *testing.T) {
	for _, body := range kindBodies {
		apiVersion, kind, ok := sniffKind([]byte(body))
		if !ok {
			continue
		}
		if strings.Contains(body, `"kind":5`) {
			t.Errorf("%q: a number read as a kind", body)
		}
		got, err := kindSniffer{}.Interpret([]byte(body))
		if err != nil {
			continue // ParseGroupVersion's error, checked with the codec above
		}
		if got.Kind != kind || got.GroupVersion().String() != apiVersion {
			t.Errorf("%q: Interpret %v, sniffed %q %q", body, got, apiVersion, kind)
		}
	}
}

func FuzzJSONDecodersMatchCodecs(f *testing.F) {
	for _, body := range kindBodies {
		f.Add(body, true)
	}
	f.Fuzz(func(t *testing.T, body string, strict bool) {
		if want, got := decodeBoth(t, body, strict); want != got {
			t.Errorf("body %q (strict %v):\ncodec:   %s\nhandler: %s", body, strict, want, got)
		}
	})
}

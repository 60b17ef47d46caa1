package endpoints

import (
	"bytes"
	"net/http/httptest"
	"strconv"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/devplane/devplane/apiserver/builtin"
	"github.com/devplane/devplane/apiserver/request"
)

// A list written from cached item messages is byte for byte what the
// protobuf serializer writes, whichever items come from the cache.
func TestWriteProtobufListMatchesSerializer(t *testing.T) {
	var info runtime.SerializerInfo
	for _, i := range builtin.Codecs.SupportedMediaTypes() {
		if i.MediaType == mediaTypeProtobuf {
			info = i
		}
	}
	h := &handler{scheme: builtin.Scheme}
	remaining := int64(7)
	cms := &corev1.ConfigMapList{ListMeta: metav1.ListMeta{ResourceVersion: "42", Continue: "token", RemainingItemCount: &remaining}}
	for i := range 300 { // large enough to take varints over one byte
		cms.Items = append(cms.Items, corev1.ConfigMap{
			ObjectMeta: metav1.ObjectMeta{Name: "cm-" + strconv.Itoa(i), Namespace: "ns", ResourceVersion: strconv.Itoa(100 + i),
				Labels: map[string]string{"i": strconv.Itoa(i)},
				ManagedFields: []metav1.ManagedFieldsEntry{{Manager: "m", Operation: metav1.ManagedFieldsOperationUpdate, APIVersion: "v1",
					FieldsType: "FieldsV1", FieldsV1: &metav1.FieldsV1{Raw: []byte(`{"f:data":{"f:k":{}}}`)}}}},
			Data: map[string]string{"k": string(bytes.Repeat([]byte("v"), i))},
		})
	}
	deployments := &appsv1.DeploymentList{Items: []appsv1.Deployment{{ObjectMeta: metav1.ObjectMeta{Name: "d"}}}}
	for name, tc := range map[string]struct {
		list runtime.Object
		gv   schema.GroupVersion
	}{
		"configmaps":  {cms, corev1.SchemeGroupVersion},
		"empty":       {&corev1.SecretList{}, corev1.SchemeGroupVersion},
		"deployments": {deployments, appsv1.SchemeGroupVersion},
	} {
		t.Run(name, func(t *testing.T) {
			var want bytes.Buffer
			h.setKind(tc.list, tc.gv)
			if err := info.Serializer.Encode(tc.list, &want); err != nil {
				t.Fatal(err)
			}
			for _, cachedEvery := range []int{0, 1, 3, -1} { // none, all, some items cached; -1: not this list's
				var cached [][]byte
				if cachedEvery < 0 { // a different length: ignored
					cached = make([][]byte, meta.LenList(tc.list)+1)
					for i := range cached {
						cached[i] = []byte("stale")
					}
				}
				if cachedEvery > 0 {
					cached = make([][]byte, meta.LenList(tc.list))
					i := 0
					_ = meta.EachListItem(tc.list, func(item runtime.Object) error {
						if i%cachedEvery == 0 {
							cached[i], _ = item.(interface{ Marshal() ([]byte, error) }).Marshal()
						}
						i++
						return nil
					})
				}
				rec := httptest.NewRecorder()
				req := httptest.NewRequest("GET", "/api/v1/configmaps", nil)
				if !h.writeProtobufList(rec, req, 200, tc.list, tc.gv, cached) {
					t.Fatal("writeProtobufList declined a built-in list")
				}
				if got := rec.Body.Bytes(); !bytes.Equal(got, want.Bytes()) {
					t.Fatalf("cached every %d: %d bytes differ from the serializer's %d", cachedEvery, len(got), want.Len())
				}
				if ct := rec.Header().Get("Content-Type"); ct != mediaTypeProtobuf {
					t.Errorf("Content-Type %q", ct)
				}
			}
		})
	}
}

// A request marked WithoutCompression gets its large body as is, even when
// it accepts gzip (kube's --disable-compression-for-client-ips).
func TestWriteBodyWithoutCompression(t *testing.T) {
	body := bytes.Repeat([]byte("x"), gzipThreshold+1)
	for _, off := range []bool{false, true} {
		req := httptest.NewRequest("GET", "/api/v1/configmaps", nil)
		req.Header.Set("Accept-Encoding", "gzip")
		if off {
			req = req.WithContext(request.WithoutCompression(req.Context()))
		}
		rec := httptest.NewRecorder()
		writeBody(rec, req, 200, "application/json", body)
		gzipped := rec.Header().Get("Content-Encoding") == "gzip"
		if gzipped == off || (off && !bytes.Equal(rec.Body.Bytes(), body)) {
			t.Errorf("compression disabled %v: Content-Encoding %q, %d bytes", off, rec.Header().Get("Content-Encoding"), rec.Body.Len())
		}
	}
}

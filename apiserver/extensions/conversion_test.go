package extensions_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"math/big"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
)

// conversionWebhook serves ConversionReviews over TLS on 127.0.0.1,
// renaming spec.cronSpec (v1) ⇄ spec.schedule (v2).
func conversionWebhook(t *testing.T) (url string, caPEM []byte, calls func() int) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "webhook"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)}, KeyUsage: x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}, IsCA: true, BasicConstraintsValid: true}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	caPEM = pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
	var mu sync.Mutex
	n := 0
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		n++
		mu.Unlock()
		review := &apiextensionsv1.ConversionReview{}
		if err := json.NewDecoder(r.Body).Decode(review); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		resp := &apiextensionsv1.ConversionResponse{UID: review.Request.UID, Result: metav1.Status{Status: metav1.StatusSuccess}}
		for _, raw := range review.Request.Objects {
			u := &unstructured.Unstructured{}
			if err := u.UnmarshalJSON(raw.Raw); err != nil {
				http.Error(w, err.Error(), http.StatusBadRequest)
				return
			}
			spec, _, _ := unstructured.NestedMap(u.Object, "spec")
			if spec == nil {
				spec = map[string]any{}
			}
			switch review.Request.DesiredAPIVersion {
			case "stable.example.com/v2":
				if v, ok := spec["cronSpec"]; ok {
					spec["schedule"] = v
					delete(spec, "cronSpec")
				}
			case "stable.example.com/v1":
				if v, ok := spec["schedule"]; ok {
					spec["cronSpec"] = v
					delete(spec, "schedule")
				}
			}
			u.Object["spec"] = spec
			u.SetAPIVersion(review.Request.DesiredAPIVersion)
			data, _ := u.MarshalJSON()
			resp.ConvertedObjects = append(resp.ConvertedObjects, runtimeRaw(data))
		}
		review.Response, review.Request = resp, nil
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(review)
	}))
	srv.TLS = &tls.Config{Certificates: []tls.Certificate{{Certificate: [][]byte{der}, PrivateKey: key}}}
	srv.StartTLS()
	t.Cleanup(srv.Close)
	return srv.URL + "/convert", caPEM, func() int { mu.Lock(); defer mu.Unlock(); return n }
}

func multiVersionCRD(url string, caPEM []byte) *apiextensionsv1.CustomResourceDefinition {
	obj := func(props map[string]apiextensionsv1.JSONSchemaProps) *apiextensionsv1.CustomResourceValidation {
		return &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: &apiextensionsv1.JSONSchemaProps{
			Type: "object", Properties: map[string]apiextensionsv1.JSONSchemaProps{
				"spec": {Type: "object", Properties: props}}}}
	}
	str := apiextensionsv1.JSONSchemaProps{Type: "string"}
	return &apiextensionsv1.CustomResourceDefinition{
		ObjectMeta: metav1.ObjectMeta{Name: "crontabs.stable.example.com"},
		Spec: apiextensionsv1.CustomResourceDefinitionSpec{
			Group: "stable.example.com", Scope: apiextensionsv1.NamespaceScoped,
			Names: apiextensionsv1.CustomResourceDefinitionNames{Plural: "crontabs", Singular: "crontab", Kind: "CronTab"},
			Versions: []apiextensionsv1.CustomResourceDefinitionVersion{
				{Name: "v1", Served: true, Storage: true, Schema: obj(map[string]apiextensionsv1.JSONSchemaProps{"cronSpec": str, "image": str})},
				{Name: "v2", Served: true, Deprecated: true, Schema: obj(map[string]apiextensionsv1.JSONSchemaProps{"schedule": str, "image": str})},
			},
			Conversion: &apiextensionsv1.CustomResourceConversion{Strategy: apiextensionsv1.WebhookConverter,
				Webhook: &apiextensionsv1.WebhookConversion{ConversionReviewVersions: []string{"v1"},
					ClientConfig: &apiextensionsv1.WebhookClientConfig{URL: &url, CABundle: caPEM}}},
		},
	}
}

type warningRecorder struct {
	mu   sync.Mutex
	msgs []string
}

func (w *warningRecorder) HandleWarningHeader(_ int, _ string, msg string) {
	w.mu.Lock()
	w.msgs = append(w.msgs, msg)
	w.mu.Unlock()
}

func TestMultiVersionWebhookConversion(t *testing.T) {
	d := start(t)
	ctx := context.Background()
	url, caPEM, calls := conversionWebhook(t)
	ext := d.apiext(t)
	if _, err := ext.ApiextensionsV1().CustomResourceDefinitions().Create(ctx, multiVersionCRD(url, caPEM), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitEstablished(t, ext, "crontabs.stable.example.com")

	cfg := rest.CopyConfig(d.config)
	warnings := &warningRecorder{}
	cfg.WarningHandler = warnings
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	v1 := dyn.Resource(schema.GroupVersionResource{Group: "stable.example.com", Version: "v1", Resource: "crontabs"}).Namespace("default")
	v2 := dyn.Resource(schema.GroupVersionResource{Group: "stable.example.com", Version: "v2", Resource: "crontabs"}).Namespace("default")

	// Written in v1, read in v2.
	if _, err := v1.Create(ctx, &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "stable.example.com/v1", "kind": "CronTab", "metadata": map[string]any{"name": "one"},
		"spec": map[string]any{"cronSpec": "*/5 * * * *", "image": "nginx"}}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	got, err := v2.Get(ctx, "one", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if s, _, _ := unstructured.NestedString(got.Object, "spec", "schedule"); s != "*/5 * * * *" || got.GetAPIVersion() != "stable.example.com/v2" {
		t.Errorf("v2 read of a v1 object: %v", got.Object)
	}
	// Written in v2 (stored in v1), read in both.
	if _, err := v2.Create(ctx, &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "stable.example.com/v2", "kind": "CronTab", "metadata": map[string]any{"name": "two"},
		"spec": map[string]any{"schedule": "0 * * * *", "image": "nginx"}}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	got, err = v1.Get(ctx, "two", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if s, _, _ := unstructured.NestedString(got.Object, "spec", "cronSpec"); s != "0 * * * *" {
		t.Errorf("v1 read of a v2 object: %v", got.Object)
	}
	list, err := v2.List(ctx, metav1.ListOptions{})
	if err != nil || len(list.Items) != 2 {
		t.Fatalf("v2 list: %v %v", err, list)
	}
	for _, item := range list.Items {
		if s, _, _ := unstructured.NestedString(item.Object, "spec", "schedule"); s == "" || item.GetAPIVersion() != "stable.example.com/v2" {
			t.Errorf("v2 list item: %v", item.Object)
		}
	}
	if calls() == 0 {
		t.Error("the conversion webhook was never called")
	}
	warnings.mu.Lock()
	joined := strings.Join(warnings.msgs, "\n")
	warnings.mu.Unlock()
	if !strings.Contains(joined, "stable.example.com/v2 CronTab is deprecated") {
		t.Errorf("no deprecation warning for v2: %q", joined)
	}
}

func runtimeRaw(data []byte) runtime.RawExtension { return runtime.RawExtension{Raw: data} }

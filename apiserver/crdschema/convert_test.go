package crdschema

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
	"errors"
	"fmt"
	"math/big"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
)

func TestConvertNone(t *testing.T) {
	crd := loadCRD(t, "widgets.yaml")
	conv, err := NewConverter(crd, nil)
	if err != nil {
		t.Fatal(err)
	}
	in := object(t, `{apiVersion: example.dev/v1alpha1, kind: Widget, metadata: {name: w}, spec: {size: 1}}`)
	out, err := conv.Convert(context.Background(), []*unstructured.Unstructured{in}, "v1")
	if err != nil {
		t.Fatal(err)
	}
	if out[0].GetAPIVersion() != "example.dev/v1" || in.GetAPIVersion() != "example.dev/v1alpha1" {
		t.Errorf("out %s, in %s", out[0].GetAPIVersion(), in.GetAPIVersion())
	}
}

// convertCronTabs is a conversion webhook: v1 spec.cronSpec <-> v2 spec.schedule.
func convertCronTabs(t *testing.T) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		var review apiextensionsv1.ConversionReview
		if err := json.NewDecoder(r.Body).Decode(&review); err != nil {
			t.Errorf("webhook: %v", err)
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		resp := &apiextensionsv1.ConversionResponse{UID: review.Request.UID, Result: metav1.Status{Status: metav1.StatusSuccess}}
		for _, raw := range review.Request.Objects {
			obj := &unstructured.Unstructured{}
			if err := obj.UnmarshalJSON(raw.Raw); err != nil {
				t.Errorf("webhook: %v", err)
			}
			spec := obj.Object["spec"].(map[string]any)
			switch review.Request.DesiredAPIVersion {
			case "stable.example.com/v2":
				spec["schedule"] = spec["cronSpec"]
				delete(spec, "cronSpec")
			case "stable.example.com/v1":
				spec["cronSpec"] = spec["schedule"]
				delete(spec, "schedule")
			}
			obj.SetAPIVersion(review.Request.DesiredAPIVersion)
			// Webhooks may change labels; other metadata changes are ignored.
			obj.SetLabels(map[string]string{"converted": "true"})
			obj.SetGeneration(99)
			resp.ConvertedObjects = append(resp.ConvertedObjects, runtime.RawExtension{Object: obj})
		}
		review.Request, review.Response = nil, resp
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(&review)
	}
}

func webhookCRD(t *testing.T, server *httptest.Server) *apiextensionsv1.CustomResourceDefinition {
	crd := loadCRD(t, "crontabs.yaml")
	caBundle := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: server.Certificate().Raw})
	url := server.URL + "/convert"
	crd.Spec.Conversion = &apiextensionsv1.CustomResourceConversion{
		Strategy: apiextensionsv1.WebhookConverter,
		Webhook: &apiextensionsv1.WebhookConversion{
			ConversionReviewVersions: []string{"v1", "v1beta1"},
			ClientConfig:             &apiextensionsv1.WebhookClientConfig{URL: &url, CABundle: caBundle},
		},
	}
	if errs := ValidateCRD(crd); len(errs) > 0 {
		t.Fatalf("webhook CRD invalid: %v", errs.ToAggregate())
	}
	return crd
}

func TestWebhookConverterRoundTrip(t *testing.T) {
	server := httptest.NewTLSServer(convertCronTabs(t))
	defer server.Close()
	conv, err := NewConverter(webhookCRD(t, server), nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	in := object(t, validCronTab)
	in.SetGeneration(3)
	already := object(t, `{apiVersion: stable.example.com/v2, kind: CronTab, metadata: {name: other, namespace: default}, spec: {schedule: "* * * * *"}}`)

	out, err := conv.Convert(ctx, []*unstructured.Unstructured{in, already}, "v2")
	if err != nil {
		t.Fatal(err)
	}
	if out[1] != already {
		t.Error("an object already in v2 was sent for conversion")
	}
	v2 := out[0]
	if v2.GetAPIVersion() != "stable.example.com/v2" || v2.Object["spec"].(map[string]any)["schedule"] != "0 3 * * *" {
		t.Fatalf("converted = %v", v2.Object)
	}
	if v2.GetLabels()["converted"] != "true" || v2.GetGeneration() != 3 {
		t.Errorf("metadata: labels %v generation %d; want webhook labels and original generation", v2.GetLabels(), v2.GetGeneration())
	}
	back, err := conv.Convert(ctx, []*unstructured.Unstructured{v2}, "v1")
	if err != nil {
		t.Fatal(err)
	}
	if back[0].Object["spec"].(map[string]any)["cronSpec"] != "0 3 * * *" {
		t.Errorf("round trip = %v", back[0].Object)
	}
}

func TestWebhookConverterViaServiceResolver(t *testing.T) {
	// The serving certificate names the service, as a cluster webhook's does.
	cert, caPEM := serviceCertificate(t, "crontab-converter.webhooks.svc")
	server := httptest.NewUnstartedServer(convertCronTabs(t))
	server.TLS = &tls.Config{Certificates: []tls.Certificate{cert}}
	server.StartTLS()
	defer server.Close()

	crd := webhookCRD(t, server)
	port, path := int32(8443), "/convert"
	crd.Spec.Conversion.Webhook.ClientConfig = &apiextensionsv1.WebhookClientConfig{
		CABundle: caPEM,
		Service:  &apiextensionsv1.ServiceReference{Namespace: "webhooks", Name: "crontab-converter", Port: &port, Path: &path},
	}
	var asked []string
	resolve := func(namespace, name string, p int32) (string, error) {
		asked = append(asked, fmt.Sprintf("%s/%s:%d", namespace, name, p))
		return server.Listener.Addr().String(), nil
	}
	conv, err := NewWebhookConverter(crd, resolve)
	if err != nil {
		t.Fatal(err)
	}
	out, err := conv.Convert(context.Background(), []*unstructured.Unstructured{object(t, validCronTab)}, "v2")
	if err != nil {
		t.Fatal(err)
	}
	if out[0].Object["spec"].(map[string]any)["schedule"] != "0 3 * * *" {
		t.Errorf("converted = %v", out[0].Object)
	}
	if len(asked) != 1 || asked[0] != "webhooks/crontab-converter:8443" {
		t.Errorf("resolver calls = %v", asked)
	}

	// A resolver failure names the service.
	failing, err := NewWebhookConverter(crd, func(string, string, int32) (string, error) { return "", errors.New("no endpoints available") })
	if err != nil {
		t.Fatal(err)
	}
	_, err = failing.Convert(context.Background(), []*unstructured.Unstructured{object(t, validCronTab)}, "v2")
	if err == nil || !strings.Contains(err.Error(), "resolving service webhooks/crontab-converter:8443: no endpoints available") {
		t.Errorf("error = %v", err)
	}
}

// serviceCertificate makes a self-signed serving certificate for dnsName.
func serviceCertificate(t *testing.T, dnsName string) (tls.Certificate, []byte) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	template := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: dnsName},
		DNSNames:              []string{dnsName},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(time.Hour),
		KeyUsage:              x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	der, err := x509.CreateCertificate(rand.Reader, template, template, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
}

func TestWebhookConverterDown(t *testing.T) {
	server := httptest.NewTLSServer(convertCronTabs(t))
	crd := webhookCRD(t, server)
	server.Close()
	conv, err := NewConverter(crd, nil)
	if err != nil {
		t.Fatal(err)
	}
	_, err = conv.Convert(context.Background(), []*unstructured.Unstructured{object(t, validCronTab)}, "v2")
	if err == nil {
		t.Fatal("conversion through a stopped webhook succeeded")
	}
	const prefix = "conversion webhook for stable.example.com/v1, Kind=CronTab failed: Post \"https://127.0.0.1:"
	if !strings.HasPrefix(err.Error(), prefix) || !strings.Contains(err.Error(), "connection refused") {
		t.Errorf("error = %v", err)
	}
}

func TestWebhookConverterHungTimesOut(t *testing.T) {
	release := make(chan struct{})
	server := httptest.NewTLSServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { <-release }))
	defer server.Close()
	defer close(release)
	conv, err := NewWebhookConverter(webhookCRD(t, server), nil)
	if err != nil {
		t.Fatal(err)
	}
	conv.SetTimeout(200 * time.Millisecond)
	start := time.Now()
	_, err = conv.Convert(context.Background(), []*unstructured.Unstructured{object(t, validCronTab)}, "v2")
	if err == nil || !strings.Contains(err.Error(), "Client.Timeout exceeded") {
		t.Errorf("error = %v", err)
	}
	if time.Since(start) > 5*time.Second {
		t.Errorf("timeout took %v", time.Since(start))
	}
}

func TestWebhookConverterRejectsBadAnswers(t *testing.T) {
	server := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var review apiextensionsv1.ConversionReview
		_ = json.NewDecoder(r.Body).Decode(&review)
		review.Response = &apiextensionsv1.ConversionResponse{UID: review.Request.UID, Result: metav1.Status{Status: metav1.StatusFailure, Message: "cannot convert spec.cronSpec"}}
		review.Request = nil
		_ = json.NewEncoder(w).Encode(&review)
	}))
	defer server.Close()
	conv, err := NewWebhookConverter(webhookCRD(t, server), nil)
	if err != nil {
		t.Fatal(err)
	}
	_, err = conv.Convert(context.Background(), []*unstructured.Unstructured{object(t, validCronTab)}, "v2")
	if want := "conversion webhook for stable.example.com/v1, Kind=CronTab failed: cannot convert spec.cronSpec"; err == nil || err.Error() != want {
		t.Errorf("error = %v, want %s", err, want)
	}
}

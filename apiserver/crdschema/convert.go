package crdschema

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/uuid"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// Converter converts custom resources of one CRD between its versions.
// Objects already in toVersion are returned unchanged; inputs are not mutated.
type Converter interface {
	Convert(ctx context.Context, objs []*unstructured.Unstructured, toVersion string) ([]*unstructured.Unstructured, error)
}

// ServiceResolver maps a webhook Service to a dialable "host:port". A laptop
// has no service network, so the caller resolves to the backing endpoints.
type ServiceResolver func(namespace, name string, port int32) (hostPort string, err error)

// NewConverter returns the converter for the CRD's conversion strategy.
func NewConverter(crd *apiextensionsv1.CustomResourceDefinition, resolve ServiceResolver) (Converter, error) {
	if crd.Spec.Conversion == nil || crd.Spec.Conversion.Strategy == apiextensionsv1.NoneConverter {
		return noneConverter{}, nil
	}
	if crd.Spec.Conversion.Strategy == apiextensionsv1.WebhookConverter {
		return NewWebhookConverter(crd, resolve)
	}
	return nil, fmt.Errorf("unknown conversion strategy %q for CRD %s", crd.Spec.Conversion.Strategy, crd.Name)
}

// IsDeterministic reports whether c always converts an object the same way
// (strategy None), so its results may be reused; a webhook's may not.
func IsDeterministic(c Converter) bool {
	_, ok := c.(noneConverter)
	return ok
}

// ConvertNone converts with strategy None: only apiVersion changes.
func ConvertNone(obj *unstructured.Unstructured, toVersion string) *unstructured.Unstructured {
	out := obj.DeepCopy()
	gv, err := schema.ParseGroupVersion(obj.GetAPIVersion())
	if err != nil {
		gv = schema.GroupVersion{}
	}
	out.SetAPIVersion(schema.GroupVersion{Group: gv.Group, Version: toVersion}.String())
	return out
}

type noneConverter struct{}

func (noneConverter) Convert(_ context.Context, objs []*unstructured.Unstructured, toVersion string) ([]*unstructured.Unstructured, error) {
	out := make([]*unstructured.Unstructured, len(objs))
	for i, obj := range objs {
		out[i] = ConvertNone(obj, toVersion)
	}
	return out, nil
}

// DefaultWebhookTimeout bounds one ConversionReview round trip, so a hung
// webhook fails a request instead of stalling it.
const DefaultWebhookTimeout = 10 * time.Second

// WebhookConverter converts by POSTing a ConversionReview to the CRD's
// conversion webhook over HTTPS, trusting the CRD's caBundle.
type WebhookConverter struct {
	crdName      string
	group        string
	endpoint     string
	reviewAPIVer string
	client       *http.Client
}

// NewWebhookConverter builds the HTTPS client for crd's webhook clientConfig:
// a url is dialled as is; a service is addressed as <name>.<namespace>.svc
// (the name its serving certificate carries) but dialled at whatever resolve
// returns. The client times out after DefaultWebhookTimeout.
func NewWebhookConverter(crd *apiextensionsv1.CustomResourceDefinition, resolve ServiceResolver) (*WebhookConverter, error) {
	conv := crd.Spec.Conversion
	if conv == nil || conv.Webhook == nil || conv.Webhook.ClientConfig == nil {
		return nil, fmt.Errorf("CRD %s has no conversion webhook clientConfig", crd.Name)
	}
	w := &WebhookConverter{crdName: crd.Name, group: crd.Spec.Group}
	// Prefer v1; v1beta1 reviews carry the same fields under another apiVersion.
	for _, candidate := range []string{"v1", "v1beta1"} {
		if slices.Contains(conv.Webhook.ConversionReviewVersions, candidate) {
			w.reviewAPIVer = "apiextensions.k8s.io/" + candidate
			break
		}
	}
	if w.reviewAPIVer == "" {
		return nil, fmt.Errorf("CRD %s: no supported conversion review versions in %v", crd.Name, conv.Webhook.ConversionReviewVersions)
	}

	cc := conv.Webhook.ClientConfig
	tlsConfig := &tls.Config{MinVersion: tls.VersionTLS12}
	if caBundle := bytes.TrimSpace(cc.CABundle); len(caBundle) > 0 {
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(caBundle) {
			return nil, fmt.Errorf("CRD %s: conversion webhook caBundle holds no PEM certificate", crd.Name)
		}
		tlsConfig.RootCAs = pool
	}
	transport := &http.Transport{TLSClientConfig: tlsConfig, ForceAttemptHTTP2: true}

	switch {
	case cc.URL != nil:
		u, err := url.Parse(*cc.URL)
		if err != nil {
			return nil, fmt.Errorf("CRD %s: unparsable conversion webhook URL: %v", crd.Name, err)
		}
		w.endpoint = u.String()
	case cc.Service != nil:
		if resolve == nil {
			return nil, fmt.Errorf("CRD %s: conversion webhook service %s/%s cannot be resolved", crd.Name, cc.Service.Namespace, cc.Service.Name)
		}
		svc := *cc.Service
		port := int32(443)
		if svc.Port != nil {
			port = *svc.Port
		}
		serverName := svc.Name + "." + svc.Namespace + ".svc"
		host := net.JoinHostPort(serverName, strconv.Itoa(int(port)))
		tlsConfig.ServerName = serverName
		var dialer net.Dialer
		transport.DialContext = func(ctx context.Context, network, addr string) (net.Conn, error) {
			if addr == host {
				resolved, err := resolve(svc.Namespace, svc.Name, port)
				if err != nil {
					return nil, fmt.Errorf("resolving service %s/%s:%d: %w", svc.Namespace, svc.Name, port, err)
				}
				addr = resolved
			}
			return dialer.DialContext(ctx, network, addr)
		}
		w.endpoint = "https://" + host
		if svc.Path != nil {
			w.endpoint += *svc.Path
		}
	default:
		return nil, fmt.Errorf("CRD %s: conversion webhook configuration must have either service or URL", crd.Name)
	}
	w.client = &http.Client{Transport: transport, Timeout: DefaultWebhookTimeout}
	return w, nil
}

// SetTimeout overrides DefaultWebhookTimeout.
func (w *WebhookConverter) SetTimeout(d time.Duration) { w.client.Timeout = d }

// Convert sends the objects not yet in toVersion in one ConversionReview and
// returns all objects in input order. Labels and annotations are taken from
// the webhook's answer, the rest of metadata from the original, as in kube.
func (w *WebhookConverter) Convert(ctx context.Context, objs []*unstructured.Unstructured, toVersion string) ([]*unstructured.Unstructured, error) {
	target := schema.GroupVersion{Group: w.group, Version: toVersion}
	out := make([]*unstructured.Unstructured, len(objs))
	var pending []int
	var request []runtime.RawExtension
	for i, obj := range objs {
		if obj.GetAPIVersion() == target.String() {
			out[i] = obj
			continue
		}
		pending = append(pending, i)
		request = append(request, runtime.RawExtension{Object: obj})
	}
	if len(pending) == 0 {
		return out, nil
	}
	failed := func(format string, args ...any) error {
		return fmt.Errorf("conversion webhook for %v %s", objs[pending[0]].GroupVersionKind(), fmt.Sprintf(format, args...))
	}

	converted, err := w.call(ctx, request, target.String())
	if err != nil {
		return nil, failed("failed: %v", err)
	}
	if len(converted) != len(pending) {
		return nil, failed("returned %d objects, expected %d", len(converted), len(pending))
	}
	for n, i := range pending {
		c := &unstructured.Unstructured{}
		if err := c.UnmarshalJSON(converted[n].Raw); err != nil {
			return nil, failed("returned invalid converted object at index %v: %v", n, err)
		}
		original := objs[i]
		if got := c.GroupVersionKind().GroupVersion(); got != target {
			return nil, failed("returned invalid converted object at index %v: invalid groupVersion (expected %v, received %v)", n, target, got)
		}
		if err := sameIdentity(original, c); err != nil {
			return nil, failed("returned invalid converted object at index %v: %v", n, err)
		}
		if err := keepOriginalMetadata(original, c); err != nil {
			return nil, failed("returned invalid metadata in object at index %v: %v", n, err)
		}
		out[i] = c
	}
	return out, nil
}

// conversionReview is the wire shape shared by ConversionReview v1 and v1beta1.
type conversionReview struct {
	APIVersion string                              `json:"apiVersion"`
	Kind       string                              `json:"kind"`
	Request    *apiextensionsv1.ConversionRequest  `json:"request,omitempty"`
	Response   *apiextensionsv1.ConversionResponse `json:"response,omitempty"`
}

func (w *WebhookConverter) call(ctx context.Context, objects []runtime.RawExtension, desiredAPIVersion string) ([]runtime.RawExtension, error) {
	uid := uuid.NewUUID()
	body, err := json.Marshal(conversionReview{
		APIVersion: w.reviewAPIVer,
		Kind:       "ConversionReview",
		Request:    &apiextensionsv1.ConversionRequest{UID: uid, DesiredAPIVersion: desiredAPIVersion, Objects: objects},
	})
	if err != nil {
		return nil, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, w.endpoint, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	resp, err := w.client.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, 64<<20))
	if err != nil {
		return nil, err
	}
	if resp.StatusCode/100 != 2 {
		return nil, fmt.Errorf("the server responded with %s: %s", resp.Status, bytes.TrimSpace(data))
	}
	var review conversionReview
	if err := json.Unmarshal(data, &review); err != nil {
		return nil, fmt.Errorf("decoding ConversionReview: %v", err)
	}
	if review.APIVersion != w.reviewAPIVer || review.Kind != "ConversionReview" {
		return nil, fmt.Errorf("expected webhook response of %s, Kind=ConversionReview, got %s, Kind=%s", w.reviewAPIVer, review.APIVersion, review.Kind)
	}
	if review.Response == nil {
		return nil, errors.New("no response provided")
	}
	if review.Response.UID != uid {
		return nil, fmt.Errorf("expected response.uid=%q, got %q", uid, review.Response.UID)
	}
	if review.Response.Result.Status != metav1.StatusSuccess {
		if review.Response.Result.Message != "" {
			return nil, errors.New(review.Response.Result.Message)
		}
		return nil, fmt.Errorf("response.result.status was '%s', not 'Success'", review.Response.Result.Status)
	}
	return review.Response.ConvertedObjects, nil
}

// sameIdentity enforces that a webhook converts an object, not replaces it.
func sameIdentity(in, out *unstructured.Unstructured) error {
	switch {
	case in.GetKind() != out.GetKind():
		return fmt.Errorf("must have the same kind: %v != %v", in.GetKind(), out.GetKind())
	case in.GetName() != out.GetName():
		return fmt.Errorf("must have the same name: %v != %v", in.GetName(), out.GetName())
	case in.GetNamespace() != out.GetNamespace():
		return fmt.Errorf("must have the same namespace: %v != %v", in.GetNamespace(), out.GetNamespace())
	case in.GetUID() != out.GetUID():
		return fmt.Errorf("must have the same UID: %v != %v", in.GetUID(), out.GetUID())
	}
	return nil
}

// keepOriginalMetadata replaces converted's metadata with the original's,
// except labels and annotations which webhooks may change (validated).
func keepOriginalMetadata(original, converted *unstructured.Unstructured) error {
	answered, ok := converted.Object["metadata"].(map[string]any)
	if !ok {
		return errors.New("missing metadata in converted object")
	}
	meta := map[string]any{}
	if m, ok := runtime.DeepCopyJSONValue(original.Object["metadata"]).(map[string]any); ok {
		meta = m
	}
	for _, key := range []string{"labels", "annotations"} {
		value, ok := answered[key].(map[string]any)
		if !ok || len(value) == 0 {
			delete(meta, key)
			continue
		}
		strs := make(map[string]string, len(value))
		for k, v := range value {
			s, ok := v.(string)
			if !ok {
				return fmt.Errorf("metadata.%s[%s] must be a string, but is %T in converted object", key, k, v)
			}
			strs[k] = s
		}
		var errs field.ErrorList
		if key == "labels" {
			errs = metav1validation.ValidateLabels(strs, field.NewPath("metadata", "labels"))
		} else {
			errs = apivalidation.ValidateAnnotations(strs, field.NewPath("metadata", "annotations"))
		}
		if len(errs) > 0 {
			return errs.ToAggregate()
		}
		meta[key] = value
	}
	converted.Object["metadata"] = meta
	return nil
}

package controlplane_test

// The kinds kube 1.37 serves by default beyond 1.36's (ClusterTrustBundle,
// PodCertificateRequest, DeviceTaintRule, StorageVersionMigration), and
// discovery details kube has (no deletecollection of namespaces, CSINode
// status), against a real devplane with client-go and kubectl.

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"errors"
	"net/http"
	"strings"
	"testing"

	certificatesv1 "k8s.io/api/certificates/v1"
	resourcev1 "k8s.io/api/resource/v1"
	storagev1 "k8s.io/api/storage/v1"
	storagemigrationv1 "k8s.io/api/storagemigration/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// wantInvalid fails unless err is a 422 Invalid Status with a cause on
// each of fields whose message contains the matching text.
func wantInvalid(t *testing.T, what string, err error, causes map[string]string) {
	t.Helper()
	var status apierrors.APIStatus
	if !errors.As(err, &status) || !apierrors.IsInvalid(err) {
		t.Fatalf("%s: want 422 Invalid, got %v", what, err)
	}
	details := status.Status().Details
	for fieldName, text := range causes {
		found := false
		for _, c := range details.Causes {
			if c.Field == fieldName && strings.Contains(c.Message, text) {
				found = true
			}
		}
		if !found {
			t.Errorf("%s: no cause on %s with %q in %+v", what, fieldName, text, details.Causes)
		}
	}
}

func TestKube137KindsE2E(t *testing.T) {
	s := startControlPlane(t, "")
	cs := s.clientset(t, false)
	ctx := context.Background()

	t.Run("StorageVersionMigration", func(t *testing.T) {
		svms := cs.StoragemigrationV1().StorageVersionMigrations()
		_, err := svms.Create(ctx, &storagemigrationv1.StorageVersionMigration{ObjectMeta: metav1.ObjectMeta{Name: "bad"}}, metav1.CreateOptions{})
		wantInvalid(t, "no resource", err, map[string]string{"spec.resource.resource": "resource is required to be set"})

		svm, err := svms.Create(ctx, &storagemigrationv1.StorageVersionMigration{
			ObjectMeta: metav1.ObjectMeta{Name: "deployments"},
			Spec:       storagemigrationv1.StorageVersionMigrationSpec{Resource: metav1.GroupResource{Group: "apps", Resource: "deployments"}},
		}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		changed := svm.DeepCopy()
		changed.Spec.Resource.Resource = "replicasets"
		_, err = svms.Update(ctx, changed, metav1.UpdateOptions{})
		wantInvalid(t, "spec changed", err, map[string]string{"spec": "field is immutable"})

		now := metav1.Now()
		svm.Status.Conditions = []metav1.Condition{{Type: "Succeeded", Status: metav1.ConditionTrue, Reason: "Done", LastTransitionTime: now}}
		if svm, err = svms.UpdateStatus(ctx, svm, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
		svm.Status.Conditions[0].Status = metav1.ConditionFalse
		_, err = svms.UpdateStatus(ctx, svm, metav1.UpdateOptions{})
		wantInvalid(t, "success undone", err, map[string]string{"status.conditions": "Success condition cannot be set to false once it is true"})

		out := s.mustKubectl(t, "get", "storageversionmigrations")
		if h := headers(out); strings.Join(h, ",") != "NAME,RESOURCE,STATUS" || !strings.Contains(out, "deployments.apps") || !strings.Contains(out, "Succeeded") {
			t.Errorf("kubectl get storageversionmigrations:\n%s", out)
		}
	})

	t.Run("ClusterTrustBundle", func(t *testing.T) {
		ctbs := cs.CertificatesV1().ClusterTrustBundles()
		ca := string(s.cp.Certs.CA.CertPEM)
		_, err := ctbs.Create(ctx, &certificatesv1.ClusterTrustBundle{
			ObjectMeta: metav1.ObjectMeta{Name: "wrong"},
			Spec:       certificatesv1.ClusterTrustBundleSpec{SignerName: "example.com/foo", TrustBundle: "not pem"},
		}, metav1.CreateOptions{})
		wantInvalid(t, "bad bundle", err, map[string]string{
			"metadata.name":    "must be named with prefix example.com:foo:",
			"spec.trustBundle": "at least one trust anchor must be provided",
		})
		if _, err := ctbs.Create(ctx, &certificatesv1.ClusterTrustBundle{
			ObjectMeta: metav1.ObjectMeta{Name: "example.com:foo:one"},
			Spec:       certificatesv1.ClusterTrustBundleSpec{SignerName: "example.com/foo", TrustBundle: ca},
		}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		if _, err := ctbs.Create(ctx, &certificatesv1.ClusterTrustBundle{
			ObjectMeta: metav1.ObjectMeta{Name: "plain"}, Spec: certificatesv1.ClusterTrustBundleSpec{TrustBundle: ca},
		}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		list, err := ctbs.List(ctx, metav1.ListOptions{FieldSelector: "spec.signerName=example.com/foo"})
		if err != nil || len(list.Items) != 1 || list.Items[0].Name != "example.com:foo:one" {
			t.Fatalf("field selector spec.signerName: %v %+v", err, list)
		}
		// kube prints trust bundles without an AGE column.
		out := s.mustKubectl(t, "get", "clustertrustbundles")
		if h := headers(out); strings.Join(h, ",") != "NAME,SIGNERNAME" {
			t.Errorf("kubectl get clustertrustbundles:\n%s", out)
		}
	})

	t.Run("PodCertificateRequest", func(t *testing.T) {
		pcrs := cs.CertificatesV1().PodCertificateRequests("default")
		key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		if err != nil {
			t.Fatal(err)
		}
		stub, err := x509.CreateCertificateRequest(rand.Reader, &x509.CertificateRequest{Subject: pkix.Name{CommonName: "x"}}, key)
		if err != nil {
			t.Fatal(err)
		}
		_, err = pcrs.Create(ctx, &certificatesv1.PodCertificateRequest{
			ObjectMeta: metav1.ObjectMeta{Name: "bad"},
			Spec:       certificatesv1.PodCertificateRequestSpec{SignerName: "example.com/foo", UnverifiedUserAnnotations: map[string]string{"a": "b"}},
		}, metav1.CreateOptions{})
		wantInvalid(t, "empty request", err, map[string]string{
			"spec.podUID":                    "must not be empty",
			"spec":                           "exactly one of (stubPKCS10Request)",
			"spec.unverifiedUserAnnotations": "must be a domain-prefixed key",
		})
		got, err := pcrs.Create(ctx, &certificatesv1.PodCertificateRequest{
			ObjectMeta: metav1.ObjectMeta{Name: "good"},
			Spec: certificatesv1.PodCertificateRequestSpec{
				SignerName: "example.com/foo", PodName: "p1", PodUID: types.UID("1234"), ServiceAccountName: "default",
				ServiceAccountUID: "5678", NodeName: "n1", NodeUID: "9", StubPKCS10Request: stub,
				UnverifiedUserAnnotations: map[string]string{"acme.io/a": "b"},
			},
		}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if got.Spec.MaxExpirationSeconds == nil || *got.Spec.MaxExpirationSeconds != 86400 {
			t.Errorf("maxExpirationSeconds defaulted to %v, want 86400", got.Spec.MaxExpirationSeconds)
		}
		out := s.mustKubectl(t, "get", "podcertificaterequests", "-n", "default")
		if !strings.Contains(out, "Pending") || !strings.Contains(out, "acme.io/a=b") || headers(out)[5] != "STATE" {
			t.Errorf("kubectl get podcertificaterequests:\n%s", out)
		}
	})

	t.Run("DeviceTaintRule", func(t *testing.T) {
		rules := cs.ResourceV1().DeviceTaintRules()
		_, err := rules.Create(ctx, &resourcev1.DeviceTaintRule{
			ObjectMeta: metav1.ObjectMeta{Name: "bad"},
			Spec:       resourcev1.DeviceTaintRuleSpec{Taint: resourcev1.DeviceTaint{Key: "-bad", Effect: "Whatever"}},
		}, metav1.CreateOptions{})
		wantInvalid(t, "bad taint", err, map[string]string{"spec.taint.key": "name part must consist of", "spec.taint.effect": "Unsupported value"})
		driver := "gpu.example.com"
		got, err := rules.Create(ctx, &resourcev1.DeviceTaintRule{
			ObjectMeta: metav1.ObjectMeta{Name: "broken"},
			Spec: resourcev1.DeviceTaintRuleSpec{DeviceSelector: &resourcev1.DeviceTaintSelector{Driver: &driver},
				Taint: resourcev1.DeviceTaint{Key: "example.com/broken", Value: "yes", Effect: resourcev1.DeviceTaintEffectNoExecute}},
		}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if got.Spec.Taint.TimeAdded == nil {
			t.Error("spec.taint.timeAdded not set on create")
		}
		out := s.mustKubectl(t, "get", "devicetaintrules")
		if h := headers(out); strings.Join(h, ",") != "NAME,KEY,VALUE,EFFECT,TIMEADDED,AGE" || !strings.Contains(out, "NoExecute") {
			t.Errorf("kubectl get devicetaintrules:\n%s", out)
		}
	})

	t.Run("Explain", func(t *testing.T) {
		for _, r := range []string{"clustertrustbundles.spec.trustBundle", "podcertificaterequests.spec.stubPKCS10Request",
			"devicetaintrules.spec.taint", "storageversionmigrations.spec.resource"} {
			if out := s.mustKubectl(t, "explain", r); !strings.Contains(out, "FIELD:") && !strings.Contains(out, "FIELDS:") {
				t.Errorf("kubectl explain %s:\n%s", r, out)
			}
		}
	})

	t.Run("CSINodeStatus", func(t *testing.T) {
		n, err := cs.StorageV1().CSINodes().Create(ctx, &storagev1.CSINode{ObjectMeta: metav1.ObjectMeta{Name: "node-a"}}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		// The status subresource answers; a main-resource write leaves status alone.
		if err := cs.StorageV1().RESTClient().Get().Resource("csinodes").Name(n.Name).SubResource("status").Do(ctx).Error(); err != nil {
			t.Fatalf("GET csinodes/status: %v", err)
		}
	})

	t.Run("NoDeleteCollectionOfNamespaces", func(t *testing.T) {
		err := cs.CoreV1().RESTClient().Delete().Resource("namespaces").Do(ctx).Error()
		var status apierrors.APIStatus
		if !errors.As(err, &status) || status.Status().Code != http.StatusMethodNotAllowed {
			t.Fatalf("DELETE /api/v1/namespaces: want 405, got %v", err)
		}
		if _, err := cs.CoreV1().Namespaces().Get(ctx, "default", metav1.GetOptions{}); err != nil {
			t.Fatalf("default namespace after the refused deletecollection: %v", err)
		}
	})
}

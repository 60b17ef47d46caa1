package builtin

// Validation of the kinds kube 1.37 serves by default beyond 1.36's:
// certificates.k8s.io/v1 ClusterTrustBundle and PodCertificateRequest,
// resource.k8s.io/v1 DeviceTaintRule and storagemigration.k8s.io/v1
// StorageVersionMigration. Messages are kube's, so clients see the same
// errors.

import (
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"

	certificatesv1 "k8s.io/api/certificates/v1"
	resourcev1 "k8s.io/api/resource/v1"
	storagemigrationv1 "k8s.io/api/storagemigration/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

const maxTrustBundleSize = 1 << 20 // kube's limit on spec.trustBundle

// clusterTrustBundleNamePrefix is the name prefix a bundle for signerName
// must carry: the signer name with "/" turned into ":", then ":".
func clusterTrustBundleNamePrefix(signerName string) string {
	return strings.ReplaceAll(signerName, "/", ":") + ":"
}

func validateClusterTrustBundle(b *certificatesv1.ClusterTrustBundle) field.ErrorList {
	var errs field.ErrorList
	if b.Spec.SignerName != "" {
		if prefix := clusterTrustBundleNamePrefix(b.Spec.SignerName); !strings.HasPrefix(b.Name, prefix) {
			errs = append(errs, field.Invalid(metadataPath.Child("name"), b.Name,
				fmt.Sprintf("ClusterTrustBundle for signerName %s must be named with prefix %s", b.Spec.SignerName, prefix)))
		}
		errs = append(errs, validateSignerName(specPath.Child("signerName"), b.Spec.SignerName)...)
	} else if strings.Contains(b.Name, ":") {
		errs = append(errs, field.Invalid(metadataPath.Child("name"), b.Name,
			"ClusterTrustBundle without signer name must not have \":\" in its name"))
	}
	errs = append(errs, validateTrustBundle(specPath.Child("trustBundle"), b.Spec.TrustBundle)...)
	return errs
}

// validateSignerName checks the "<domain>/<path>" form of a signer name.
func validateSignerName(p *field.Path, name string) field.ErrorList {
	domain, path, ok := strings.Cut(name, "/")
	if !ok || domain == "" || path == "" {
		return field.ErrorList{field.Invalid(p, name, "must be a fully qualified domain and path of the form 'example.com/signer-name'")}
	}
	var errs field.ErrorList
	for _, msg := range validation.IsDNS1123Subdomain(domain) {
		errs = append(errs, field.Invalid(p, name, "the domain of a signer name "+msg))
	}
	return errs
}

// validateTrustBundle wants one or more PEM CERTIFICATE blocks of CA
// certificates and nothing else.
func validateTrustBundle(p *field.Path, bundle string) field.ErrorList {
	if len(bundle) > maxTrustBundleSize {
		return field.ErrorList{field.TooLong(p, "" /* unused */, maxTrustBundleSize)}
	}
	rest := []byte(bundle)
	anchors := 0
	for {
		var block *pem.Block
		block, rest = pem.Decode(rest)
		if block == nil {
			break
		}
		if block.Type != "CERTIFICATE" {
			return field.ErrorList{field.Invalid(p, "<value omitted>", fmt.Sprintf("entry %d has bad block type: %s", anchors, block.Type))}
		}
		if len(block.Headers) != 0 {
			return field.ErrorList{field.Invalid(p, "<value omitted>", fmt.Sprintf("entry %d has PEM block headers", anchors))}
		}
		cert, err := x509.ParseCertificate(block.Bytes)
		if err != nil {
			return field.ErrorList{field.Invalid(p, "<value omitted>", fmt.Sprintf("entry %d does not parse as X.509", anchors))}
		}
		if !cert.IsCA {
			return field.ErrorList{field.Invalid(p, "<value omitted>", fmt.Sprintf("entry %d does not have the CA bit set", anchors))}
		}
		anchors++
	}
	if anchors == 0 {
		return field.ErrorList{field.Invalid(p, "<value omitted>", "at least one trust anchor must be provided")}
	}
	return nil
}

func validateClusterTrustBundleUpdate(b, old *certificatesv1.ClusterTrustBundle) field.ErrorList {
	return apivalidation.ValidateImmutableField(b.Spec.SignerName, old.Spec.SignerName, specPath.Child("signerName"))
}

// PodCertificateRequest expiry bounds (kube's): an hour to 91 days, a day
// when not set (see defaultPodCertificateRequest).
const (
	minPodCertExpirationSeconds = 3600
	maxPodCertExpirationSeconds = 91 * 24 * 3600
	defaultPodCertExpiration    = 24 * 3600
)

func validatePodCertificateRequest(r *certificatesv1.PodCertificateRequest) field.ErrorList {
	var errs field.ErrorList
	s := &r.Spec
	errs = append(errs, validateSignerName(specPath.Child("signerName"), s.SignerName)...)
	subdomain := func(name, value string) {
		for _, msg := range validation.IsDNS1123Subdomain(value) {
			errs = append(errs, field.Invalid(specPath.Child(name), value, msg))
		}
	}
	uid := func(name, value string) {
		if value == "" {
			errs = append(errs, field.Invalid(specPath.Child(name), value, "must not be empty"))
		}
	}
	subdomain("podName", s.PodName)
	uid("podUID", string(s.PodUID))
	subdomain("serviceAccountName", s.ServiceAccountName)
	uid("serviceAccountUID", string(s.ServiceAccountUID))
	subdomain("nodeName", string(s.NodeName))
	uid("nodeUID", string(s.NodeUID))
	if s.MaxExpirationSeconds != nil {
		if v := *s.MaxExpirationSeconds; v < minPodCertExpirationSeconds || v > maxPodCertExpirationSeconds {
			errs = append(errs, field.Invalid(specPath.Child("maxExpirationSeconds"), v,
				fmt.Sprintf("must be in the range [%d, %d]", minPodCertExpirationSeconds, maxPodCertExpirationSeconds)))
		}
	}
	for _, key := range sortedKeys(s.UnverifiedUserAnnotations) {
		if domain, _, ok := strings.Cut(key, "/"); !ok || domain == "" || len(validation.IsDNS1123Subdomain(domain)) > 0 {
			errs = append(errs, field.Invalid(specPath.Child("unverifiedUserAnnotations"), key, "must be a domain-prefixed key (such as \"acme.io/foo\")"))
		}
	}
	// v1 carries the public key and its proof of possession as a stub
	// PKCS#10 request, whose self-signature is that proof.
	if len(s.StubPKCS10Request) == 0 {
		errs = append(errs, field.Invalid(specPath, "", "exactly one of (stubPKCS10Request) or (pkixPublicKey, proofOfPossession) must be set"))
	} else if csr, err := x509.ParseCertificateRequest(s.StubPKCS10Request); err != nil {
		errs = append(errs, field.Invalid(specPath.Child("stubPKCS10Request"), "<value omitted>", "must be a DER-encoded PKCS#10 certificate request: "+err.Error()))
	} else if err := csr.CheckSignature(); err != nil {
		errs = append(errs, field.Invalid(specPath.Child("stubPKCS10Request"), "<value omitted>", "could not verify proof-of-possession signature: "+err.Error()))
	}
	return errs
}

func validatePodCertificateRequestUpdate(r, old *certificatesv1.PodCertificateRequest) field.ErrorList {
	// The spec is the request: fixed once made. Issuance goes through
	// status.
	if !apiequality.Semantic.DeepEqual(r.Spec, old.Spec) {
		return field.ErrorList{field.Invalid(specPath, "", "field is immutable")}
	}
	return nil
}

func defaultPodCertificateRequest(r *certificatesv1.PodCertificateRequest) {
	if r.Spec.MaxExpirationSeconds == nil {
		v := int32(defaultPodCertExpiration)
		r.Spec.MaxExpirationSeconds = &v
	}
}

var deviceTaintEffects = []string{string(resourcev1.DeviceTaintEffectNoExecute), string(resourcev1.DeviceTaintEffectNoSchedule), "None"}

func validateDeviceTaintRule(r *resourcev1.DeviceTaintRule) field.ErrorList {
	var errs field.ErrorList
	taint := specPath.Child("taint")
	errs = append(errs, metav1validation.ValidateLabelName(r.Spec.Taint.Key, taint.Child("key"))...)
	if r.Spec.Taint.Value != "" {
		for _, msg := range validation.IsValidLabelValue(r.Spec.Taint.Value) {
			errs = append(errs, field.Invalid(taint.Child("value"), r.Spec.Taint.Value, msg))
		}
	}
	if !slices.Contains(deviceTaintEffects, string(r.Spec.Taint.Effect)) {
		errs = append(errs, field.NotSupported(taint.Child("effect"), r.Spec.Taint.Effect, deviceTaintEffects))
	}
	if sel := r.Spec.DeviceSelector; sel != nil {
		p := specPath.Child("deviceSelector")
		if sel.Driver != nil {
			for _, msg := range validation.IsDNS1123Subdomain(*sel.Driver) {
				errs = append(errs, field.Invalid(p.Child("driver"), *sel.Driver, msg))
			}
		}
		if sel.Pool != nil && *sel.Pool == "" {
			errs = append(errs, field.Required(p.Child("pool"), ""))
		}
		if sel.Device != nil {
			for _, msg := range validation.IsDNS1123Label(*sel.Device) {
				errs = append(errs, field.Invalid(p.Child("device"), *sel.Device, msg))
			}
		}
	}
	return errs
}

// defaultDeviceTaintRule stamps when the taint was added, as kube does on
// create; a client that leaves it out on update keeps the stamp (the REST
// layer's update merges over the stored object only for status, so the
// stamp is renewed here, which is what a changed taint wants anyway).
func defaultDeviceTaintRule(r *resourcev1.DeviceTaintRule) {
	if r.Spec.Taint.TimeAdded == nil {
		now := metav1.Now()
		r.Spec.Taint.TimeAdded = &now
	}
}

func validateStorageVersionMigration(m *storagemigrationv1.StorageVersionMigration) field.ErrorList {
	var errs field.ErrorList
	if m.Spec.Resource.Resource == "" {
		errs = append(errs, field.Required(specPath.Child("resource", "resource"), "resource is required to be set"))
	}
	return append(errs, validateMigrationStatus(m)...)
}

var conditionReason = regexp.MustCompile(`^[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?$`)

// validateMigrationStatus checks the status conditions a migrator writes.
func validateMigrationStatus(m *storagemigrationv1.StorageVersionMigration) field.ErrorList {
	var errs field.ErrorList
	p := field.NewPath("status")
	if rv := m.Status.ResourceVersion; rv != "" {
		if n, err := strconv.ParseUint(rv, 10, 64); err != nil || n == 0 {
			errs = append(errs, field.Invalid(p.Child("resourceVersion"), rv, "resource version is not well formed: "+rv))
		}
	}
	seen := map[string]bool{}
	for i, c := range m.Status.Conditions {
		cp := p.Child("conditions").Index(i)
		if seen[c.Type] {
			errs = append(errs, field.Duplicate(cp.Child("type"), c.Type))
		}
		seen[c.Type] = true
		errs = append(errs, metav1validation.ValidateLabelName(c.Type, cp.Child("type"))...)
		switch c.Status {
		case metav1.ConditionTrue, metav1.ConditionFalse, metav1.ConditionUnknown:
		default:
			errs = append(errs, field.NotSupported(cp.Child("status"), c.Status, []string{"False", "True", "Unknown"}))
		}
		if c.LastTransitionTime.IsZero() {
			errs = append(errs, field.Required(cp.Child("lastTransitionTime"), ""))
		}
		if c.Reason == "" {
			errs = append(errs, field.Required(cp.Child("reason"), ""))
		} else if !conditionReason.MatchString(c.Reason) {
			errs = append(errs, field.Invalid(cp.Child("reason"), c.Reason, validation.RegexError(
				"a condition reason must start with alphabetic character, optionally followed by a string of alphanumeric characters or '_,:', and must end with an alphanumeric character or '_'",
				conditionReason.String()[1:len(conditionReason.String())-1], "my_name", "MY_NAME", "MyName", "ReasonA,ReasonB", "ReasonA:ReasonB")))
		}
	}
	succeeded, failed, running := migrationCondition(m, storagemigrationv1.MigrationSucceeded), migrationCondition(m, storagemigrationv1.MigrationFailed), migrationCondition(m, storagemigrationv1.MigrationRunning)
	invalid := func(msg string) {
		errs = append(errs, field.Invalid(p.Child("conditions"), m.Status.Conditions, msg))
	}
	if succeeded && failed {
		invalid("Both success and failed conditions cannot be true at the same time")
	}
	if succeeded && running {
		invalid("Running condition cannot be true when success condition is true")
	}
	if failed && running {
		invalid("Running condition cannot be true when failed condition is true")
	}
	return errs
}

func migrationCondition(m *storagemigrationv1.StorageVersionMigration, t storagemigrationv1.MigrationConditionType) bool {
	for _, c := range m.Status.Conditions {
		if c.Type == string(t) {
			return c.Status == metav1.ConditionTrue
		}
	}
	return false
}

func validateStorageVersionMigrationUpdate(m, old *storagemigrationv1.StorageVersionMigration) field.ErrorList {
	var errs field.ErrorList
	if m.Spec.Resource != old.Spec.Resource {
		errs = append(errs, field.Invalid(specPath, m.Spec, "field is immutable"))
	}
	p := field.NewPath("status")
	if old.Status.ResourceVersion != "" && m.Status.ResourceVersion != old.Status.ResourceVersion {
		errs = append(errs, field.Invalid(p.Child("resourceVersion"), m.Status.ResourceVersion, "resourceVersion cannot be updated"))
	}
	// Outcomes are final.
	if migrationCondition(old, storagemigrationv1.MigrationSucceeded) && !migrationCondition(m, storagemigrationv1.MigrationSucceeded) {
		errs = append(errs, field.Invalid(p.Child("conditions"), m.Status.Conditions, "Success condition cannot be set to false once it is true"))
	}
	if migrationCondition(old, storagemigrationv1.MigrationFailed) && !migrationCondition(m, storagemigrationv1.MigrationFailed) {
		errs = append(errs, field.Invalid(p.Child("conditions"), m.Status.Conditions, "Failed condition cannot be set to false once it is true"))
	}
	return errs
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

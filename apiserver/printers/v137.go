package printers

// Tables of the kinds kube 1.37 serves by default beyond 1.36's, with kube's
// columns.

import (
	"sort"
	"strings"

	certificatesv1 "k8s.io/api/certificates/v1"
	resourcev1 "k8s.io/api/resource/v1"
	storagemigrationv1 "k8s.io/api/storagemigration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// kube prints trust bundles without an age.
var clusterTrustBundleColumns = []metav1.TableColumnDefinition{
	nameColumn,
	column("SignerName", "string", "The signer the bundle belongs to, if any."),
}

func clusterTrustBundleCells(b *certificatesv1.ClusterTrustBundle) []interface{} {
	return []interface{}{b.Name, b.Spec.SignerName}
}

var podCertificateRequestColumns = []metav1.TableColumnDefinition{
	nameColumn,
	column("PodName", "string", "The pod the certificate is for."),
	column("ServiceAccountName", "string", "The service account the pod runs as."),
	column("NodeName", "string", "The node the pod is assigned to."),
	column("SignerName", "string", "The requested signer."),
	column("State", "string", "Is the request Pending, Issued, Denied, or Failed?"),
	column("UnverifiedUserAnnotations", "string", "Extra information for the signer."),
}

func podCertificateRequestCells(r *certificatesv1.PodCertificateRequest) []interface{} {
	state := "Pending"
	for _, c := range r.Status.Conditions {
		switch c.Type {
		case certificatesv1.PodCertificateRequestConditionTypeIssued, certificatesv1.PodCertificateRequestConditionTypeDenied,
			certificatesv1.PodCertificateRequestConditionTypeFailed:
			if c.Status == metav1.ConditionTrue {
				state = c.Type
			}
		}
	}
	pairs := make([]string, 0, len(r.Spec.UnverifiedUserAnnotations))
	for k, v := range r.Spec.UnverifiedUserAnnotations {
		pairs = append(pairs, k+"="+v)
	}
	sort.Strings(pairs)
	return []interface{}{r.Name, r.Spec.PodName, r.Spec.ServiceAccountName, string(r.Spec.NodeName), r.Spec.SignerName, state, strings.Join(pairs, ",")}
}

var deviceTaintRuleColumns = []metav1.TableColumnDefinition{
	nameColumn,
	column("Key", "string", "The taint key applied to the devices."),
	column("Value", "string", "The taint value."),
	column("Effect", "string", "The effect of the taint."),
	column("TimeAdded", "string", "When the taint was added or its effect changed."),
	ageColumn,
}

func deviceTaintRuleCells(r *resourcev1.DeviceTaintRule) []interface{} {
	added := "<unknown>"
	if t := r.Spec.Taint.TimeAdded; t != nil {
		added = since(*t)
	}
	return []interface{}{r.Name, r.Spec.Taint.Key, r.Spec.Taint.Value, string(r.Spec.Taint.Effect), added, since(r.CreationTimestamp)}
}

var storageVersionMigrationColumns = []metav1.TableColumnDefinition{
	nameColumn,
	column("Resource", "string", "GroupResource to migrate"),
	column("Status", "string", "Status of the migration"),
}

func storageVersionMigrationCells(m *storagemigrationv1.StorageVersionMigration) []interface{} {
	resource := m.Spec.Resource.Resource
	if m.Spec.Resource.Group != "" {
		resource += "." + m.Spec.Resource.Group
	}
	// The outcome when there is one, else whether it runs.
	status := "Unknown"
	for _, t := range []storagemigrationv1.MigrationConditionType{storagemigrationv1.MigrationSucceeded, storagemigrationv1.MigrationFailed, storagemigrationv1.MigrationRunning} {
		if hasTrueCondition(m.Status.Conditions, string(t)) {
			status = string(t)
			break
		}
	}
	return []interface{}{m.Name, resource, status}
}

func hasTrueCondition(conditions []metav1.Condition, t string) bool {
	for _, c := range conditions {
		if c.Type == t && c.Status == metav1.ConditionTrue {
			return true
		}
	}
	return false
}

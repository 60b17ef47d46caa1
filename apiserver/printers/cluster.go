package printers

import (
	"fmt"
	"sort"
	"strings"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	certificatesv1 "k8s.io/api/certificates/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	nodev1 "k8s.io/api/node/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/duration"
)

var leaseColumns = []metav1.TableColumnDefinition{
	nameColumn,
	column("Holder", "string", "Identity of the current lease holder."),
	ageColumn,
}

func leaseCells(l *coordinationv1.Lease) []interface{} {
	holder := ""
	if l.Spec.HolderIdentity != nil {
		holder = *l.Spec.HolderIdentity
	}
	return []interface{}{l.Name, holder, age(l)}
}

var ingressColumns = []metav1.TableColumnDefinition{
	nameColumn,
	column("Class", "string", "IngressClass that implements this ingress."),
	column("Hosts", "string", "Hosts matched by the rules."),
	column("Address", "string", "Load-balancer addresses of the ingress."),
	column("Ports", "string", "Ports served: 80, plus 443 with TLS."),
	ageColumn,
}

func ingressCells(in *networkingv1.Ingress) []interface{} {
	class := "<none>"
	if in.Spec.IngressClassName != nil {
		class = *in.Spec.IngressClassName
	}
	// Up to three hosts; the "more" count is over rules, as in kube.
	var hosts []string
	for _, rule := range in.Spec.Rules {
		if len(hosts) < maxListed && rule.Host != "" {
			hosts = append(hosts, rule.Host)
		}
	}
	hostsCell := "*"
	if len(hosts) > 0 {
		hostsCell = strings.Join(hosts, ",")
		if len(in.Spec.Rules) > maxListed {
			hostsCell = fmt.Sprintf("%s + %d more...", hostsCell, len(in.Spec.Rules)-maxListed)
		}
	}
	var addresses []string
	seen := map[string]bool{}
	for _, lb := range in.Status.LoadBalancer.Ingress {
		addr := lb.IP
		if addr == "" {
			addr = lb.Hostname
		}
		if addr != "" && !seen[addr] {
			seen[addr] = true
			addresses = append(addresses, addr)
		}
	}
	sort.Strings(addresses)
	ports := "80"
	if len(in.Spec.TLS) > 0 {
		ports = "80, 443"
	}
	return []interface{}{in.Name, class, hostsCell, strings.Join(addresses, ","), ports, age(in)}
}

var ingressClassColumns = []metav1.TableColumnDefinition{
	nameColumn,
	column("Controller", "string", "Controller that handles this class."),
	column("Parameters", "string", "Resource holding extra parameters."),
	ageColumn,
}

func ingressClassCells(ic *networkingv1.IngressClass) []interface{} {
	parameters := "<none>"
	if p := ic.Spec.Parameters; p != nil {
		parameters = p.Kind
		if p.APIGroup != nil {
			parameters += "." + *p.APIGroup
		}
		parameters += "/" + p.Name
	}
	return []interface{}{ic.Name, ic.Spec.Controller, parameters, age(ic)}
}

var networkPolicyColumns = []metav1.TableColumnDefinition{
	nameColumn,
	column("Pod-Selector", "string", "Pods the policy applies to."),
	ageColumn,
}

func networkPolicyCells(np *networkingv1.NetworkPolicy) []interface{} {
	return []interface{}{np.Name, metav1.FormatLabelSelector(&np.Spec.PodSelector), age(np)}
}

var roleBindingColumns = []metav1.TableColumnDefinition{
	nameColumn,
	column("Role", "string", "Kind/name of the bound role."),
	ageColumn,
	wideColumn("Users", "string", "Users in the binding."),
	wideColumn("Groups", "string", "Groups in the binding."),
	wideColumn("ServiceAccounts", "string", "Service accounts in the binding, as namespace/name."),
}

func roleBindingCells(b *rbacv1.RoleBinding) []interface{} {
	return bindingCells(b, b.RoleRef, b.Subjects)
}

func clusterRoleBindingCells(b *rbacv1.ClusterRoleBinding) []interface{} {
	return bindingCells(b, b.RoleRef, b.Subjects)
}

func bindingCells(m metav1.Object, role rbacv1.RoleRef, subjects []rbacv1.Subject) []interface{} {
	var users, groups, serviceAccounts []string
	for _, s := range subjects {
		switch s.Kind {
		case rbacv1.UserKind:
			users = append(users, s.Name)
		case rbacv1.GroupKind:
			groups = append(groups, s.Name)
		case rbacv1.ServiceAccountKind:
			serviceAccounts = append(serviceAccounts, s.Namespace+"/"+s.Name)
		}
	}
	return []interface{}{
		m.GetName(), role.Kind + "/" + role.Name, age(m),
		strings.Join(users, ", "), strings.Join(groups, ", "), strings.Join(serviceAccounts, ", "),
	}
}

var storageClassColumns = []metav1.TableColumnDefinition{
	nameColumn,
	column("Provisioner", "string", "Volume plugin that provisions volumes."),
	column("ReclaimPolicy", "string", "Reclaim policy of provisioned volumes."),
	column("VolumeBindingMode", "string", "When volumes are bound and provisioned."),
	column("AllowVolumeExpansion", "string", "Whether volumes may be expanded."),
	ageColumn,
}

// Annotations marking the default storage class (GA and beta spellings).
var defaultStorageClassAnnotations = []string{
	"storageclass.kubernetes.io/is-default-class",
	"storageclass.beta.kubernetes.io/is-default-class",
}

func storageClassCells(sc *storagev1.StorageClass) []interface{} {
	name := sc.Name
	for _, a := range defaultStorageClassAnnotations {
		if sc.Annotations[a] == "true" {
			name += " (default)"
			break
		}
	}
	reclaimPolicy := string(corev1.PersistentVolumeReclaimDelete)
	if sc.ReclaimPolicy != nil {
		reclaimPolicy = string(*sc.ReclaimPolicy)
	}
	bindingMode := string(storagev1.VolumeBindingImmediate)
	if sc.VolumeBindingMode != nil {
		bindingMode = string(*sc.VolumeBindingMode)
	}
	allowExpansion := sc.AllowVolumeExpansion != nil && *sc.AllowVolumeExpansion
	return []interface{}{name, sc.Provisioner, reclaimPolicy, bindingMode, allowExpansion, age(sc)}
}

var csiDriverColumns = []metav1.TableColumnDefinition{
	nameColumn,
	column("AttachRequired", "boolean", "Whether volumes need an attach step."),
	column("PodInfoOnMount", "boolean", "Whether pod details are passed on mount."),
	column("StorageCapacity", "boolean", "Whether the scheduler considers storage capacity."),
	column("TokenRequests", "string", "Audiences of service account tokens passed to the driver."),
	column("RequiresRepublish", "boolean", "Whether volumes are periodically re-published."),
	column("Modes", "string", "Supported volume lifecycle modes."),
	ageColumn,
}

func csiDriverCells(d *storagev1.CSIDriver) []interface{} {
	attachRequired := d.Spec.AttachRequired == nil || *d.Spec.AttachRequired
	tokenRequests := "<unset>"
	if d.Spec.TokenRequests != nil {
		audiences := make([]string, len(d.Spec.TokenRequests))
		for i, t := range d.Spec.TokenRequests {
			audiences[i] = t.Audience
		}
		tokenRequests = strings.Join(audiences, ",")
	}
	modes := make([]string, len(d.Spec.VolumeLifecycleModes))
	for i, m := range d.Spec.VolumeLifecycleModes {
		modes[i] = string(m)
	}
	return []interface{}{
		d.Name, attachRequired, boolValue(d.Spec.PodInfoOnMount), boolValue(d.Spec.StorageCapacity),
		tokenRequests, boolValue(d.Spec.RequiresRepublish), orNone(strings.Join(modes, ",")), age(d),
	}
}

var csiNodeColumns = []metav1.TableColumnDefinition{
	nameColumn,
	column("Drivers", "integer", "Number of CSI drivers registered on the node."),
	ageColumn,
}

func csiNodeCells(n *storagev1.CSINode) []interface{} {
	return []interface{}{n.Name, int64(len(n.Spec.Drivers)), age(n)}
}

var volumeAttachmentColumns = []metav1.TableColumnDefinition{
	nameColumn,
	{Name: "Attacher", Type: "string", Format: "name", Description: "CSI driver that attaches the volume."},
	column("PV", "string", "Persistent volume being attached."),
	column("Node", "string", "Node the volume is attached to."),
	column("Attached", "boolean", "Whether the attach operation succeeded."),
	ageColumn,
}

func volumeAttachmentCells(va *storagev1.VolumeAttachment) []interface{} {
	pv := ""
	if va.Spec.Source.PersistentVolumeName != nil {
		pv = *va.Spec.Source.PersistentVolumeName
	}
	return []interface{}{va.Name, va.Spec.Attacher, pv, va.Spec.NodeName, va.Status.Attached, age(va)}
}

var priorityClassColumns = []metav1.TableColumnDefinition{
	nameColumn,
	column("Value", "integer", "Priority of pods using this class."),
	column("Global-Default", "boolean", "Whether pods without a class get this one."),
	ageColumn,
	column("PreemptionPolicy", "string", "Whether pods of this class may preempt others."),
}

func priorityClassCells(pc *schedulingv1.PriorityClass) []interface{} {
	preemptionPolicy := ""
	if pc.PreemptionPolicy != nil {
		preemptionPolicy = string(*pc.PreemptionPolicy)
	}
	return []interface{}{pc.Name, int64(pc.Value), pc.GlobalDefault, age(pc), preemptionPolicy}
}

var runtimeClassColumns = []metav1.TableColumnDefinition{
	nameColumn,
	column("Handler", "string", "CRI handler that runs pods of this class."),
	ageColumn,
}

func runtimeClassCells(rc *nodev1.RuntimeClass) []interface{} {
	return []interface{}{rc.Name, rc.Handler, age(rc)}
}

var webhookConfigurationColumns = []metav1.TableColumnDefinition{
	nameColumn,
	column("Webhooks", "integer", "Number of webhooks in the configuration."),
	ageColumn,
}

func mutatingWebhookCells(c *admissionregistrationv1.MutatingWebhookConfiguration) []interface{} {
	return []interface{}{c.Name, int64(len(c.Webhooks)), age(c)}
}

func validatingWebhookCells(c *admissionregistrationv1.ValidatingWebhookConfiguration) []interface{} {
	return []interface{}{c.Name, int64(len(c.Webhooks)), age(c)}
}

var certificateSigningRequestColumns = []metav1.TableColumnDefinition{
	nameColumn,
	ageColumn,
	column("SignerName", "string", "Signer the request is addressed to."),
	column("Requestor", "string", "User who created the request."),
	column("RequestedDuration", "string", "Validity period asked for."),
	column("Condition", "string", "Approval state, and whether a certificate was issued."),
}

func certificateSigningRequestCells(csr *certificatesv1.CertificateSigningRequest) []interface{} {
	requestedDuration := "<none>"
	if csr.Spec.ExpirationSeconds != nil {
		requestedDuration = duration.HumanDuration(time.Duration(*csr.Spec.ExpirationSeconds) * time.Second)
	}
	return []interface{}{csr.Name, age(csr), orNone(csr.Spec.SignerName), csr.Spec.Username, requestedDuration, csrCondition(csr)}
}

// csrCondition summarises conditions: Denied beats Approved beats Pending.
func csrCondition(csr *certificatesv1.CertificateSigningRequest) string {
	var approved, denied, failed bool
	for _, c := range csr.Status.Conditions {
		switch c.Type {
		case certificatesv1.CertificateApproved:
			approved = true
		case certificatesv1.CertificateDenied:
			denied = true
		case certificatesv1.CertificateFailed:
			failed = true
		}
	}
	status := "Pending"
	if denied {
		status = "Denied"
	} else if approved {
		status = "Approved"
	}
	if failed {
		status += ",Failed"
	}
	if len(csr.Status.Certificate) > 0 {
		status += ",Issued"
	}
	return status
}

func boolValue(b *bool) bool {
	return b != nil && *b
}

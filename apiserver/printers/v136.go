package printers

// Tables of resource.k8s.io (DRA), flowcontrol.apiserver.k8s.io, the
// networking.k8s.io IP objects, volume attributes classes and mutating
// admission policies, with kube's columns.

import (
	"strconv"
	"strings"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	networkingv1 "k8s.io/api/networking/v1"
	resourcev1 "k8s.io/api/resource/v1"
	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

const none = "<none>"

var nameAgeColumns = []metav1.TableColumnDefinition{nameColumn, ageColumn}

func deviceClassCells(c *resourcev1.DeviceClass) []interface{} {
	return []interface{}{c.Name, since(c.CreationTimestamp)}
}

func resourceClaimTemplateCells(t *resourcev1.ResourceClaimTemplate) []interface{} {
	return []interface{}{t.Name, since(t.CreationTimestamp)}
}

var resourceClaimColumns = []metav1.TableColumnDefinition{
	nameColumn,
	column("State", "string", "A summary of the claim's state: pending, allocated, reserved, deleted."),
	ageColumn,
}

func resourceClaimCells(c *resourcev1.ResourceClaim) []interface{} {
	var states []string
	if c.DeletionTimestamp != nil {
		states = append(states, "deleted")
	}
	if c.Status.Allocation == nil {
		if c.DeletionTimestamp == nil {
			states = append(states, "pending")
		}
	} else {
		states = append(states, "allocated")
		if len(c.Status.ReservedFor) > 0 {
			states = append(states, "reserved")
		}
	}
	return []interface{}{c.Name, strings.Join(states, ","), since(c.CreationTimestamp)}
}

var resourceSliceColumns = []metav1.TableColumnDefinition{
	nameColumn,
	column("Node", "string", "The node whose devices the slice lists, if any."),
	column("Driver", "string", "The driver that publishes the slice."),
	column("Pool", "string", "The pool the slice belongs to."),
	ageColumn,
}

func resourceSliceCells(s *resourcev1.ResourceSlice) []interface{} {
	node := none
	if s.Spec.NodeName != nil && *s.Spec.NodeName != "" {
		node = *s.Spec.NodeName
	}
	return []interface{}{s.Name, node, s.Spec.Driver, s.Spec.Pool.Name, since(s.CreationTimestamp)}
}

var volumeAttributesClassColumns = []metav1.TableColumnDefinition{
	nameColumn,
	column("DriverName", "string", "The CSI driver the class is for."),
	ageColumn,
}

func volumeAttributesClassCells(c *storagev1.VolumeAttributesClass) []interface{} {
	return []interface{}{c.Name, c.DriverName, since(c.CreationTimestamp)}
}

var flowSchemaColumns = []metav1.TableColumnDefinition{
	nameColumn,
	column("PriorityLevel", "string", "The priority level the matching requests go to."),
	column("MatchingPrecedence", "string", "Lower matches first."),
	column("DistinguisherMethod", "string", "How requests are told apart into flows."),
	ageColumn,
	column("MissingPL", "string", "Whether the priority level it names is missing (the Dangling condition)."),
}

func flowSchemaCells(fs *flowcontrolv1.FlowSchema) []interface{} {
	method := none
	if fs.Spec.DistinguisherMethod != nil {
		method = string(fs.Spec.DistinguisherMethod.Type)
	}
	missing := "?"
	for _, c := range fs.Status.Conditions {
		if c.Type == flowcontrolv1.FlowSchemaConditionDangling {
			missing = string(c.Status)
		}
	}
	return []interface{}{fs.Name, fs.Spec.PriorityLevelConfiguration.Name, int64(fs.Spec.MatchingPrecedence), method, since(fs.CreationTimestamp), missing}
}

var priorityLevelColumns = []metav1.TableColumnDefinition{
	nameColumn,
	column("Type", "string", "Exempt or Limited."),
	column("NominalConcurrencyShares", "string", "The share of the server's concurrency this level gets."),
	column("Queues", "string", "Number of queues."),
	column("HandSize", "string", "Queues a flow is shuffled over."),
	column("QueueLengthLimit", "string", "Requests a queue holds at most."),
	ageColumn,
}

func priorityLevelCells(pl *flowcontrolv1.PriorityLevelConfiguration) []interface{} {
	shares, queues, hand, limit := none, none, none, none
	if l := pl.Spec.Limited; l != nil {
		if l.NominalConcurrencyShares != nil {
			shares = strconv.Itoa(int(*l.NominalConcurrencyShares))
		}
		if q := l.LimitResponse.Queuing; q != nil {
			queues, hand, limit = strconv.Itoa(int(q.Queues)), strconv.Itoa(int(q.HandSize)), strconv.Itoa(int(q.QueueLengthLimit))
		}
	}
	return []interface{}{pl.Name, string(pl.Spec.Type), shares, queues, hand, limit, since(pl.CreationTimestamp)}
}

// kube prints IP addresses without an age.
var ipAddressColumns = []metav1.TableColumnDefinition{
	nameColumn,
	column("ParentRef", "string", "The object the address is allocated to."),
}

func ipAddressCells(ip *networkingv1.IPAddress) []interface{} {
	ref := none
	if p := ip.Spec.ParentRef; p != nil {
		ref = p.Resource
		if p.Group != "" {
			ref += "." + p.Group
		}
		if p.Namespace != "" {
			ref += "/" + p.Namespace
		}
		ref += "/" + p.Name
	}
	return []interface{}{ip.Name, ref}
}

var serviceCIDRColumns = []metav1.TableColumnDefinition{
	nameColumn,
	column("CIDRs", "string", "The ranges Service cluster IPs come from."),
	ageColumn,
}

func serviceCIDRCells(c *networkingv1.ServiceCIDR) []interface{} {
	return []interface{}{c.Name, strings.Join(c.Spec.CIDRs, ","), since(c.CreationTimestamp)}
}

var mutatingPolicyColumns = []metav1.TableColumnDefinition{
	nameColumn,
	column("Mutations", "integer", "The number of mutations."),
	column("ParamKind", "string", "The kind of the policy's parameters, if any."),
	ageColumn,
}

func mutatingPolicyCells(p *admissionregistrationv1.MutatingAdmissionPolicy) []interface{} {
	param := none
	if k := p.Spec.ParamKind; k != nil {
		param = k.APIVersion + "/" + k.Kind
	}
	return []interface{}{p.Name, int64(len(p.Spec.Mutations)), param, since(p.CreationTimestamp)}
}

var mutatingPolicyBindingColumns = []metav1.TableColumnDefinition{
	nameColumn,
	column("PolicyName", "string", "The policy bound."),
	column("ParamRef", "string", "The parameters it is bound with, if any."),
	ageColumn,
}

func mutatingPolicyBindingCells(b *admissionregistrationv1.MutatingAdmissionPolicyBinding) []interface{} {
	param := none
	if r := b.Spec.ParamRef; r != nil {
		switch {
		case r.Name != "" && r.Namespace != "":
			param = r.Namespace + "/" + r.Name
		case r.Name != "":
			param = r.Name
		case r.Selector != nil:
			param = metav1.FormatLabelSelector(r.Selector)
		default:
			param = "*"
		}
	}
	return []interface{}{b.Name, b.Spec.PolicyName, param, since(b.CreationTimestamp)}
}

var componentStatusColumns = []metav1.TableColumnDefinition{
	nameColumn,
	column("Status", "string", "Status of the component conditions"),
	column("Message", "string", "Message of the component conditions"),
	column("Error", "string", "Error of the component conditions"),
}

func componentStatusCells(cs *corev1.ComponentStatus) []interface{} {
	status, message, errText := "Unknown", "", ""
	for _, c := range cs.Conditions {
		if c.Type != corev1.ComponentHealthy {
			continue
		}
		switch c.Status {
		case corev1.ConditionTrue:
			status = "Healthy"
		case corev1.ConditionFalse:
			status = "Unhealthy"
		}
		message, errText = c.Message, c.Error
	}
	return []interface{}{cs.Name, status, message, errText}
}

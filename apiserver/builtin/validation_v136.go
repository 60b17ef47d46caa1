package builtin

// Validation of resource.k8s.io (DRA) slices, volume attributes classes,
// CSI storage capacities, APF's FlowSchemas and PriorityLevelConfigurations,
// the networking.k8s.io IP objects and mutating admission policies: the
// rules users meet first, in kube's words.

import (
	"net/netip"
	"slices"
	"strings"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	networkingv1 "k8s.io/api/networking/v1"
	resourcev1 "k8s.io/api/resource/v1"
	storagev1 "k8s.io/api/storage/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/devplane/devplane/apiserver/celcompile"
)

func validateResourceSlice(s *resourcev1.ResourceSlice) field.ErrorList {
	var errs field.ErrorList
	if s.Spec.Driver == "" {
		errs = append(errs, field.Required(specPath.Child("driver"), ""))
	} else {
		for _, msg := range validation.IsDNS1123Subdomain(s.Spec.Driver) {
			errs = append(errs, field.Invalid(specPath.Child("driver"), s.Spec.Driver, msg))
		}
	}
	pool := specPath.Child("pool")
	if s.Spec.Pool.Name == "" {
		errs = append(errs, field.Required(pool.Child("name"), ""))
	}
	if s.Spec.Pool.ResourceSliceCount <= 0 {
		errs = append(errs, field.Invalid(pool.Child("resourceSliceCount"), s.Spec.Pool.ResourceSliceCount, "must be greater than zero"))
	}
	selectors := 0
	if s.Spec.NodeName != nil && *s.Spec.NodeName != "" {
		selectors++
	}
	if s.Spec.NodeSelector != nil {
		selectors++
	}
	if s.Spec.AllNodes != nil && *s.Spec.AllNodes {
		selectors++
	}
	if s.Spec.PerDeviceNodeSelection != nil && *s.Spec.PerDeviceNodeSelection {
		selectors++
	}
	switch {
	case selectors == 0:
		errs = append(errs, field.Required(specPath, "exactly one of `nodeName`, `nodeSelector`, `allNodes`, `perDeviceNodeSelection` is required"))
	case selectors > 1:
		errs = append(errs, field.Invalid(specPath, "{`nodeName`, `nodeSelector`, `allNodes`, `perDeviceNodeSelection`}",
			"exactly one of `nodeName`, `nodeSelector`, `allNodes`, `perDeviceNodeSelection` is required, but multiple fields are set"))
	}
	return errs
}

func validateResourceSliceUpdate(s, old *resourcev1.ResourceSlice) field.ErrorList {
	errs := apivalidation.ValidateImmutableField(s.Spec.Driver, old.Spec.Driver, specPath.Child("driver"))
	return append(errs, apivalidation.ValidateImmutableField(s.Spec.NodeName, old.Spec.NodeName, specPath.Child("nodeName"))...)
}

func validateResourceClaimUpdate(c, old *resourcev1.ResourceClaim) field.ErrorList {
	return apivalidation.ValidateImmutableField(c.Spec, old.Spec, specPath)
}

func validateVolumeAttributesClass(c *storagev1.VolumeAttributesClass) field.ErrorList {
	var errs field.ErrorList
	if c.DriverName == "" {
		errs = append(errs, field.Required(field.NewPath("driverName"), ""))
	}
	if len(c.Parameters) == 0 {
		errs = append(errs, field.Required(field.NewPath("parameters"), "must contain at least one key/value pair"))
	}
	return errs
}

func validateVolumeAttributesClassUpdate(c, old *storagev1.VolumeAttributesClass) field.ErrorList {
	var errs field.ErrorList
	errs = append(errs, apivalidation.ValidateImmutableField(c.DriverName, old.DriverName, field.NewPath("driverName"))...)
	if !apiequality.Semantic.DeepEqual(c.Parameters, old.Parameters) {
		errs = append(errs, field.Forbidden(field.NewPath("parameters"), "updates to parameters are forbidden."))
	}
	return errs
}

func validateCSIStorageCapacity(c *storagev1.CSIStorageCapacity) field.ErrorList {
	var errs field.ErrorList
	for _, msg := range validation.IsDNS1123Subdomain(c.StorageClassName) {
		errs = append(errs, field.Invalid(field.NewPath("storageClassName"), c.StorageClassName, msg))
	}
	return errs
}

var priorityLevelTypes = []string{string(flowcontrolv1.PriorityLevelEnablementExempt), string(flowcontrolv1.PriorityLevelEnablementLimited)}

func validateFlowSchema(fs *flowcontrolv1.FlowSchema) field.ErrorList {
	var errs field.ErrorList
	if fs.Spec.PriorityLevelConfiguration.Name == "" {
		errs = append(errs, field.Required(specPath.Child("priorityLevelConfiguration", "name"), "must reference a priority level"))
	}
	if p := fs.Spec.MatchingPrecedence; p <= 0 || p > 10000 {
		errs = append(errs, field.Invalid(specPath.Child("matchingPrecedence"), p, "must be between 1 and 10000 inclusively"))
	}
	if d := fs.Spec.DistinguisherMethod; d != nil && d.Type != flowcontrolv1.FlowDistinguisherMethodByUserType && d.Type != flowcontrolv1.FlowDistinguisherMethodByNamespaceType {
		errs = append(errs, field.NotSupported(specPath.Child("distinguisherMethod", "type"), d.Type, []string{"ByNamespace", "ByUser"}))
	}
	return errs
}

func validatePriorityLevel(pl *flowcontrolv1.PriorityLevelConfiguration) field.ErrorList {
	var errs field.ErrorList
	typ := specPath.Child("type")
	switch pl.Spec.Type {
	case "":
		errs = append(errs, field.Required(typ, ""))
	case flowcontrolv1.PriorityLevelEnablementExempt:
		if pl.Spec.Limited != nil {
			errs = append(errs, field.Forbidden(specPath.Child("limited"), "must be nil if the type is not Limited"))
		}
	case flowcontrolv1.PriorityLevelEnablementLimited:
		if pl.Spec.Limited == nil {
			errs = append(errs, field.Required(specPath.Child("limited"), "must not be empty when type is Limited"))
		}
	default:
		errs = append(errs, field.NotSupported(typ, pl.Spec.Type, priorityLevelTypes))
	}
	return errs
}

func validateIPAddress(ip *networkingv1.IPAddress) field.ErrorList {
	var errs field.ErrorList
	if addr, err := netip.ParseAddr(ip.Name); err != nil || addr.String() != ip.Name {
		msg := "must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)"
		if err == nil {
			msg = "must be in canonical form (\"" + addr.String() + "\")"
		}
		errs = append(errs, field.Invalid(metadataPath.Child("name"), ip.Name, msg))
	}
	ref := ip.Spec.ParentRef
	if ref == nil {
		return append(errs, field.Required(specPath.Child("parentRef"), ""))
	}
	p := specPath.Child("parentRef")
	if ref.Resource == "" {
		errs = append(errs, field.Required(p.Child("resource"), ""))
	}
	if ref.Name == "" {
		errs = append(errs, field.Required(p.Child("name"), ""))
	}
	return errs
}

func validateIPAddressUpdate(ip, old *networkingv1.IPAddress) field.ErrorList {
	return apivalidation.ValidateImmutableField(ip.Spec.ParentRef, old.Spec.ParentRef, specPath.Child("parentRef"))
}

func validateServiceCIDR(c *networkingv1.ServiceCIDR) field.ErrorList {
	p := specPath.Child("cidrs")
	if len(c.Spec.CIDRs) == 0 {
		return field.ErrorList{field.Required(p, "at least one CIDR required")}
	}
	var errs field.ErrorList
	if len(c.Spec.CIDRs) > 2 {
		errs = append(errs, field.Invalid(p, c.Spec, "may only hold up to 2 values"))
	}
	families := map[bool]bool{}
	for i, cidr := range c.Spec.CIDRs {
		prefix, err := netip.ParsePrefix(cidr)
		if err != nil || prefix.Masked() != prefix {
			errs = append(errs, field.Invalid(p.Index(i), cidr, "must be a valid CIDR value, (e.g. 10.9.8.0/24 or 2001:db8::/64)"))
			continue
		}
		if families[prefix.Addr().Is4()] {
			errs = append(errs, field.Invalid(p, c.Spec, "may specify no more than one IP for each IP family, i.e 192.168.0.0/24 and 2001:db8::/64"))
		}
		families[prefix.Addr().Is4()] = true
	}
	return errs
}

func validateServiceCIDRUpdate(c, old *networkingv1.ServiceCIDR) field.ErrorList {
	return apivalidation.ValidateImmutableField(c.Spec.CIDRs, old.Spec.CIDRs, specPath.Child("cidrs"))
}

var reinvocationPolicies = []string{string(admissionregistrationv1.IfNeededReinvocationPolicy), string(admissionregistrationv1.NeverReinvocationPolicy)}

func validateMutatingAdmissionPolicy(p *admissionregistrationv1.MutatingAdmissionPolicy) field.ErrorList {
	var errs field.ErrorList
	if p.Spec.MatchConstraints == nil {
		errs = append(errs, field.Required(specPath.Child("matchConstraints"), ""))
	}
	if len(p.Spec.Mutations) == 0 {
		errs = append(errs, field.Required(specPath.Child("mutations"), "mutations must contain at least one item"))
	}
	// Its CEL compiles as kube's does: match conditions on their own, then
	// variables, which the mutations may name.
	hasParams := p.Spec.ParamKind != nil
	errs = append(errs, validateMatchConditions(p.Spec.MatchConditions, hasParams, specPath.Child("matchConditions"))...)
	policy := celcompile.NewPolicy(hasParams, true)
	errs = append(errs, validatePolicyVariables(policy, p.Spec.Variables)...)
	for i, m := range p.Spec.Mutations {
		mp := specPath.Child("mutations").Index(i)
		switch m.PatchType {
		case admissionregistrationv1.PatchTypeApplyConfiguration:
			if m.ApplyConfiguration == nil || m.ApplyConfiguration.Expression == "" {
				errs = append(errs, field.Required(mp.Child("applyConfiguration"), "applyConfiguration.expression is required when patchType is ApplyConfiguration"))
			} else if err := policy.ApplyConfiguration(strings.TrimSpace(m.ApplyConfiguration.Expression), mp.Child("applyConfiguration", "expression")); err != nil {
				errs = append(errs, err)
			}
		case admissionregistrationv1.PatchTypeJSONPatch:
			if m.JSONPatch == nil || m.JSONPatch.Expression == "" {
				errs = append(errs, field.Required(mp.Child("jsonPatch"), "jsonPatch.expression is required when patchType is JSONPatch"))
			} else if err := policy.JSONPatch(strings.TrimSpace(m.JSONPatch.Expression), mp.Child("jsonPatch", "expression")); err != nil {
				errs = append(errs, err)
			}
		default:
			errs = append(errs, field.NotSupported(mp.Child("patchType"), m.PatchType, []string{"ApplyConfiguration", "JSONPatch"}))
		}
	}
	if p.Spec.ReinvocationPolicy == "" {
		errs = append(errs, field.Required(specPath.Child("reinvocationPolicy"), ""))
	} else if !slices.Contains(reinvocationPolicies, string(p.Spec.ReinvocationPolicy)) {
		errs = append(errs, field.NotSupported(specPath.Child("reinvocationPolicy"), p.Spec.ReinvocationPolicy, reinvocationPolicies))
	}
	return errs
}

func validateMutatingAdmissionPolicyBinding(b *admissionregistrationv1.MutatingAdmissionPolicyBinding) field.ErrorList {
	if b.Spec.PolicyName == "" {
		return field.ErrorList{field.Required(specPath.Child("policyName"), "")}
	}
	return nil
}

// defaultFlowSchema and defaultPriorityLevel fill what kube's APF defaults.
func defaultFlowSchema(fs *flowcontrolv1.FlowSchema) {
	if fs.Spec.MatchingPrecedence == 0 {
		fs.Spec.MatchingPrecedence = 1000
	}
}

func defaultPriorityLevel(pl *flowcontrolv1.PriorityLevelConfiguration) {
	l := pl.Spec.Limited
	if l == nil {
		return
	}
	setIfNil(&l.NominalConcurrencyShares, 30)
	setIfNil(&l.LendablePercent, 0)
	if q := l.LimitResponse.Queuing; q != nil {
		if q.Queues == 0 {
			q.Queues = 64
		}
		if q.HandSize == 0 {
			q.HandSize = 8
		}
		if q.QueueLengthLimit == 0 {
			q.QueueLengthLimit = 50
		}
	}
}

func defaultMutatingAdmissionPolicy(p *admissionregistrationv1.MutatingAdmissionPolicy) {
	setIfNil(&p.Spec.FailurePolicy, admissionregistrationv1.Fail)
	if m := p.Spec.MatchConstraints; m != nil {
		setIfNil(&m.MatchPolicy, admissionregistrationv1.Equivalent)
		setIfNil(&m.NamespaceSelector, metav1.LabelSelector{})
		setIfNil(&m.ObjectSelector, metav1.LabelSelector{})
	}
}

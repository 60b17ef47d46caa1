package builtin

import (
	corev1 "k8s.io/api/core/v1"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	utilvalidation "k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

var (
	supportedServiceTypes      = []corev1.ServiceType{corev1.ServiceTypeClusterIP, corev1.ServiceTypeExternalName, corev1.ServiceTypeLoadBalancer, corev1.ServiceTypeNodePort}
	supportedSessionAffinities = []corev1.ServiceAffinity{corev1.ServiceAffinityClientIP, corev1.ServiceAffinityNone}
)

func validateService(svc *corev1.Service) field.ErrorList {
	var errs field.ErrorList
	s := &svc.Spec
	portsPath := specPath.Child("ports")
	if s.Type != "" && !containsValue(supportedServiceTypes, s.Type) {
		errs = append(errs, field.NotSupported(specPath.Child("type"), s.Type, supportedServiceTypes))
	}
	if s.Type == corev1.ServiceTypeExternalName {
		if s.ExternalName == "" {
			errs = append(errs, field.Required(specPath.Child("externalName"), ""))
		} else {
			for _, msg := range utilvalidation.IsDNS1123Subdomain(s.ExternalName) {
				errs = append(errs, field.Invalid(specPath.Child("externalName"), s.ExternalName, msg))
			}
		}
		if s.ClusterIP != "" {
			errs = append(errs, field.Forbidden(specPath.Child("clusterIPs"), "may not be set for ExternalName services"))
		}
	} else if len(s.Ports) == 0 && s.ClusterIP != corev1.ClusterIPNone {
		errs = append(errs, field.Required(portsPath, ""))
	}
	if s.SessionAffinity != "" && !containsValue(supportedSessionAffinities, s.SessionAffinity) {
		errs = append(errs, field.NotSupported(specPath.Child("sessionAffinity"), s.SessionAffinity, supportedSessionAffinities))
	}
	errs = append(errs, validateClusterIP(s)...)

	type portKey struct {
		protocol corev1.Protocol
		port     int32
	}
	names := map[string]bool{}
	seen := map[portKey]bool{}
	for i, p := range s.Ports {
		pPath := portsPath.Index(i)
		switch {
		case p.Name == "" && len(s.Ports) > 1:
			errs = append(errs, field.Required(pPath.Child("name"), ""))
		case p.Name != "":
			for _, msg := range utilvalidation.IsDNS1123Label(p.Name) {
				errs = append(errs, field.Invalid(pPath.Child("name"), p.Name, msg))
			}
			if names[p.Name] {
				errs = append(errs, field.Duplicate(pPath.Child("name"), p.Name))
			}
			names[p.Name] = true
		}
		for _, msg := range utilvalidation.IsValidPortNum(int(p.Port)) {
			errs = append(errs, field.Invalid(pPath.Child("port"), p.Port, msg))
		}
		errs = append(errs, validateProtocol(p.Protocol, pPath.Child("protocol"))...)
		errs = append(errs, validateNamedPort(p.TargetPort, pPath.Child("targetPort"))...)
		if p.NodePort != 0 {
			if s.Type != corev1.ServiceTypeNodePort && s.Type != corev1.ServiceTypeLoadBalancer {
				errs = append(errs, field.Forbidden(pPath.Child("nodePort"), "may not be used when `type` is '"+string(s.Type)+"'"))
			} else {
				for _, msg := range utilvalidation.IsValidPortNum(int(p.NodePort)) {
					errs = append(errs, field.Invalid(pPath.Child("nodePort"), p.NodePort, msg))
				}
			}
		}
		key := portKey{p.Protocol, p.Port}
		if seen[key] {
			errs = append(errs, field.Duplicate(pPath, corev1.ServicePort{Protocol: p.Protocol, Port: p.Port}))
		}
		seen[key] = true
	}
	return append(errs, metav1validation.ValidateLabels(s.Selector, specPath.Child("selector"))...)
}

func validateClusterIP(s *corev1.ServiceSpec) field.ErrorList {
	ipPath := specPath.Child("clusterIPs").Index(0)
	switch {
	case s.ClusterIP == "":
		return nil
	case s.ClusterIP == corev1.ClusterIPNone:
		if s.Type == corev1.ServiceTypeNodePort || s.Type == corev1.ServiceTypeLoadBalancer {
			return field.ErrorList{field.Invalid(ipPath, s.ClusterIP, "may not be set to 'None' for "+string(s.Type)+" services")}
		}
		return nil
	case s.Type == corev1.ServiceTypeExternalName:
		return nil // reported as forbidden above
	default:
		return utilvalidation.IsValidIP(ipPath, s.ClusterIP)
	}
}

// validateServiceUpdate keeps an allocated cluster IP: it may not change
// once set, except by turning the service into an ExternalName one.
func validateServiceUpdate(svc, old *corev1.Service) field.ErrorList {
	if old.Spec.ClusterIP == "" || svc.Spec.Type == corev1.ServiceTypeExternalName || svc.Spec.ClusterIP == old.Spec.ClusterIP {
		return nil
	}
	return field.ErrorList{field.Invalid(specPath.Child("clusterIPs").Index(0), svc.Spec.ClusterIPs, "may not change once set")}
}

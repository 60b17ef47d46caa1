package admission

// NewChain is kube-apiserver's default admission order: the built-in
// plugins, then mutating admission policies and mutating webhooks; in the validation phase (each plugin's
// Validate in the same order), PodSecurity, ResourceQuota,
// ValidatingAdmissionPolicies and validating webhooks. NamespaceLifecycle
// is the REST store's own check.
func NewChain(src Source) (Chain, error) {
	podSecurity, err := PodSecurity(src)
	if err != nil {
		return nil, err
	}
	return Chain{
		ServiceAccount(src),
		LimitRanger(src),
		DefaultTolerationSeconds(),
		Priority(src),
		DefaultStorageClass(src),
		podSecurity,
		MutatingAdmissionPolicies(src),
		NewMutatingWebhooks(src),
		ValidatingAdmissionPolicies(src),
		NewValidatingWebhooks(src),
		ResourceQuota(src),
	}, nil
}

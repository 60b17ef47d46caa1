package admission

// NewChain is kube-apiserver's default admission order: the built-in
// plugins, then mutating webhooks; in the validation phase,
// ValidatingAdmissionPolicies then validating webhooks. NamespaceLifecycle
// is the REST store's own check.
func NewChain(src Source) Chain {
	return Chain{
		NewMutatingWebhooks(src),
		NewValidatingWebhooks(src),
	}
}

package flowcontrol

// kube-apiserver 1.37's bootstrap configuration of API Priority and
// Fairness, object for object: the mandatory FlowSchemas and priority
// levels every server keeps, and the suggested ones it creates once.

import (
	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
)

// MandatoryPriorityLevels are restored whenever they are deleted or changed.
func MandatoryPriorityLevels() []*flowcontrolv1.PriorityLevelConfiguration {
	return []*flowcontrolv1.PriorityLevelConfiguration{
		limitedLevel("catch-all", 5, 0, nil),
		exemptLevel("exempt", 0, 0),
	}
}

// SuggestedPriorityLevels are created when missing and kept up to date while their autoupdate-spec annotation says "true".
func SuggestedPriorityLevels() []*flowcontrolv1.PriorityLevelConfiguration {
	return []*flowcontrolv1.PriorityLevelConfiguration{
		limitedLevel("global-default", 20, 50, queuing(128, 6, 50)),
		limitedLevel("leader-election", 10, 0, queuing(16, 4, 50)),
		limitedLevel("node-high", 40, 25, queuing(64, 6, 50)),
		limitedLevel("system", 30, 33, queuing(64, 6, 50)),
		limitedLevel("workload-high", 40, 50, queuing(128, 6, 50)),
		limitedLevel("workload-low", 100, 90, queuing(128, 6, 50)),
	}
}

// MandatoryFlowSchemas are restored whenever they are deleted or changed.
func MandatoryFlowSchemas() []*flowcontrolv1.FlowSchema {
	return []*flowcontrolv1.FlowSchema{
		flowSchema("catch-all", "catch-all", 10000, byUser,
			rule(subjects(group("system:unauthenticated"), group("system:authenticated")),
				resources(verbs("*"), groups("*"), names("*"), namespaces("*"), true),
				nonResources(verbs("*"), "*")),
		),
		flowSchema("exempt", "exempt", 1, noDistinguisher,
			rule(subjects(group("system:masters")),
				resources(verbs("*"), groups("*"), names("*"), namespaces("*"), true),
				nonResources(verbs("*"), "*")),
		),
	}
}

// SuggestedFlowSchemas are created when missing and kept up to date while their autoupdate-spec annotation says "true".
func SuggestedFlowSchemas() []*flowcontrolv1.FlowSchema {
	return []*flowcontrolv1.FlowSchema{
		flowSchema("global-default", "global-default", 9900, byUser,
			rule(subjects(group("system:unauthenticated"), group("system:authenticated")),
				resources(verbs("*"), groups("*"), names("*"), namespaces("*"), true),
				nonResources(verbs("*"), "*")),
		),
		flowSchema("kube-controller-manager", "workload-high", 800, byNamespace,
			rule(subjects(user("system:kube-controller-manager")),
				resources(verbs("*"), groups("*"), names("*"), namespaces("*"), true),
				nonResources(verbs("*"), "*")),
		),
		flowSchema("kube-scheduler", "workload-high", 800, byNamespace,
			rule(subjects(user("system:kube-scheduler")),
				resources(verbs("*"), groups("*"), names("*"), namespaces("*"), true),
				nonResources(verbs("*"), "*")),
		),
		flowSchema("kube-system-service-accounts", "workload-high", 900, byNamespace,
			rule(subjects(serviceAccount("kube-system", "*")),
				resources(verbs("*"), groups("*"), names("*"), namespaces("*"), true),
				nonResources(verbs("*"), "*")),
		),
		flowSchema("probes", "exempt", 2, noDistinguisher,
			rule(subjects(group("system:unauthenticated"), group("system:authenticated")),
				nonResources(verbs("get"), "/healthz", "/readyz", "/livez")),
		),
		flowSchema("service-accounts", "workload-low", 9000, byUser,
			rule(subjects(group("system:serviceaccounts")),
				resources(verbs("*"), groups("*"), names("*"), namespaces("*"), true),
				nonResources(verbs("*"), "*")),
		),
		flowSchema("system-leader-election", "leader-election", 100, byUser,
			rule(subjects(user("system:kube-controller-manager"), user("system:kube-scheduler"), serviceAccount("kube-system", "*")),
				resources(verbs("get", "create", "update"), groups("coordination.k8s.io"), names("leases"), namespaces("*"), false)),
		),
		flowSchema("system-node-high", "node-high", 400, byUser,
			rule(subjects(group("system:nodes")),
				resources(verbs("*"), groups(""), names("nodes", "nodes/status"), namespaces("*"), true),
				resources(verbs("*"), groups("coordination.k8s.io"), names("leases"), namespaces("*"), false)),
		),
		flowSchema("system-nodes", "system", 500, byUser,
			rule(subjects(group("system:nodes")),
				resources(verbs("*"), groups("*"), names("*"), namespaces("*"), true),
				nonResources(verbs("*"), "*")),
		),
	}
}

package workloads

import (
	_ "k8s.io/kubernetes/pkg/controller/cronjob"
	_ "k8s.io/kubernetes/pkg/controller/daemon"
	_ "k8s.io/kubernetes/pkg/controller/deployment"
	_ "k8s.io/kubernetes/pkg/controller/disruption"
	_ "k8s.io/kubernetes/pkg/controller/endpoint"
	_ "k8s.io/kubernetes/pkg/controller/endpointslice"
	_ "k8s.io/kubernetes/pkg/controller/endpointslicemirroring"
	_ "k8s.io/kubernetes/pkg/controller/job"
	_ "k8s.io/kubernetes/pkg/controller/podgc"
	_ "k8s.io/kubernetes/pkg/controller/replicaset"
	_ "k8s.io/kubernetes/pkg/controller/replication"
	_ "k8s.io/kubernetes/pkg/controller/statefulset"
	_ "k8s.io/kubernetes/pkg/controller/ttlafterfinished"
	_ "k8s.io/kubernetes/pkg/controller/volume/persistentvolume"
	_ "k8s.io/kubernetes/pkg/scheduler"
)

package printers

import (
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	autoscalingv1 "k8s.io/api/autoscaling/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	batchv1 "k8s.io/api/batch/v1"
	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	eventsv1 "k8s.io/api/events/v1"
	networkingv1 "k8s.io/api/networking/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

var (
	podsResource     = schema.GroupResource{Resource: "pods"}
	servicesResource = schema.GroupResource{Resource: "services"}
	jobsResource     = schema.GroupResource{Group: "batch", Resource: "jobs"}
)

func running() corev1.ContainerState {
	return corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: ago(time.Hour)}}
}

func waiting(reason string) corev1.ContainerState {
	return corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: reason}}
}

func twoContainerPod() *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: objectMeta("web-0"),
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "app"}, {Name: "proxy"}}},
		Status:     corev1.PodStatus{Phase: corev1.PodRunning},
	}
}

func TestPodCells(t *testing.T) {
	now := time.Now()
	tests := []struct {
		name string
		pod  func() *corev1.Pod
		want map[string]interface{}
	}{
		{
			name: "one of two ready, restarts with last termination",
			pod: func() *corev1.Pod {
				p := twoContainerPod()
				p.Status.ContainerStatuses = []corev1.ContainerStatus{
					{Name: "app", Ready: true, State: running(), RestartCount: 3,
						LastTerminationState: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{FinishedAt: metav1.NewTime(now.Add(-2 * time.Minute))}}},
					{Name: "proxy", Ready: false, State: running(), RestartCount: 1},
				}
				return p
			},
			want: map[string]interface{}{"Ready": "1/2", "Status": "Running", "Restarts": "4 (2m ago)", "Age": "5m"},
		},
		{
			name: "restarts without termination time have no suffix",
			pod: func() *corev1.Pod {
				p := twoContainerPod()
				p.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "app", State: running(), RestartCount: 2}}
				return p
			},
			want: map[string]interface{}{"Restarts": "2", "Ready": "0/2"},
		},
		{
			name: "waiting reason wins over phase",
			pod: func() *corev1.Pod {
				p := twoContainerPod()
				p.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "app", State: waiting("CrashLoopBackOff")}}
				return p
			},
			want: map[string]interface{}{"Status": "CrashLoopBackOff"},
		},
		{
			name: "terminated without reason shows exit code",
			pod: func() *corev1.Pod {
				p := twoContainerPod()
				p.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "app", State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 137}}}}
				return p
			},
			want: map[string]interface{}{"Status": "ExitCode:137"},
		},
		{
			name: "status reason replaces phase",
			pod: func() *corev1.Pod {
				p := twoContainerPod()
				p.Status.Phase, p.Status.Reason = corev1.PodFailed, "Evicted"
				return p
			},
			want: map[string]interface{}{"Status": "Evicted"},
		},
		{
			name: "deleting a running pod",
			pod: func() *corev1.Pod {
				p := twoContainerPod()
				p.DeletionTimestamp = ptr(metav1.Now())
				return p
			},
			want: map[string]interface{}{"Status": "Terminating"},
		},
		{
			name: "deleting a finished pod keeps its phase",
			pod: func() *corev1.Pod {
				p := twoContainerPod()
				p.Status.Phase = corev1.PodSucceeded
				p.DeletionTimestamp = ptr(metav1.Now())
				return p
			},
			want: map[string]interface{}{"Status": "Succeeded"},
		},
		{
			name: "deleting a pod on a lost node",
			pod: func() *corev1.Pod {
				p := twoContainerPod()
				p.Status.Reason = "NodeLost"
				p.DeletionTimestamp = ptr(metav1.Now())
				return p
			},
			want: map[string]interface{}{"Status": "Unknown"},
		},
		{
			name: "init container still running",
			pod: func() *corev1.Pod {
				p := twoContainerPod()
				p.Status.Phase = corev1.PodPending
				p.Spec.InitContainers = []corev1.Container{{Name: "migrate"}}
				p.Status.InitContainerStatuses = []corev1.ContainerStatus{{Name: "migrate", State: running()}}
				p.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "app", State: waiting("PodInitializing")}}
				return p
			},
			want: map[string]interface{}{"Status": "Init:0/1", "Ready": "0/2"},
		},
		{
			name: "init container crash looping",
			pod: func() *corev1.Pod {
				p := twoContainerPod()
				p.Status.Phase = corev1.PodPending
				p.Spec.InitContainers = []corev1.Container{{Name: "a"}, {Name: "b"}}
				p.Status.InitContainerStatuses = []corev1.ContainerStatus{
					{Name: "a", State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 0}}},
					{Name: "b", State: waiting("CrashLoopBackOff"), RestartCount: 4},
				}
				return p
			},
			want: map[string]interface{}{"Status": "Init:CrashLoopBackOff", "Restarts": "4"},
		},
		{
			name: "running sidecar counts as a container",
			pod: func() *corev1.Pod {
				p := twoContainerPod()
				p.Spec.InitContainers = []corev1.Container{{Name: "mesh", RestartPolicy: ptr(corev1.ContainerRestartPolicyAlways)}}
				p.Status.InitContainerStatuses = []corev1.ContainerStatus{{Name: "mesh", Ready: true, Started: ptr(true), State: running()}}
				p.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "app", Ready: true, State: running()}, {Name: "proxy", Ready: true, State: running()}}
				return p
			},
			want: map[string]interface{}{"Status": "Running", "Ready": "3/3"},
		},
		{
			name: "completed container beside a running one",
			pod: func() *corev1.Pod {
				p := twoContainerPod()
				p.Status.ContainerStatuses = []corev1.ContainerStatus{
					{Name: "app", Ready: true, State: running()},
					{Name: "proxy", State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{Reason: "Completed"}}},
				}
				return p
			},
			want: map[string]interface{}{"Status": "NotReady", "Ready": "1/2"},
		},
		{
			name: "wide cells",
			pod: func() *corev1.Pod {
				p := twoContainerPod()
				p.Status.PodIPs = []corev1.PodIP{{IP: "10.244.0.5"}, {IP: "fd00::5"}}
				p.Spec.ReadinessGates = []corev1.PodReadinessGate{{ConditionType: "example.com/lb"}, {ConditionType: "example.com/dns"}}
				p.Status.Conditions = []corev1.PodCondition{{Type: "example.com/lb", Status: corev1.ConditionTrue}}
				return p
			},
			want: map[string]interface{}{"IP": "10.244.0.5", "Node": "<none>", "Nominated Node": "<none>", "Readiness Gates": "1/2"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			wantCells(t, convert(t, podsResource, tc.pod()), 0, tc.want)
		})
	}
}

func TestServiceCells(t *testing.T) {
	service := func(typ corev1.ServiceType, mutate func(*corev1.Service)) *corev1.Service {
		s := &corev1.Service{ObjectMeta: objectMeta("web"), Spec: corev1.ServiceSpec{
			Type: typ, ClusterIP: "10.96.0.10", ClusterIPs: []string{"10.96.0.10"},
			Selector: map[string]string{"app": "web"},
			Ports:    []corev1.ServicePort{{Port: 80, Protocol: corev1.ProtocolTCP}},
		}}
		if mutate != nil {
			mutate(s)
		}
		return s
	}
	tests := []struct {
		name string
		svc  *corev1.Service
		want map[string]interface{}
	}{
		{"cluster IP", service(corev1.ServiceTypeClusterIP, nil),
			map[string]interface{}{"Type": "ClusterIP", "Cluster-IP": "10.96.0.10", "External-IP": "<none>", "Port(s)": "80/TCP", "Selector": "app=web"}},
		{"headless without ports", service(corev1.ServiceTypeClusterIP, func(s *corev1.Service) {
			s.Spec.ClusterIP, s.Spec.ClusterIPs, s.Spec.Ports, s.Spec.Selector = "None", []string{"None"}, nil, nil
		}), map[string]interface{}{"Cluster-IP": "None", "Port(s)": "<none>", "Selector": "<none>"}},
		{"node ports", service(corev1.ServiceTypeNodePort, func(s *corev1.Service) {
			s.Spec.Ports = []corev1.ServicePort{{Port: 80, NodePort: 30080, Protocol: corev1.ProtocolTCP}, {Port: 53, Protocol: corev1.ProtocolUDP}}
			s.Spec.ExternalIPs = []string{"192.0.2.1"}
		}), map[string]interface{}{"Port(s)": "80:30080/TCP,53/UDP", "External-IP": "192.0.2.1"}},
		{"load balancer pending", service(corev1.ServiceTypeLoadBalancer, nil),
			map[string]interface{}{"External-IP": "<pending>"}},
		{"load balancer with ingress and external IPs", service(corev1.ServiceTypeLoadBalancer, func(s *corev1.Service) {
			s.Status.LoadBalancer.Ingress = []corev1.LoadBalancerIngress{{IP: "203.0.113.9"}, {Hostname: "lb.example.com"}, {IP: "203.0.113.9"}}
			s.Spec.ExternalIPs = []string{"192.0.2.1"}
		}), map[string]interface{}{"External-IP": "203.0.113.9,lb.example.com,192.0.2.1"}},
		{"external name", service(corev1.ServiceTypeExternalName, func(s *corev1.Service) {
			s.Spec.ExternalName, s.Spec.ClusterIP, s.Spec.ClusterIPs = "db.example.com", "", nil
		}), map[string]interface{}{"External-IP": "db.example.com", "Cluster-IP": "<none>"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			wantCells(t, convert(t, servicesResource, tc.svc), 0, tc.want)
		})
	}
}

func TestWorkloadCells(t *testing.T) {
	deploy := &appsv1.Deployment{ObjectMeta: objectMeta("web"),
		Spec:   appsv1.DeploymentSpec{Replicas: ptr(int32(2)), Selector: webSelector, Template: podTemplate("nginx", "sidecar")},
		Status: appsv1.DeploymentStatus{ReadyReplicas: 1, UpdatedReplicas: 2, AvailableReplicas: 1}}
	wantCells(t, convert(t, schema.GroupResource{Group: "apps", Resource: "deployments"}, deploy), 0, map[string]interface{}{
		"Ready": "1/2", "Up-to-date": int64(2), "Available": int64(1),
		"Containers": "nginx,sidecar", "Images": "nginx:1.0,sidecar:1.0", "Selector": "app=web",
	})

	sts := &appsv1.StatefulSet{ObjectMeta: objectMeta("db"), Spec: appsv1.StatefulSetSpec{Replicas: ptr(int32(3))}, Status: appsv1.StatefulSetStatus{ReadyReplicas: 3}}
	wantCells(t, convert(t, schema.GroupResource{Group: "apps", Resource: "statefulsets"}, sts), 0, map[string]interface{}{"Ready": "3/3"})

	ds := &appsv1.DaemonSet{ObjectMeta: objectMeta("agent"), Spec: appsv1.DaemonSetSpec{Template: corev1.PodTemplateSpec{
		Spec: corev1.PodSpec{NodeSelector: map[string]string{"kubernetes.io/os": "linux"}}}},
		Status: appsv1.DaemonSetStatus{DesiredNumberScheduled: 3, NumberReady: 2}}
	wantCells(t, convert(t, schema.GroupResource{Group: "apps", Resource: "daemonsets"}, ds), 0, map[string]interface{}{
		"Desired": int64(3), "Ready": int64(2), "Node Selector": "kubernetes.io/os=linux", "Selector": "<none>",
	})

	revision := &appsv1.ControllerRevision{ObjectMeta: objectMeta("db-6c8"), Revision: 4}
	revision.OwnerReferences = []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "StatefulSet", Name: "db", Controller: ptr(true)}}
	wantCells(t, convert(t, schema.GroupResource{Group: "apps", Resource: "controllerrevisions"}, revision), 0, map[string]interface{}{
		"Controller": "statefulset.apps/db", "Revision": int64(4),
	})

	cronJob := &batchv1.CronJob{ObjectMeta: objectMeta("nightly"),
		Spec:   batchv1.CronJobSpec{Schedule: "@daily", TimeZone: ptr("Europe/Paris"), Suspend: ptr(false)},
		Status: batchv1.CronJobStatus{Active: []corev1.ObjectReference{{Name: "nightly-1"}}, LastScheduleTime: ptr(ago(time.Hour))}}
	wantCells(t, convert(t, schema.GroupResource{Group: "batch", Resource: "cronjobs"}, cronJob), 0, map[string]interface{}{
		"Schedule": "@daily", "Timezone": "Europe/Paris", "Suspend": "False", "Active": int64(1), "Last Schedule": "60m",
	})
}

func TestJobCells(t *testing.T) {
	start := metav1.NewTime(time.Now().Add(-10 * time.Minute))
	condition := func(c batchv1.JobConditionType) []batchv1.JobCondition {
		return []batchv1.JobCondition{{Type: c, Status: corev1.ConditionTrue}}
	}
	tests := []struct {
		name string
		job  batchv1.Job
		want map[string]interface{}
	}{
		{"running with completions", batchv1.Job{Spec: batchv1.JobSpec{Completions: ptr(int32(3))},
			Status: batchv1.JobStatus{Succeeded: 1, StartTime: &start}},
			map[string]interface{}{"Status": "Running", "Completions": "1/3", "Duration": "10m"}},
		{"complete", batchv1.Job{Spec: batchv1.JobSpec{Completions: ptr(int32(1))},
			Status: batchv1.JobStatus{Succeeded: 1, StartTime: &start, CompletionTime: ptr(metav1.NewTime(start.Add(90 * time.Second))), Conditions: condition(batchv1.JobComplete)}},
			map[string]interface{}{"Status": "Complete", "Completions": "1/1", "Duration": "90s"}},
		{"failed work queue", batchv1.Job{Spec: batchv1.JobSpec{Parallelism: ptr(int32(3))},
			Status: batchv1.JobStatus{Conditions: condition(batchv1.JobFailed)}},
			map[string]interface{}{"Status": "Failed", "Completions": "0/1 of 3", "Duration": ""}},
		{"suspended", batchv1.Job{Status: batchv1.JobStatus{Conditions: condition(batchv1.JobSuspended)}},
			map[string]interface{}{"Status": "Suspended", "Completions": "0/1"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tc.job.ObjectMeta = objectMeta("job")
			wantCells(t, convert(t, jobsResource, &tc.job), 0, tc.want)
		})
	}
}

func TestEventCells(t *testing.T) {
	core := &corev1.Event{
		ObjectMeta:     objectMeta("web-0.17a"),
		InvolvedObject: corev1.ObjectReference{Kind: "Pod", Name: "web-0", FieldPath: "spec.containers{app}"},
		Type:           "Warning", Reason: "BackOff", Message: "Back-off restarting failed container\n",
		Source:         corev1.EventSource{Component: "kubelet", Host: "node-1"},
		FirstTimestamp: ago(time.Hour), LastTimestamp: ago(10 * time.Minute), Count: 12,
	}
	wantCells(t, convert(t, schema.GroupResource{Resource: "events"}, core), 0, map[string]interface{}{
		"Last Seen": "10m", "Type": "Warning", "Reason": "BackOff", "Object": "pod/web-0", "Subobject": "spec.containers{app}",
		"Source": "kubelet, node-1", "Message": "Back-off restarting failed container", "First Seen": "60m", "Count": int64(12), "Name": "web-0.17a",
	})

	// New-style events: no timestamps but eventTime, a series, reporting controller.
	series := &eventsv1.Event{
		ObjectMeta: objectMeta("web.17b"),
		Regarding:  corev1.ObjectReference{Kind: "Deployment", Name: "web"},
		Type:       "Normal", Reason: "ScalingReplicaSet", Note: "Scaled up",
		EventTime:           metav1.NewMicroTime(time.Now().Add(-3 * time.Minute)),
		Series:              &eventsv1.EventSeries{Count: 4, LastObservedTime: metav1.NewMicroTime(time.Now().Add(-30 * time.Second))},
		ReportingController: "deployment-controller",
	}
	for _, gr := range []schema.GroupResource{{Group: "events.k8s.io", Resource: "events"}, {Resource: "events"}} {
		wantCells(t, convert(t, gr, series), 0, map[string]interface{}{
			"Last Seen": "30s", "First Seen": "3m", "Count": int64(4), "Object": "deployment/web", "Message": "Scaled up", "Source": "deployment-controller",
		})
	}

	singleton := &corev1.Event{ObjectMeta: objectMeta("ns.1"), InvolvedObject: corev1.ObjectReference{Kind: "Namespace"}, EventTime: metav1.NewMicroTime(time.Now().Add(-2 * time.Minute))}
	wantCells(t, convert(t, schema.GroupResource{Resource: "events"}, singleton), 0, map[string]interface{}{
		"Last Seen": "2m", "Count": int64(1), "Object": "namespace",
	})
}

func TestCoreResourceCells(t *testing.T) {
	secret := &corev1.Secret{ObjectMeta: objectMeta("tls"), Type: corev1.SecretTypeTLS, Data: map[string][]byte{"tls.crt": nil, "tls.key": nil}}
	wantCells(t, convert(t, schema.GroupResource{Resource: "secrets"}, secret), 0, map[string]interface{}{"Type": "kubernetes.io/tls", "Data": int64(2)})

	cm := &corev1.ConfigMap{ObjectMeta: objectMeta("cfg"), Data: map[string]string{"a": ""}, BinaryData: map[string][]byte{"b": nil}}
	wantCells(t, convert(t, schema.GroupResource{Resource: "configmaps"}, cm), 0, map[string]interface{}{"Data": int64(2)})

	node := &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: "node-1", Labels: map[string]string{
			"node-role.kubernetes.io/worker": "", "node-role.kubernetes.io/control-plane": "", "kubernetes.io/role": "edge"}},
		Spec: corev1.NodeSpec{Unschedulable: true},
		Status: corev1.NodeStatus{
			Conditions: []corev1.NodeCondition{{Type: corev1.NodeMemoryPressure, Status: corev1.ConditionFalse}, {Type: corev1.NodeReady, Status: corev1.ConditionTrue}},
			Addresses:  []corev1.NodeAddress{{Type: corev1.NodeHostName, Address: "node-1"}, {Type: corev1.NodeInternalIP, Address: "172.18.0.2"}},
			NodeInfo:   corev1.NodeSystemInfo{KubeletVersion: "v1.32.0", OSImage: "Debian 12"},
		},
	}
	wantCells(t, convert(t, schema.GroupResource{Resource: "nodes"}, node), 0, map[string]interface{}{
		"Status": "Ready,SchedulingDisabled", "Roles": "control-plane,edge,worker", "Age": "<unknown>", "Version": "v1.32.0",
		"Internal-IP": "172.18.0.2", "External-IP": "<none>", "OS-Image": "Debian 12", "Kernel-Version": "<unknown>",
	})
	wantCells(t, convert(t, schema.GroupResource{Resource: "nodes"}, &corev1.Node{}), 0, map[string]interface{}{"Status": "Unknown", "Roles": "<none>"})

	ep := &corev1.Endpoints{ObjectMeta: objectMeta("web"), Subsets: []corev1.EndpointSubset{{
		Addresses: []corev1.EndpointAddress{{IP: "10.0.0.1"}, {IP: "10.0.0.2"}},
		Ports:     []corev1.EndpointPort{{Port: 80}, {Port: 443}},
	}}}
	wantCells(t, convert(t, schema.GroupResource{Resource: "endpoints"}, ep), 0, map[string]interface{}{
		"Endpoints": "10.0.0.1:80,10.0.0.2:80,10.0.0.1:443 + 1 more...",
	})
	wantCells(t, convert(t, schema.GroupResource{Resource: "endpoints"}, &corev1.Endpoints{}), 0, map[string]interface{}{"Endpoints": "<none>"})

	slice := &discoveryv1.EndpointSlice{ObjectMeta: objectMeta("web-x"), AddressType: discoveryv1.AddressTypeIPv4,
		Ports:     []discoveryv1.EndpointPort{{Port: ptr(int32(8080))}, {Name: ptr("metrics")}},
		Endpoints: []discoveryv1.Endpoint{{Addresses: []string{"10.0.0.1"}}, {Addresses: []string{"10.0.0.2"}}}}
	wantCells(t, convert(t, schema.GroupResource{Group: "discovery.k8s.io", Resource: "endpointslices"}, slice), 0, map[string]interface{}{
		"AddressType": "IPv4", "Ports": "8080,metrics", "Endpoints": "10.0.0.1,10.0.0.2",
	})
	wantCells(t, convert(t, schema.GroupResource{Group: "discovery.k8s.io", Resource: "endpointslices"}, &discoveryv1.EndpointSlice{}), 0,
		map[string]interface{}{"Ports": "<unset>", "Endpoints": "<unset>"})

	pv := &corev1.PersistentVolume{
		ObjectMeta: metav1.ObjectMeta{Name: "pv-1", DeletionTimestamp: ptr(metav1.Now())},
		Spec: corev1.PersistentVolumeSpec{
			Capacity:    corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("10Gi")},
			AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteMany, corev1.ReadWriteOnce},
			ClaimRef:    &corev1.ObjectReference{Namespace: "default", Name: "data"}, StorageClassName: "standard",
			PersistentVolumeReclaimPolicy: corev1.PersistentVolumeReclaimRetain, VolumeMode: ptr(corev1.PersistentVolumeFilesystem),
		},
		Status: corev1.PersistentVolumeStatus{Phase: corev1.VolumeBound},
	}
	wantCells(t, convert(t, schema.GroupResource{Resource: "persistentvolumes"}, pv), 0, map[string]interface{}{
		"Capacity": "10Gi", "Access Modes": "RWO,RWX", "Reclaim Policy": "Retain", "Status": "Terminating", "Claim": "default/data",
		"StorageClass": "standard", "VolumeAttributesClass": "<unset>", "VolumeMode": "Filesystem",
	})

	pending := &corev1.PersistentVolumeClaim{ObjectMeta: objectMeta("data"), Spec: corev1.PersistentVolumeClaimSpec{StorageClassName: ptr("standard")},
		Status: corev1.PersistentVolumeClaimStatus{Phase: corev1.ClaimPending}}
	wantCells(t, convert(t, schema.GroupResource{Resource: "persistentvolumeclaims"}, pending), 0, map[string]interface{}{
		"Status": "Pending", "Volume": "", "Capacity": "", "Access Modes": "", "StorageClass": "standard", "VolumeMode": "<unset>",
	})
	bound := pending.DeepCopy()
	bound.Spec.VolumeName = "pv-1"
	bound.Status = corev1.PersistentVolumeClaimStatus{Phase: corev1.ClaimBound, AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOncePod},
		Capacity: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")}}
	wantCells(t, convert(t, schema.GroupResource{Resource: "persistentvolumeclaims"}, bound), 0, map[string]interface{}{
		"Status": "Bound", "Volume": "pv-1", "Capacity": "1Gi", "Access Modes": "RWOP",
	})

	quota := &corev1.ResourceQuota{ObjectMeta: objectMeta("compute"), Status: corev1.ResourceQuotaStatus{
		Hard: corev1.ResourceList{"pods": resource.MustParse("10"), "requests.cpu": resource.MustParse("2"), "limits.memory": resource.MustParse("4Gi")},
		Used: corev1.ResourceList{"pods": resource.MustParse("3"), "requests.cpu": resource.MustParse("500m")},
	}}
	wantCells(t, convert(t, schema.GroupResource{Resource: "resourcequotas"}, quota), 0, map[string]interface{}{
		"Request": "pods: 3/10, requests.cpu: 500m/2", "Limit": "limits.memory: 0/4Gi",
	})
}

func TestHorizontalPodAutoscalerCells(t *testing.T) {
	gr := schema.GroupResource{Group: "autoscaling", Resource: "horizontalpodautoscalers"}
	v2 := &autoscalingv2.HorizontalPodAutoscaler{ObjectMeta: objectMeta("web"), Spec: autoscalingv2.HorizontalPodAutoscalerSpec{
		ScaleTargetRef: autoscalingv2.CrossVersionObjectReference{Kind: "Deployment", Name: "web"},
		MinReplicas:    ptr(int32(2)), MaxReplicas: 10,
		Metrics: []autoscalingv2.MetricSpec{
			{Type: autoscalingv2.ResourceMetricSourceType, Resource: &autoscalingv2.ResourceMetricSource{Name: corev1.ResourceCPU,
				Target: autoscalingv2.MetricTarget{Type: autoscalingv2.UtilizationMetricType, AverageUtilization: ptr(int32(80))}}},
			{Type: autoscalingv2.PodsMetricSourceType, Pods: &autoscalingv2.PodsMetricSource{
				Target: autoscalingv2.MetricTarget{Type: autoscalingv2.AverageValueMetricType, AverageValue: ptr(resource.MustParse("1k"))}}},
			{Type: autoscalingv2.ResourceMetricSourceType, Resource: &autoscalingv2.ResourceMetricSource{Name: corev1.ResourceMemory,
				Target: autoscalingv2.MetricTarget{Type: autoscalingv2.UtilizationMetricType, AverageUtilization: ptr(int32(70))}}},
		},
	}, Status: autoscalingv2.HorizontalPodAutoscalerStatus{CurrentReplicas: 3, CurrentMetrics: []autoscalingv2.MetricStatus{
		{Type: autoscalingv2.ResourceMetricSourceType, Resource: &autoscalingv2.ResourceMetricStatus{Name: corev1.ResourceCPU,
			Current: autoscalingv2.MetricValueStatus{AverageUtilization: ptr(int32(45))}}},
	}}}
	wantCells(t, convert(t, gr, v2), 0, map[string]interface{}{
		"Reference": "Deployment/web", "Targets": "cpu: 45%/80%, <unknown>/1k + 1 more...", "MinPods": "2", "MaxPods": int64(10), "Replicas": int64(3),
	})

	v1 := &autoscalingv1.HorizontalPodAutoscaler{ObjectMeta: objectMeta("api"), Spec: autoscalingv1.HorizontalPodAutoscalerSpec{
		ScaleTargetRef: autoscalingv1.CrossVersionObjectReference{Kind: "StatefulSet", Name: "api"}, MaxReplicas: 4,
		TargetCPUUtilizationPercentage: ptr(int32(60))}, Status: autoscalingv1.HorizontalPodAutoscalerStatus{CurrentCPUUtilizationPercentage: ptr(int32(12))}}
	wantCells(t, convert(t, gr, v1), 0, map[string]interface{}{"Reference": "StatefulSet/api", "Targets": "cpu: 12%/60%", "MinPods": "<unset>"})
	v1.Spec.TargetCPUUtilizationPercentage, v1.Status.CurrentCPUUtilizationPercentage = nil, nil
	wantCells(t, convert(t, gr, v1), 0, map[string]interface{}{"Targets": "cpu: <unknown>/80%"})
}

func TestClusterResourceCells(t *testing.T) {
	binding := &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "admins"}, RoleRef: rbacv1.RoleRef{Kind: "ClusterRole", Name: "cluster-admin"},
		Subjects: []rbacv1.Subject{{Kind: "User", Name: "alice"}, {Kind: "User", Name: "bob"}, {Kind: "Group", Name: "system:masters"},
			{Kind: "ServiceAccount", Namespace: "kube-system", Name: "deployer"}}}
	wantCells(t, convert(t, schema.GroupResource{Group: "rbac.authorization.k8s.io", Resource: "clusterrolebindings"}, binding), 0, map[string]interface{}{
		"Role": "ClusterRole/cluster-admin", "Users": "alice, bob", "Groups": "system:masters", "ServiceAccounts": "kube-system/deployer",
	})

	class := &storagev1.StorageClass{ObjectMeta: metav1.ObjectMeta{Name: "standard", Annotations: map[string]string{"storageclass.kubernetes.io/is-default-class": "true"}},
		Provisioner: "rancher.io/local-path", VolumeBindingMode: ptr(storagev1.VolumeBindingWaitForFirstConsumer)}
	wantCells(t, convert(t, schema.GroupResource{Group: "storage.k8s.io", Resource: "storageclasses"}, class), 0, map[string]interface{}{
		"Name": "standard (default)", "ReclaimPolicy": "Delete", "VolumeBindingMode": "WaitForFirstConsumer", "AllowVolumeExpansion": false,
	})

	driver := &storagev1.CSIDriver{ObjectMeta: metav1.ObjectMeta{Name: "csi.example.com"}, Spec: storagev1.CSIDriverSpec{
		TokenRequests:        []storagev1.TokenRequest{{Audience: "vault"}},
		VolumeLifecycleModes: []storagev1.VolumeLifecycleMode{storagev1.VolumeLifecyclePersistent, storagev1.VolumeLifecycleEphemeral}}}
	wantCells(t, convert(t, schema.GroupResource{Group: "storage.k8s.io", Resource: "csidrivers"}, driver), 0, map[string]interface{}{
		"AttachRequired": true, "PodInfoOnMount": false, "TokenRequests": "vault", "Modes": "Persistent,Ephemeral",
	})

	ingress := &networkingv1.Ingress{ObjectMeta: objectMeta("web"), Spec: networkingv1.IngressSpec{
		IngressClassName: ptr("nginx"), TLS: []networkingv1.IngressTLS{{Hosts: []string{"a.example.com"}}},
		Rules: []networkingv1.IngressRule{{Host: "a.example.com"}, {Host: "b.example.com"}, {}, {Host: "c.example.com"}, {Host: "d.example.com"}},
	}, Status: networkingv1.IngressStatus{LoadBalancer: networkingv1.IngressLoadBalancerStatus{Ingress: []networkingv1.IngressLoadBalancerIngress{{IP: "172.18.0.2"}}}}}
	wantCells(t, convert(t, schema.GroupResource{Group: "networking.k8s.io", Resource: "ingresses"}, ingress), 0, map[string]interface{}{
		"Class": "nginx", "Hosts": "a.example.com,b.example.com,c.example.com + 2 more...", "Address": "172.18.0.2", "Ports": "80, 443",
	})

	csr := &certificatesv1.CertificateSigningRequest{ObjectMeta: metav1.ObjectMeta{Name: "csr-1"},
		Spec:   certificatesv1.CertificateSigningRequestSpec{SignerName: "kubernetes.io/kube-apiserver-client", Username: "alice", ExpirationSeconds: ptr(int32(3600))},
		Status: certificatesv1.CertificateSigningRequestStatus{Conditions: []certificatesv1.CertificateSigningRequestCondition{{Type: certificatesv1.CertificateApproved}}, Certificate: []byte("pem")}}
	wantCells(t, convert(t, schema.GroupResource{Group: "certificates.k8s.io", Resource: "certificatesigningrequests"}, csr), 0, map[string]interface{}{
		"SignerName": "kubernetes.io/kube-apiserver-client", "Requestor": "alice", "RequestedDuration": "60m", "Condition": "Approved,Issued",
	})
}

// Row.Object must be the item itself so the caller can strip it to metadata.
func TestRowObjectIsTheItem(t *testing.T) {
	list := &corev1.SecretList{Items: []corev1.Secret{{ObjectMeta: objectMeta("a")}, {ObjectMeta: objectMeta("b")}}}
	table := convert(t, schema.GroupResource{Resource: "secrets"}, list)
	for i := range list.Items {
		var want runtime.Object = &list.Items[i]
		if table.Rows[i].Object.Object != want {
			t.Errorf("row %d object is not list item %d", i, i)
		}
	}
}

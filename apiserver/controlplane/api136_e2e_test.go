package controlplane_test

// resource.k8s.io (DRA), flowcontrol, the networking IP objects, volume
// attributes classes, CSI storage capacities and mutating admission
// policies: served as kube serves them, against a real devplane.

import (
	"context"
	"strings"
	"testing"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	networkingv1 "k8s.io/api/networking/v1"
	resourcev1 "k8s.io/api/resource/v1"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestKube136KindsE2E(t *testing.T) {
	s := startControlPlane(t, "")
	cs := s.clientset(t, false)
	ctx := context.Background()
	meta := func(name string) metav1.ObjectMeta { return metav1.ObjectMeta{Name: name} }

	t.Run("DRA", func(t *testing.T) {
		if _, err := cs.ResourceV1().DeviceClasses().Create(ctx, &resourcev1.DeviceClass{ObjectMeta: meta("gpu")}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		_, err := cs.ResourceV1().ResourceSlices().Create(ctx, &resourcev1.ResourceSlice{ObjectMeta: meta("bad")}, metav1.CreateOptions{})
		wantInvalid(t, "empty slice", err, map[string]string{
			"spec.driver": "Required value", "spec.pool.name": "Required value",
			"spec.pool.resourceSliceCount": "must be greater than zero", "spec": "exactly one of `nodeName`",
		})
		node := "node-a"
		slice := &resourcev1.ResourceSlice{ObjectMeta: meta("node-a-gpu"), Spec: resourcev1.ResourceSliceSpec{
			Driver: "gpu.example.com", NodeName: &node, Pool: resourcev1.ResourcePool{Name: "node-a", ResourceSliceCount: 1},
			Devices: []resourcev1.Device{{Name: "gpu-0"}}}}
		if _, err := cs.ResourceV1().ResourceSlices().Create(ctx, slice, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		list, err := cs.ResourceV1().ResourceSlices().List(ctx, metav1.ListOptions{FieldSelector: "spec.nodeName=node-a,spec.driver=gpu.example.com"})
		if err != nil || len(list.Items) != 1 {
			t.Fatalf("field selectors spec.nodeName, spec.driver: %v %+v", err, list)
		}
		claims := cs.ResourceV1().ResourceClaims("default")
		claim, err := claims.Create(ctx, &resourcev1.ResourceClaim{ObjectMeta: meta("one"), Spec: resourcev1.ResourceClaimSpec{Devices: resourcev1.DeviceClaim{
			Requests: []resourcev1.DeviceRequest{{Name: "gpu", Exactly: &resourcev1.ExactDeviceRequest{DeviceClassName: "gpu"}}}}}}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		// status is a subresource: a main write leaves it, a status write sets it.
		claim.Status.Allocation = &resourcev1.AllocationResult{}
		if got, err := claims.Update(ctx, claim, metav1.UpdateOptions{}); err != nil || got.Status.Allocation != nil {
			t.Fatalf("update with status: %v %+v", err, got.Status)
		}
		claim, _ = claims.Get(ctx, "one", metav1.GetOptions{})
		claim.Status.Allocation = &resourcev1.AllocationResult{}
		if got, err := claims.UpdateStatus(ctx, claim, metav1.UpdateOptions{}); err != nil || got.Status.Allocation == nil {
			t.Fatalf("update status: %v %+v", err, got)
		}
		if out := s.mustKubectl(t, "get", "resourceclaims", "-n", "default"); !strings.Contains(out, "allocated") || strings.Join(headers(out), ",") != "NAME,STATE,AGE" {
			t.Errorf("kubectl get resourceclaims:\n%s", out)
		}
		if out := s.mustKubectl(t, "get", "resourceslices"); strings.Join(headers(out), ",") != "NAME,NODE,DRIVER,POOL,AGE" || !strings.Contains(out, "gpu.example.com") {
			t.Errorf("kubectl get resourceslices:\n%s", out)
		}
	})

	t.Run("Storage", func(t *testing.T) {
		_, err := cs.StorageV1().VolumeAttributesClasses().Create(ctx, &storagev1.VolumeAttributesClass{ObjectMeta: meta("bad")}, metav1.CreateOptions{})
		wantInvalid(t, "empty class", err, map[string]string{"driverName": "Required value", "parameters": "must contain at least one key/value pair"})
		vac, err := cs.StorageV1().VolumeAttributesClasses().Create(ctx, &storagev1.VolumeAttributesClass{ObjectMeta: meta("gold"),
			DriverName: "csi.example.com", Parameters: map[string]string{"iops": "1000"}}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		vac.Parameters["iops"] = "2000"
		_, err = cs.StorageV1().VolumeAttributesClasses().Update(ctx, vac, metav1.UpdateOptions{})
		wantInvalid(t, "parameters changed", err, map[string]string{"parameters": "updates to parameters are forbidden."})
		_, err = cs.StorageV1().CSIStorageCapacities("default").Create(ctx, &storagev1.CSIStorageCapacity{ObjectMeta: meta("bad")}, metav1.CreateOptions{})
		wantInvalid(t, "no class", err, map[string]string{"storageClassName": "RFC 1123 subdomain"})
		if out := s.mustKubectl(t, "get", "vac"); strings.Join(headers(out), ",") != "NAME,DRIVERNAME,AGE" {
			t.Errorf("kubectl get vac:\n%s", out)
		}
	})

	t.Run("FlowControl", func(t *testing.T) {
		_, err := cs.FlowcontrolV1().FlowSchemas().Create(ctx, &flowcontrolv1.FlowSchema{ObjectMeta: meta("bad")}, metav1.CreateOptions{})
		wantInvalid(t, "no level", err, map[string]string{"spec.priorityLevelConfiguration.name": "must reference a priority level"})
		fs, err := cs.FlowcontrolV1().FlowSchemas().Create(ctx, &flowcontrolv1.FlowSchema{ObjectMeta: meta("mine"),
			Spec: flowcontrolv1.FlowSchemaSpec{PriorityLevelConfiguration: flowcontrolv1.PriorityLevelConfigurationReference{Name: "mine"},
				DistinguisherMethod: &flowcontrolv1.FlowDistinguisherMethod{Type: flowcontrolv1.FlowDistinguisherMethodByUserType}}}, metav1.CreateOptions{})
		if err != nil || fs.Spec.MatchingPrecedence != 1000 {
			t.Fatalf("flow schema: %v, matchingPrecedence %d (want the default 1000)", err, fs.Spec.MatchingPrecedence)
		}
		_, err = cs.FlowcontrolV1().PriorityLevelConfigurations().Create(ctx, &flowcontrolv1.PriorityLevelConfiguration{ObjectMeta: meta("bad")}, metav1.CreateOptions{})
		wantInvalid(t, "no type", err, map[string]string{"spec.type": "Required value"})
		if _, err := cs.FlowcontrolV1().PriorityLevelConfigurations().Create(ctx, &flowcontrolv1.PriorityLevelConfiguration{ObjectMeta: meta("mine"),
			Spec: flowcontrolv1.PriorityLevelConfigurationSpec{Type: flowcontrolv1.PriorityLevelEnablementLimited, Limited: &flowcontrolv1.LimitedPriorityLevelConfiguration{
				LimitResponse: flowcontrolv1.LimitResponse{Type: flowcontrolv1.LimitResponseTypeQueue, Queuing: &flowcontrolv1.QueuingConfiguration{}}}}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		out := s.mustKubectl(t, "get", "prioritylevelconfigurations", "mine")
		if strings.Join(headers(out), ",") != "NAME,TYPE,NOMINALCONCURRENCYSHARES,QUEUES,HANDSIZE,QUEUELENGTHLIMIT,AGE" || !strings.Contains(out, "Limited   30") {
			t.Errorf("kubectl get prioritylevelconfigurations:\n%s", out)
		}
		if out := s.mustKubectl(t, "get", "flowschemas", "mine"); !strings.Contains(out, "ByUser") || headers(out)[5] != "MISSINGPL" {
			t.Errorf("kubectl get flowschemas:\n%s", out)
		}
	})

	t.Run("Networking", func(t *testing.T) {
		_, err := cs.NetworkingV1().IPAddresses().Create(ctx, &networkingv1.IPAddress{ObjectMeta: meta("not-an-ip")}, metav1.CreateOptions{})
		wantInvalid(t, "bad IP", err, map[string]string{"metadata.name": "must be a valid IP address", "spec.parentRef": "Required value"})
		if _, err := cs.NetworkingV1().IPAddresses().Create(ctx, &networkingv1.IPAddress{ObjectMeta: meta("192.168.7.7"),
			Spec: networkingv1.IPAddressSpec{ParentRef: &networkingv1.ParentReference{Resource: "services", Namespace: "default", Name: "web"}}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		_, err = cs.NetworkingV1().ServiceCIDRs().Create(ctx, &networkingv1.ServiceCIDR{ObjectMeta: meta("bad")}, metav1.CreateOptions{})
		wantInvalid(t, "no CIDRs", err, map[string]string{"spec.cidrs": "at least one CIDR required"})
		if _, err := cs.NetworkingV1().ServiceCIDRs().Create(ctx, &networkingv1.ServiceCIDR{ObjectMeta: meta("extra"),
			Spec: networkingv1.ServiceCIDRSpec{CIDRs: []string{"10.200.0.0/24"}}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		if out := s.mustKubectl(t, "get", "ip", "192.168.7.7"); !strings.Contains(out, "services/default/web") {
			t.Errorf("kubectl get ip:\n%s", out)
		}
		if out := s.mustKubectl(t, "get", "servicecidrs", "extra"); strings.Join(headers(out), ",") != "NAME,CIDRS,AGE" || !strings.Contains(out, "10.200.0.0/24") {
			t.Errorf("kubectl get servicecidrs:\n%s", out)
		}
	})

	t.Run("MutatingAdmissionPolicy", func(t *testing.T) {
		_, err := cs.AdmissionregistrationV1().MutatingAdmissionPolicies().Create(ctx, &admissionregistrationv1.MutatingAdmissionPolicy{ObjectMeta: meta("bad")}, metav1.CreateOptions{})
		wantInvalid(t, "empty policy", err, map[string]string{"spec.matchConstraints": "Required value", "spec.mutations": "at least one item", "spec.reinvocationPolicy": "Required value"})
		_, err = cs.AdmissionregistrationV1().MutatingAdmissionPolicyBindings().Create(ctx, &admissionregistrationv1.MutatingAdmissionPolicyBinding{ObjectMeta: meta("bad")}, metav1.CreateOptions{})
		wantInvalid(t, "empty binding", err, map[string]string{"spec.policyName": "Required value"})
	})

	t.Run("ComponentStatuses", func(t *testing.T) {
		r := s.kubectl(t, nil, "", "get", "componentstatuses")
		if r.Code != 0 || strings.Join(headers(r.Stdout), ",") != "NAME,STATUS,MESSAGE,ERROR" || !strings.Contains(r.Stdout, "etcd-0") ||
			!strings.Contains(r.Stderr, "v1 ComponentStatus is deprecated in v1.19+") {
			t.Errorf("kubectl get cs: exit %d\n%s\n%s", r.Code, r.Stdout, r.Stderr)
		}
		etcd, err := cs.CoreV1().ComponentStatuses().Get(ctx, "etcd-0", metav1.GetOptions{})
		if err != nil || len(etcd.Conditions) != 1 || etcd.Conditions[0].Status != "True" || etcd.Conditions[0].Message != "ok" {
			t.Errorf("etcd-0: %v %+v", err, etcd)
		}
		if _, err := cs.CoreV1().ComponentStatuses().Get(ctx, "nope", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			t.Errorf("missing component: want 404, got %v", err)
		}
		if err := cs.CoreV1().RESTClient().Delete().Resource("componentstatuses").Name("etcd-0").Do(ctx).Error(); err == nil {
			t.Error("componentstatuses accepted a delete")
		}
	})

	t.Run("Explain", func(t *testing.T) {
		for _, r := range []string{"deviceclasses", "resourceclaims.spec.devices", "resourceclaimtemplates", "resourceslices.spec.pool",
			"csistoragecapacities", "vac", "flowschemas.spec", "prioritylevelconfigurations.spec.limited", "ipaddresses.spec.parentRef",
			"servicecidrs.spec", "mutatingadmissionpolicies.spec.mutations", "mutatingadmissionpolicybindings.spec"} {
			if out := s.mustKubectl(t, "explain", r); !strings.Contains(out, "FIELD") {
				t.Errorf("kubectl explain %s:\n%s", r, out)
			}
		}
	})
}

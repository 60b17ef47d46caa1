package controlplane_test

// Differences kube's conformance suite found between devplane and
// kube-apiserver 1.37 in defaults, validation, admission and content
// negotiation, each checked against a real devplane with client-go.

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	nodev1 "k8s.io/api/node/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// wantForbidden fails unless err is a 403 whose message contains text.
func wantForbidden(t *testing.T, what string, err error, text string) {
	t.Helper()
	if !apierrors.IsForbidden(err) || !strings.Contains(err.Error(), text) {
		t.Errorf("%s: want 403 with %q, got %v", what, text, err)
	}
}

// conformancePod is a minimal valid pod named name, changed by edit.
func conformancePod(name string, edit func(*corev1.Pod)) *corev1.Pod {
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "busybox"}}},
	}
	edit(pod)
	return pod
}

func TestConformanceDifferencesE2E(t *testing.T) {
	s := startControlPlane(t, "")
	cs := s.clientset(t, false)
	ctx := context.Background()
	pods := cs.CoreV1().Pods("default")

	t.Run("RoleRefAPIGroupDefaulted", func(t *testing.T) {
		rb, err := cs.RbacV1().RoleBindings("default").Create(ctx, &rbacv1.RoleBinding{
			ObjectMeta: metav1.ObjectMeta{Name: "no-api-group"},
			RoleRef:    rbacv1.RoleRef{Kind: "ClusterRole", Name: "view"},
			Subjects:   []rbacv1.Subject{{Kind: rbacv1.UserKind, Name: "someone"}},
		}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if rb.RoleRef.APIGroup != rbacv1.GroupName || rb.Subjects[0].APIGroup != rbacv1.GroupName {
			t.Errorf("role binding: roleRef %+v, subjects %+v", rb.RoleRef, rb.Subjects)
		}
		crb, err := cs.RbacV1().ClusterRoleBindings().Create(ctx, &rbacv1.ClusterRoleBinding{
			ObjectMeta: metav1.ObjectMeta{Name: "no-api-group"},
			RoleRef:    rbacv1.RoleRef{Kind: "ClusterRole", Name: "view"},
			Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: "default", Namespace: "default"}},
		}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if crb.RoleRef.APIGroup != rbacv1.GroupName || crb.Subjects[0].APIGroup != "" {
			t.Errorf("cluster role binding: roleRef %+v, subjects %+v", crb.RoleRef, crb.Subjects)
		}
	})

	t.Run("ContainerResourcesValidated", func(t *testing.T) {
		_, err := pods.Create(ctx, conformancePod("request-over-limit", func(p *corev1.Pod) {
			p.Spec.Containers[0].Resources = corev1.ResourceRequirements{
				Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("2")},
				Limits:   corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")},
			}
		}), metav1.CreateOptions{})
		wantInvalid(t, "request over limit", err, map[string]string{
			"spec.containers[0].resources.requests": "must be less than or equal to cpu limit of 1",
		})
		_, err = pods.Create(ctx, conformancePod("bad-resources", func(p *corev1.Pod) {
			p.Spec.InitContainers = []corev1.Container{{Name: "init", Image: "busybox", Resources: corev1.ResourceRequirements{
				Limits: corev1.ResourceList{"example.com/widget": resource.MustParse("500m"), "hugepages-2Mi": resource.MustParse("2Mi")},
			}}}
			p.Spec.Containers[0].Resources = corev1.ResourceRequirements{
				Requests: corev1.ResourceList{"example.com/widget": resource.MustParse("1")},
				Limits:   corev1.ResourceList{"widgets": resource.MustParse("1")},
			}
		}), metav1.CreateOptions{})
		wantInvalid(t, "bad resources", err, map[string]string{
			"spec.initContainers[0].resources.limits[example.com/widget]": "must be an integer",
			"spec.initContainers[0].resources":                            "HugePages require cpu or memory",
			"spec.containers[0].resources.limits[widgets]":                "must be a standard resource type or fully qualified",
			"spec.containers[0].resources.limits":                         "Limit must be set for non overcommitable resources",
		})
	})

	t.Run("PodCertificateProjectionValidated", func(t *testing.T) {
		certificatePod := func(name string, projection corev1.PodCertificateProjection) *corev1.Pod {
			return conformancePod(name, func(p *corev1.Pod) {
				p.Spec.Volumes = []corev1.Volume{{Name: "certs", VolumeSource: corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{
					Sources: []corev1.VolumeProjection{{PodCertificate: &projection}},
				}}}}
			})
		}
		_, err := pods.Create(ctx, certificatePod("short-certificate", corev1.PodCertificateProjection{
			SignerName:           "example.com/signer",
			KeyType:              "ED25519",
			MaxExpirationSeconds: ptr(int32(100)),
			CredentialBundlePath: "credentials.pem",
		}), metav1.CreateOptions{})
		wantInvalid(t, "maxExpirationSeconds under an hour", err, map[string]string{
			"spec.volumes[0].projected.sources[0].podCertificate.maxExpirationSeconds": "if provided, maxExpirationSeconds must be >= 3600",
		})
		_, err = pods.Create(ctx, certificatePod("long-certificate", corev1.PodCertificateProjection{
			SignerName:           "kubernetes.io/kube-apiserver-client-pod",
			KeyType:              "RSA1024",
			MaxExpirationSeconds: ptr(int32(7862401)),
		}), metav1.CreateOptions{})
		wantInvalid(t, "maxExpirationSeconds over the kubernetes.io maximum", err, map[string]string{
			"spec.volumes[0].projected.sources[0].podCertificate.maxExpirationSeconds": "if provided, maxExpirationSeconds must be <= 86400",
			"spec.volumes[0].projected.sources[0].podCertificate.keyType":              "Unsupported value",
			"spec.volumes[0].projected.sources[0].podCertificate":                      "specify at least one of credentialBundlePath, keyPath, and certificateChainPath",
		})
	})

	// kube's ValidatePodUpdate decides what a pod update may change, and
	// how: devplane's own rules let terminationGracePeriodSeconds change
	// and activeDeadlineSeconds grow.
	t.Run("PodUpdatesAsKube", func(t *testing.T) {
		pod, err := pods.Create(ctx, conformancePod("updated", func(p *corev1.Pod) {
			p.Spec.Tolerations = []corev1.Toleration{{Key: "a", Operator: corev1.TolerationOpExists}}
		}), metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		update := func(edit func(*corev1.Pod)) error {
			p := pod.DeepCopy()
			edit(p)
			updated, err := pods.Update(ctx, p, metav1.UpdateOptions{})
			if err == nil {
				pod = updated
			}
			return err
		}
		err = update(func(p *corev1.Pod) { p.Spec.TerminationGracePeriodSeconds = ptr(int64(5)) })
		wantInvalid(t, "terminationGracePeriodSeconds changed", err, map[string]string{
			"spec": "pod updates may not change fields other than `spec.containers[*].image`",
		})
		if err == nil || !strings.Contains(err.Error(), "TerminationGracePeriodSeconds") {
			t.Errorf("kube's message names the changed field in its diff: %v", err)
		}
		for what, edit := range map[string]func(*corev1.Pod){
			"image":                     func(p *corev1.Pod) { p.Spec.Containers[0].Image = "busybox:1.36" },
			"activeDeadlineSeconds set": func(p *corev1.Pod) { p.Spec.ActiveDeadlineSeconds = ptr(int64(600)) },
			"a toleration added": func(p *corev1.Pod) {
				p.Spec.Tolerations = append(p.Spec.Tolerations, corev1.Toleration{Key: "b", Operator: corev1.TolerationOpExists})
			},
			"labels": func(p *corev1.Pod) { p.Labels = map[string]string{"x": "y"} },
		} {
			if err := update(edit); err != nil {
				t.Errorf("%s: %v", what, err)
			}
		}
		if err := update(func(p *corev1.Pod) { p.Spec.ActiveDeadlineSeconds = ptr(int64(300)) }); err != nil {
			t.Errorf("activeDeadlineSeconds shortened: %v", err)
		}
		err = update(func(p *corev1.Pod) { p.Spec.ActiveDeadlineSeconds = ptr(int64(900)) })
		wantInvalid(t, "activeDeadlineSeconds lengthened", err, map[string]string{
			"spec.activeDeadlineSeconds": "must be less than or equal to previous value",
		})
		err = update(func(p *corev1.Pod) { p.Spec.Tolerations = p.Spec.Tolerations[1:] })
		wantInvalid(t, "a toleration removed", err, map[string]string{"spec.tolerations": "existing toleration can not be modified except its tolerationSeconds"})
		// kube's DefaultTolerationSeconds admits updates too: tolerations
		// replaced by the pod's own plus a new one keep its two (the pod
		// generation conformance spec does this).
		err = update(func(p *corev1.Pod) {
			own := []corev1.Toleration{{Key: "c", Operator: corev1.TolerationOpEqual, Value: "d", Effect: corev1.TaintEffectNoSchedule}}
			for _, tol := range p.Spec.Tolerations {
				if tol.Key == "a" || tol.Key == "b" {
					own = append(own, tol)
				}
			}
			p.Spec.Tolerations = own
		})
		if err != nil {
			t.Errorf("tolerations replaced, the default ones left out: %v", err)
		} else if len(pod.Spec.Tolerations) != 5 {
			t.Errorf("tolerations after the update: %+v, want a, b, c and the two defaults", pod.Spec.Tolerations)
		}

		// Status writes: kube's ValidatePodStatusUpdate.
		status := pod.DeepCopy()
		status.Status.QOSClass = corev1.PodQOSGuaranteed
		status.Status.ObservedGeneration = -1
		_, err = pods.UpdateStatus(ctx, status, metav1.UpdateOptions{})
		wantInvalid(t, "status write", err, map[string]string{
			"status.qosClass":           "field is immutable",
			"status.observedGeneration": "must be a non-negative integer",
		})
	})

	t.Run("SysctlsValidated", func(t *testing.T) {
		_, err := pods.Create(ctx, conformancePod("bad-sysctls", func(p *corev1.Pod) {
			p.Spec.HostNetwork = true
			p.Spec.SecurityContext = &corev1.PodSecurityContext{Sysctls: []corev1.Sysctl{
				{Name: "kernel.shm_rmid_forced", Value: "1"},
				{Name: "kernel.shm_rmid_forced", Value: "0"},
				{Name: "Not A Sysctl", Value: "1"},
				{Name: "net.ipv4.ip_local_port_range", Value: "1024 65535"},
			}}
		}), metav1.CreateOptions{})
		wantInvalid(t, "bad sysctls", err, map[string]string{
			"spec.securityContext.sysctls[1].name": "Duplicate value",
			"spec.securityContext.sysctls[2].name": "must have at most 253 characters and match regex",
			"spec.securityContext.sysctls[3].name": "may not be specified when 'hostNetwork' is true",
		})
	})

	t.Run("PriorityClassValueImmutable", func(t *testing.T) {
		classes := cs.SchedulingV1().PriorityClasses()
		pc, err := classes.Create(ctx, &schedulingv1.PriorityClass{ObjectMeta: metav1.ObjectMeta{Name: "fixed"}, Value: 100}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		pc.Value = 200
		never := corev1.PreemptNever
		pc.PreemptionPolicy = &never
		_, err = classes.Update(ctx, pc, metav1.UpdateOptions{})
		wantInvalid(t, "value and preemptionPolicy changed", err, map[string]string{
			"value":            "may not be changed in an update.",
			"preemptionPolicy": "field is immutable",
		})
	})

	t.Run("EventSourceFallsBackToReportingController", func(t *testing.T) {
		now := metav1.NowMicro()
		if _, err := cs.EventsV1().Events("default").Create(ctx, &eventsv1.Event{
			ObjectMeta:          metav1.ObjectMeta{Name: "reported"},
			EventTime:           now,
			ReportingController: "example.com/reporter",
			ReportingInstance:   "reporter-1",
			Action:              "Check",
			Reason:              "Checked",
			Type:                corev1.EventTypeNormal,
			Regarding:           corev1.ObjectReference{Kind: "Pod", Namespace: "default", Name: "somepod"},
		}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		list, err := cs.CoreV1().Events("default").List(ctx, metav1.ListOptions{FieldSelector: "source=example.com/reporter"})
		if err != nil || len(list.Items) != 1 || list.Items[0].Name != "reported" {
			t.Fatalf("events with source=example.com/reporter: %v %+v", err, list)
		}
	})

	t.Run("TablesOnlyWhereKubeHasThem", func(t *testing.T) {
		c := s.client(t, true)
		base := s.cp.RESTConfig().Host
		const table = "application/json;as=Table;v=v1;g=meta.k8s.io"
		post := func(accept string) int {
			body := `{"apiVersion":"authorization.k8s.io/v1","kind":"SelfSubjectAccessReview","spec":{"resourceAttributes":{"verb":"get","resource":"pods"}}}`
			req, _ := http.NewRequest(http.MethodPost, base+"/apis/authorization.k8s.io/v1/selfsubjectaccessreviews", strings.NewReader(body))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Accept", accept)
			resp, err := c.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			return resp.StatusCode
		}
		if code := post(table); code != http.StatusNotAcceptable {
			t.Errorf("review asked as a Table: %d, want 406", code)
		}
		if code := post(table + ", application/json"); code != http.StatusCreated {
			t.Errorf("review asked as a Table or JSON: %d, want 201", code)
		}
		get := func(path, accept string) int {
			req, _ := http.NewRequest(http.MethodGet, base+path, nil)
			req.Header.Set("Accept", accept)
			resp, err := c.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			return resp.StatusCode
		}
		if code := get("/api/v1/namespaces", table); code != http.StatusOK {
			t.Errorf("namespaces as a Table: %d", code)
		}
		if code := get("/api/v1/namespaces/default/status", table); code != http.StatusOK {
			t.Errorf("namespace status as a Table: %d", code)
		}
		// kube renders tables in JSON and YAML only.
		if code := get("/api/v1/namespaces", "application/vnd.kubernetes.protobuf;as=Table;v=v1;g=meta.k8s.io"); code != http.StatusNotAcceptable {
			t.Errorf("namespaces as a protobuf Table: %d, want 406", code)
		}
		var status metav1.Status
		err := cs.AuthorizationV1().RESTClient().Post().Resource("selfsubjectaccessreviews").
			SetHeader("Accept", table).Body(&authorizationv1.SelfSubjectAccessReview{}).Do(ctx).Into(&status)
		var se apierrors.APIStatus
		if !errors.As(err, &se) || se.Status().Reason != metav1.StatusReasonNotAcceptable ||
			se.Status().Message != "only the following media types are accepted: application/json, application/yaml, application/vnd.kubernetes.protobuf" {
			t.Errorf("406 Status: %v", err)
		}
	})

	t.Run("MatchConditionsCompiled", func(t *testing.T) {
		none := admissionregistrationv1.SideEffectClassNone
		hook := func(name string, conditions ...admissionregistrationv1.MatchCondition) admissionregistrationv1.ValidatingWebhook {
			return admissionregistrationv1.ValidatingWebhook{
				Name:                    name,
				ClientConfig:            admissionregistrationv1.WebhookClientConfig{URL: ptr("https://127.0.0.1:1/validate")},
				SideEffects:             &none,
				AdmissionReviewVersions: []string{"v1"},
				MatchConditions:         conditions,
			}
		}
		configs := cs.AdmissionregistrationV1().ValidatingWebhookConfigurations()
		_, err := configs.Create(ctx, &admissionregistrationv1.ValidatingWebhookConfiguration{
			ObjectMeta: metav1.ObjectMeta{Name: "bad-conditions"},
			Webhooks: []admissionregistrationv1.ValidatingWebhook{hook("one.example.com",
				admissionregistrationv1.MatchCondition{Name: "broken", Expression: "object.metadata.name =="},
				admissionregistrationv1.MatchCondition{Name: "not-bool", Expression: "'yes'"},
				admissionregistrationv1.MatchCondition{Name: "broken", Expression: "unknownVariable"},
			)},
		}, metav1.CreateOptions{})
		wantInvalid(t, "bad match conditions", err, map[string]string{
			"webhooks[0].matchConditions[0].expression": "compilation failed: ERROR: <input>:1:24: Syntax error",
			"webhooks[0].matchConditions[1].expression": "must evaluate to bool but got string",
			"webhooks[0].matchConditions[2].expression": "undeclared reference to 'unknownVariable'",
			"webhooks[0].matchConditions[2].name":       "Duplicate value",
		})
		if _, err := configs.Create(ctx, &admissionregistrationv1.ValidatingWebhookConfiguration{
			ObjectMeta: metav1.ObjectMeta{Name: "good-conditions"},
			Webhooks: []admissionregistrationv1.ValidatingWebhook{hook("two.example.com",
				admissionregistrationv1.MatchCondition{Name: "not-dry-run", Expression: "!request.dryRun && object.metadata.name.startsWith('x')"},
				admissionregistrationv1.MatchCondition{Name: "authorized", Expression: "authorizer.group('').resource('pods').check('get').allowed()"},
			)},
		}, metav1.CreateOptions{}); err != nil {
			t.Errorf("good match conditions: %v", err)
		}

		policies := cs.AdmissionregistrationV1().ValidatingAdmissionPolicies()
		policy := func(name string, variables []admissionregistrationv1.Variable, validations ...admissionregistrationv1.Validation) *admissionregistrationv1.ValidatingAdmissionPolicy {
			return &admissionregistrationv1.ValidatingAdmissionPolicy{
				ObjectMeta: metav1.ObjectMeta{Name: name},
				Spec: admissionregistrationv1.ValidatingAdmissionPolicySpec{
					MatchConstraints: &admissionregistrationv1.MatchResources{ResourceRules: []admissionregistrationv1.NamedRuleWithOperations{{
						RuleWithOperations: admissionregistrationv1.RuleWithOperations{
							Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create},
							Rule:       admissionregistrationv1.Rule{APIGroups: []string{""}, APIVersions: []string{"v1"}, Resources: []string{"configmaps"}},
						},
					}}},
					Variables:   variables,
					Validations: validations,
				},
			}
		}
		_, err = policies.Create(ctx, policy("bad-expressions", nil,
			admissionregistrationv1.Validation{Expression: "params.x == 1"},
			admissionregistrationv1.Validation{Expression: "true", MessageExpression: "1 + 1"},
		), metav1.CreateOptions{})
		wantInvalid(t, "bad policy expressions", err, map[string]string{
			"spec.validations[0].expression":        "undeclared reference to 'params'",
			"spec.validations[1].messageExpression": "must evaluate to string but got int",
		})
		if _, err := policies.Create(ctx, policy("variables",
			[]admissionregistrationv1.Variable{{Name: "name", Expression: "object.metadata.name"}},
			admissionregistrationv1.Validation{Expression: "variables.name != 'forbidden'", MessageExpression: "'bad name ' + variables.name"},
		), metav1.CreateOptions{}); err != nil {
			t.Errorf("policy with variables: %v", err)
		}

		mutating := func(name string, mutations ...admissionregistrationv1.Mutation) *admissionregistrationv1.MutatingAdmissionPolicy {
			return &admissionregistrationv1.MutatingAdmissionPolicy{
				ObjectMeta: metav1.ObjectMeta{Name: name},
				Spec: admissionregistrationv1.MutatingAdmissionPolicySpec{
					MatchConstraints: &admissionregistrationv1.MatchResources{ResourceRules: []admissionregistrationv1.NamedRuleWithOperations{{
						RuleWithOperations: admissionregistrationv1.RuleWithOperations{
							Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create},
							Rule:       admissionregistrationv1.Rule{APIGroups: []string{""}, APIVersions: []string{"v1"}, Resources: []string{"configmaps"}},
						},
					}}},
					Variables:          []admissionregistrationv1.Variable{{Name: "label", Expression: "'stamped'"}},
					Mutations:          mutations,
					ReinvocationPolicy: admissionregistrationv1.NeverReinvocationPolicy,
				},
			}
		}
		mutatingPolicies := cs.AdmissionregistrationV1().MutatingAdmissionPolicies()
		_, err = mutatingPolicies.Create(ctx, mutating("bad-mutations",
			admissionregistrationv1.Mutation{PatchType: admissionregistrationv1.PatchTypeApplyConfiguration,
				ApplyConfiguration: &admissionregistrationv1.ApplyConfiguration{Expression: "Object{metadata: Object.metadata{"}},
			admissionregistrationv1.Mutation{PatchType: admissionregistrationv1.PatchTypeJSONPatch,
				JSONPatch: &admissionregistrationv1.JSONPatch{Expression: "'not a list'"}},
		), metav1.CreateOptions{})
		wantInvalid(t, "bad mutations", err, map[string]string{
			"spec.mutations[0].applyConfiguration.expression": "compilation failed",
			"spec.mutations[1].jsonPatch.expression":          "must evaluate to list(JSONPatch) but got string",
		})
		if _, err := mutatingPolicies.Create(ctx, mutating("good-mutations",
			admissionregistrationv1.Mutation{PatchType: admissionregistrationv1.PatchTypeApplyConfiguration,
				ApplyConfiguration: &admissionregistrationv1.ApplyConfiguration{Expression: "Object{metadata: Object.metadata{labels: {'stamp': variables.label}}}"}},
			admissionregistrationv1.Mutation{PatchType: admissionregistrationv1.PatchTypeJSONPatch,
				JSONPatch: &admissionregistrationv1.JSONPatch{Expression: "[JSONPatch{op: 'add', path: '/metadata/annotations/' + jsonpatch.escapeKey('a/b'), value: 'c'}]"}},
		), metav1.CreateOptions{}); err != nil {
			t.Errorf("good mutations: %v", err)
		}
	})

	t.Run("RuntimeClassAdmission", func(t *testing.T) {
		_, err := pods.Create(ctx, conformancePod("missing-class", func(p *corev1.Pod) { p.Spec.RuntimeClassName = ptr("missing") }), metav1.CreateOptions{})
		wantForbidden(t, "missing class", err, `pod rejected: RuntimeClass "missing" not found`)

		if _, err := cs.NodeV1().RuntimeClasses().Create(ctx, &nodev1.RuntimeClass{
			ObjectMeta: metav1.ObjectMeta{Name: "sandboxed"},
			Handler:    "runsc",
			Overhead:   &nodev1.Overhead{PodFixed: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("250m")}},
			Scheduling: &nodev1.Scheduling{
				NodeSelector: map[string]string{"runtime": "sandboxed"},
				Tolerations:  []corev1.Toleration{{Key: "sandbox", Operator: corev1.TolerationOpExists}},
			},
		}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		pod, err := pods.Create(ctx, conformancePod("sandboxed", func(p *corev1.Pod) {
			p.Spec.RuntimeClassName = ptr("sandboxed")
			p.Spec.NodeSelector = map[string]string{"disk": "ssd"}
		}), metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if cpu := pod.Spec.Overhead[corev1.ResourceCPU]; cpu.String() != "250m" ||
			pod.Spec.NodeSelector["runtime"] != "sandboxed" || pod.Spec.NodeSelector["disk"] != "ssd" {
			t.Errorf("pod of the class: overhead %v, node selector %v", pod.Spec.Overhead, pod.Spec.NodeSelector)
		}
		found := false
		for _, tol := range pod.Spec.Tolerations {
			found = found || tol.Key == "sandbox"
		}
		if !found {
			t.Errorf("pod of the class lacks the class's toleration: %+v", pod.Spec.Tolerations)
		}

		_, err = pods.Create(ctx, conformancePod("selector-conflict", func(p *corev1.Pod) {
			p.Spec.RuntimeClassName = ptr("sandboxed")
			p.Spec.NodeSelector = map[string]string{"runtime": "other"}
		}), metav1.CreateOptions{})
		wantForbidden(t, "node selector conflict", err, "conflict: runtimeClass.scheduling.nodeSelector[runtime] = sandboxed; pod.spec.nodeSelector[runtime] = other")
		_, err = pods.Create(ctx, conformancePod("other-overhead", func(p *corev1.Pod) {
			p.Spec.RuntimeClassName = ptr("sandboxed")
			p.Spec.Overhead = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")}
		}), metav1.CreateOptions{})
		wantForbidden(t, "other overhead", err, "pod rejected: Pod's Overhead doesn't match RuntimeClass's defined Overhead")
		_, err = pods.Create(ctx, conformancePod("overhead-without-class", func(p *corev1.Pod) {
			p.Spec.Overhead = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")}
		}), metav1.CreateOptions{})
		wantForbidden(t, "overhead without a class", err, "pod rejected: Pod Overhead set without corresponding RuntimeClass defined Overhead")
	})
}

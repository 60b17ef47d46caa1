package controlplane_test

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// LimitRanger enforces a LimitRange's min, max and limit/request ratio
// for containers, pods and claims in kube's words, besides filling in its
// defaults.
func TestLimitRangerEnforces(t *testing.T) {
	ctx := context.Background()
	cs := startControlPlane(t, "").clientset(t, false)
	createPod := func(ns string, p *corev1.Pod) (*corev1.Pod, error) {
		return cs.CoreV1().Pods(ns).Create(ctx, p, metav1.CreateOptions{})
	}
	podCreate := func(ns string, p *corev1.Pod) func(metav1.CreateOptions) error {
		return func(opts metav1.CreateOptions) error {
			_, err := cs.CoreV1().Pods(ns).Create(ctx, p.DeepCopy(), opts)
			return err
		}
	}
	limitRange := func(ns string, items ...corev1.LimitRangeItem) {
		t.Helper()
		if _, err := cs.CoreV1().LimitRanges(ns).Create(ctx, &corev1.LimitRange{ObjectMeta: metav1.ObjectMeta{Name: "limits"},
			Spec: corev1.LimitRangeSpec{Limits: items}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	// refusedOnce dry-runs create until the new LimitRange has reached the
	// watch cache admission reads, then creates for real and checks kube's
	// wording.
	refusedOnce := func(t *testing.T, create func(metav1.CreateOptions) error, want string) {
		t.Helper()
		createUntil(t, "dry-run refusal", func() error { return create(metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}}) },
			func(err error) bool { return err != nil })
		expectForbidden(t, create(metav1.CreateOptions{}), want)
	}

	t.Run("Container", func(t *testing.T) {
		ns := "limits-container"
		testNamespace(t, cs, ns, nil)
		limitRange(ns, corev1.LimitRangeItem{Type: corev1.LimitTypeContainer,
			Min: cpu("100m"), Max: cpu("500m"), MaxLimitRequestRatio: cpu("2"),
			Default: cpu("400m"), DefaultRequest: cpu("200m")})
		refusedOnce(t, podCreate(ns, podWith("too-big", cpu("500m"), cpu("1"))),
			`pods "too-big" is forbidden: maximum cpu usage per Container is 500m, but limit is 1`)
		_, err := createPod(ns, podWith("too-small", cpu("50m"), cpu("100m")))
		expectForbidden(t, err, `pods "too-small" is forbidden: minimum cpu usage per Container is 100m, but request is 50m`)
		_, err = createPod(ns, podWith("ratio", cpu("100m"), cpu("500m")))
		expectForbidden(t, err, `pods "ratio" is forbidden: cpu max limit to request ratio per Container is 2, but provided ratio is 5.000000`)

		// Defaults fill what a container leaves out, and are then within range.
		pod, err := createPod(ns, simplePod("defaulted", nil))
		if err != nil {
			t.Fatal(err)
		}
		r := pod.Spec.Containers[0].Resources
		if req, lim := r.Requests[corev1.ResourceCPU], r.Limits[corev1.ResourceCPU]; req.String() != "200m" || lim.String() != "400m" {
			t.Errorf("defaulted resources %v", r)
		}
		if got, want := pod.Annotations["kubernetes.io/limit-ranger"], "LimitRanger plugin set: cpu request for container c; cpu limit for container c"; got != want {
			t.Errorf("limit-ranger annotation %q, want %q", got, want)
		}
	})

	t.Run("Pod", func(t *testing.T) {
		ns := "limits-pod"
		testNamespace(t, cs, ns, nil)
		limitRange(ns, corev1.LimitRangeItem{Type: corev1.LimitTypePod,
			Max: corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("1Gi")}})
		mem := corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("600Mi")}
		twoContainers := func(name string) *corev1.Pod {
			p := podWith(name, mem, mem)
			second := p.Spec.Containers[0]
			second.Name = "d"
			p.Spec.Containers = append(p.Spec.Containers, second)
			return p
		}
		refusedOnce(t, podCreate(ns, twoContainers("two")),
			`pods "two" is forbidden: maximum memory usage per Pod is 1Gi, but limit is 1200Mi`)
		if _, err := createPod(ns, podWith("one", mem, mem)); err != nil {
			t.Fatalf("a pod within the Pod max: %v", err)
		}
	})

	t.Run("PersistentVolumeClaim", func(t *testing.T) {
		ns := "limits-pvc"
		testNamespace(t, cs, ns, nil)
		storage := func(q string) corev1.ResourceList {
			return corev1.ResourceList{corev1.ResourceStorage: resource.MustParse(q)}
		}
		limitRange(ns, corev1.LimitRangeItem{Type: corev1.LimitTypePersistentVolumeClaim, Min: storage("1Gi"), Max: storage("2Gi")})
		claimCreate := func(name, size string) func(metav1.CreateOptions) error {
			return func(opts metav1.CreateOptions) error {
				_, err := cs.CoreV1().PersistentVolumeClaims(ns).Create(ctx, &corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Name: name},
					Spec: corev1.PersistentVolumeClaimSpec{AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
						Resources: corev1.VolumeResourceRequirements{Requests: storage(size)}}}, opts)
				return err
			}
		}
		claim := func(name, size string) error { return claimCreate(name, size)(metav1.CreateOptions{}) }
		refusedOnce(t, claimCreate("big", "5Gi"),
			`persistentvolumeclaims "big" is forbidden: maximum storage usage per PersistentVolumeClaim is 2Gi, but request is 5Gi`)
		expectForbidden(t, claim("small", "500Mi"),
			`persistentvolumeclaims "small" is forbidden: minimum storage usage per PersistentVolumeClaim is 1Gi, but request is 500Mi`)
		if err := claim("fits", "1Gi"); err != nil {
			t.Fatalf("a claim within range: %v", err)
		}
	})
}

package pod

// What pods serve beside their own verbs that is not status or binding:
// what a kubelet answers (logs, exec and attach from the simulated
// kubelets; port-forward and proxy a clear Status), ephemeral containers and
// in-place resize.

import (
	"context"
	"fmt"
	"net/http"

	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/devplane/devplane/apiserver/registry"
)

// Containers serves what a kubelet serves of a pod's containers: the
// simulated kubelets' logs, exec and attach sessions.
type Containers interface {
	ServeLog(w http.ResponseWriter, r *http.Request, pod *corev1.Pod) error
	ServeExec(w http.ResponseWriter, r *http.Request, pod *corev1.Pod) error
	ServeAttach(w http.ResponseWriter, r *http.Request, pod *corev1.Pod) error
}

// InstallSubresources serves pods' log, exec and attach through
// containers (nil when no simulated kubelet runs: a clear Status),
// portforward and proxy (a clear Status: no kubelet), ephemeralcontainers
// and resize.
// containers is asked at each request: the kubelets start after the API.
func InstallSubresources(reg *registry.Registry, containers func() Containers) {
	pods, ok := reg.Lookup("", "v1", "pods")
	if !ok || pods.Store == nil {
		return
	}
	s := pods.Store
	connect := func(kind string, verbs []string, answer func(namespace, name string) error) *registry.ConnectSubresource {
		return registry.NewConnect(s, corev1.SchemeGroupVersion.WithKind(kind), verbs, answer)
	}
	// stream answers with the request itself once the pod exists, or with
	// refusal when nothing runs the pod's containers.
	stream := func(kind string, verbs []string, refusal string, serve func(Containers, http.ResponseWriter, *http.Request, *corev1.Pod) error) *registry.ConnectSubresource {
		c := connect(kind, verbs, nil)
		c.Stream = func(w http.ResponseWriter, r *http.Request, namespace, name string) error {
			obj, err := s.Get(r.Context(), namespace, name, metav1.GetOptions{ResourceVersion: "0"})
			if err != nil {
				return err
			}
			cs := containers()
			if cs == nil {
				return registry.NoRuntime(fmt.Sprintf(refusal, name))
			}
			return serve(cs, w, r, obj.(*corev1.Pod))
		}
		return c
	}
	reg.SetConnectSubresources(pods.GVR, map[string]*registry.ConnectSubresource{
		"log":    stream("Pod", []string{"get"}, "pod %q has no container logs", Containers.ServeLog),
		"exec":   stream("PodExecOptions", registry.StreamVerbs, "cannot exec into pod %q", Containers.ServeExec),
		"attach": stream("PodAttachOptions", registry.StreamVerbs, "cannot attach to pod %q", Containers.ServeAttach),
		"portforward": connect("PodPortForwardOptions", registry.StreamVerbs, func(_, name string) error {
			return registry.NoRuntime(fmt.Sprintf("cannot port-forward to pod %q", name))
		}),
		"proxy": connect("PodProxyOptions", registry.ProxyVerbs, func(_, name string) error {
			return registry.NoRuntime(fmt.Sprintf("cannot proxy to pod %q", name))
		}),
	})
	s.UpdateSubresources = map[string]registry.SubresourceUpdate{
		"ephemeralcontainers": updateEphemeralContainers,
		"resize":              resizePod,
	}
}

func podsOf(requested, current runtime.Object) (*corev1.Pod, *corev1.Pod, error) {
	req, ok1 := requested.(*corev1.Pod)
	cur, ok2 := current.(*corev1.Pod)
	if !ok1 || !ok2 {
		return nil, nil, apierrors.NewBadRequest("this subresource takes a Pod")
	}
	return req, cur, nil
}

// updateEphemeralContainers takes only spec.ephemeralContainers from the
// request: they may be added, never changed or removed, as in kube.
func updateEphemeralContainers(_ context.Context, requested, current runtime.Object) (runtime.Object, error) {
	req, cur, err := podsOf(requested, current)
	if err != nil {
		return nil, err
	}
	p := field.NewPath("spec", "ephemeralContainers")
	var errs field.ErrorList
	byName := map[string]corev1.EphemeralContainer{}
	for _, c := range req.Spec.EphemeralContainers {
		byName[c.Name] = c
	}
	for _, old := range cur.Spec.EphemeralContainers {
		now, kept := byName[old.Name]
		if !kept || !apiequality.Semantic.DeepEqual(now, old) {
			errs = append(errs, field.Forbidden(p, "existing ephemeral containers \""+old.Name+"\" may not be changed"))
		}
	}
	names := map[string]bool{}
	for _, c := range cur.Spec.Containers {
		names[c.Name] = true
	}
	for _, c := range cur.Spec.InitContainers {
		names[c.Name] = true
	}
	for i, c := range req.Spec.EphemeralContainers {
		cp := p.Index(i)
		switch {
		case c.Name == "":
			errs = append(errs, field.Required(cp.Child("name"), ""))
		case names[c.Name]:
			errs = append(errs, field.Duplicate(cp.Child("name"), c.Name))
		}
		names[c.Name] = true
		if c.Image == "" {
			errs = append(errs, field.Required(cp.Child("image"), ""))
		}
		if len(c.Ports) > 0 {
			errs = append(errs, field.Forbidden(cp.Child("ports"), "cannot be set for an Ephemeral Container"))
		}
		if c.LivenessProbe != nil || c.ReadinessProbe != nil || c.StartupProbe != nil {
			errs = append(errs, field.Forbidden(cp, "probes cannot be set for an Ephemeral Container"))
		}
		if len(c.Resources.Limits)+len(c.Resources.Requests) > 0 {
			errs = append(errs, field.Forbidden(cp.Child("resources"), "cannot be set for an Ephemeral Container"))
		}
	}
	if len(errs) > 0 {
		return nil, apierrors.NewInvalid(corev1.SchemeGroupVersion.WithKind("Pod").GroupKind(), cur.Name, errs)
	}
	for i := range req.Spec.EphemeralContainers {
		c := &req.Spec.EphemeralContainers[i]
		if c.TerminationMessagePath == "" {
			c.TerminationMessagePath = corev1.TerminationMessagePathDefault
		}
		if c.TerminationMessagePolicy == "" {
			c.TerminationMessagePolicy = corev1.TerminationMessageReadFile
		}
		if c.ImagePullPolicy == "" {
			c.ImagePullPolicy = corev1.PullIfNotPresent
		}
	}
	cur.Spec.EphemeralContainers = req.Spec.EphemeralContainers
	return cur, nil
}

// resizePod takes only the containers' resources (and resize policies)
// from the request, as kube's pods/resize: everything else stays.
func resizePod(_ context.Context, requested, current runtime.Object) (runtime.Object, error) {
	req, cur, err := podsOf(requested, current)
	if err != nil {
		return nil, err
	}
	before := podQOS(cur)
	var errs field.ErrorList
	p := field.NewPath("spec", "containers")
	if len(req.Spec.Containers) != len(cur.Spec.Containers) {
		errs = append(errs, field.Forbidden(p, "containers may not be added or removed by a resize"))
	}
	for i := range cur.Spec.Containers {
		if i >= len(req.Spec.Containers) {
			break
		}
		want := req.Spec.Containers[i]
		if want.Name != cur.Spec.Containers[i].Name {
			errs = append(errs, field.Forbidden(p.Index(i).Child("name"), "containers may not be renamed or reordered by a resize"))
			continue
		}
		cur.Spec.Containers[i].Resources = want.Resources
		cur.Spec.Containers[i].ResizePolicy = want.ResizePolicy
	}
	// Sidecars (restartable init containers) resize too; the others have
	// run already.
	for i := range req.Spec.InitContainers {
		if i < len(cur.Spec.InitContainers) && cur.Spec.InitContainers[i].RestartPolicy != nil {
			cur.Spec.InitContainers[i].Resources = req.Spec.InitContainers[i].Resources
		}
	}
	if len(errs) == 0 && podQOS(cur) != before {
		errs = append(errs, field.Invalid(p, cur.Spec.Containers, "Pod QOS Class may not change as a result of resizing"))
	}
	if len(errs) > 0 {
		return nil, apierrors.NewInvalid(corev1.SchemeGroupVersion.WithKind("Pod").GroupKind(), cur.Name, errs)
	}
	return cur, nil
}

// podQOS is a pod's QoS class from its containers' resources, as the
// kubelet computes it: what a resize may not change.
func podQOS(pod *corev1.Pod) corev1.PodQOSClass {
	set, guaranteed := false, true
	for _, c := range append(append([]corev1.Container(nil), pod.Spec.InitContainers...), pod.Spec.Containers...) {
		r := c.Resources
		if len(r.Requests)+len(r.Limits) > 0 {
			set = true
		}
		for _, name := range []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory} {
			lim, hasLim := r.Limits[name]
			req, hasReq := r.Requests[name]
			if !hasLim || (hasReq && req.Cmp(lim) != 0) {
				guaranteed = false
			}
		}
	}
	switch {
	case !set:
		return corev1.PodQOSBestEffort
	case guaranteed:
		return corev1.PodQOSGuaranteed
	}
	return corev1.PodQOSBurstable
}

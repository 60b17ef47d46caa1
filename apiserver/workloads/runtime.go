package workloads

// The container runtime of the simulated kubelets: containers whose
// command the sandbox interprets (sh scripts, sleep, echo...) run in it,
// with the pod's volumes and environment; the others (nginx, pause...)
// follow the kubelet's simulated rules and cost nothing here.

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"path"
	"strings"
	"sync"
	"syscall"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/devplane/devplane/apiserver/workloads/sandbox"
)

// imageShells are the default commands of the images known to have a
// shell as their CMD and no ENTRYPOINT: a container of one of them with
// neither command nor args runs that shell (with no stdin, it exits 0).
var imageShells = map[string][]string{
	"busybox": {"sh"},
	"alpine":  {"/bin/sh"},
	"ubuntu":  {"bash"},
	"debian":  {"bash"},
}

// imageName is an image reference's last path element without its tag or
// digest: "docker.io/library/busybox:1.37" → "busybox".
func imageName(image string) string {
	if i := strings.Index(image, "@"); i >= 0 {
		image = image[:i]
	}
	image = path.Base(image)
	if i := strings.Index(image, ":"); i >= 0 {
		image = image[:i]
	}
	return image
}

// interpreted reports whether the sandbox runs the container's command:
// it can, and the pod does not direct its run by the exit-after or
// exit-code annotation (those keep the simulated rules).
func interpreted(pod *corev1.Pod, c *corev1.Container) bool {
	if _, ok := pod.Annotations[AnnotationExitAfter]; ok {
		return false
	}
	if _, ok := pod.Annotations[AnnotationExitCode]; ok {
		return false
	}
	return sandbox.Interpretable(sandbox.Argv(nil, imageShells[imageName(c.Image)], c.Command, c.Args))
}

// podRuntime is a pod's sandbox world and its containers' runs, by the
// container's field path.
type podRuntime struct {
	world *sandbox.Pod

	mu      sync.Mutex
	volumes map[string]sandbox.Mount // by volume name, made on first start
	// contents are the files of the volumes the kubelet refreshes, by
	// volume name, as last written; tokens, the service account tokens
	// requested, by volume/path; refreshed, when contents were last read.
	contents  map[string]map[string][]byte
	tokens    map[string]map[string][]byte
	refreshed time.Time
	runs      map[string]*containerRuns
	probes    map[string]*probeState // by probeKey
}

// containerRuns are a container's current run and the last one that
// ended before it (kubectl logs --previous).
type containerRuns struct {
	current, previous *sandbox.Container
	// restartCount is the status's restartCount the current run began at.
	restartCount int32
}

// runtimes are the pods that have interpreted containers, by UID, and
// each node's filesystem for hostPath volumes.
type runtimes struct {
	mu    sync.Mutex
	pods  map[types.UID]*podRuntime
	hosts map[string]*sandbox.Tree
}

// hostTree is a node's filesystem, shared by the hostPath volumes of the
// pods on it (bounded like a pod's disk).
func (r *runtimes) hostTree(node string) *sandbox.Tree {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.hosts == nil {
		r.hosts = map[string]*sandbox.Tree{}
	}
	t := r.hosts[node]
	if t == nil {
		t = sandbox.NewTree(sandbox.NewBudget(sandbox.DefaultDiskLimit), nil)
		r.hosts[node] = t
	}
	return t
}

func (r *runtimes) get(uid types.UID) *podRuntime {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.pods[uid]
}

func (r *runtimes) getOrCreate(pod *corev1.Pod) *podRuntime {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.pods == nil {
		r.pods = map[types.UID]*podRuntime{}
	}
	p := r.pods[pod.UID]
	if p == nil {
		hostname := pod.Name
		if pod.Spec.Hostname != "" {
			hostname = pod.Spec.Hostname
		}
		p = &podRuntime{world: sandbox.NewPod(sandbox.PodConfig{Hostname: hostname, Hosts: hostsFile(pod, hostname)}),
			runs: map[string]*containerRuns{}, contents: map[string]map[string][]byte{}, tokens: map[string]map[string][]byte{}}
		r.pods[pod.UID] = p
	}
	return p
}

// remove kills a deleted pod's containers and forgets them.
func (r *runtimes) remove(uid types.UID) {
	r.mu.Lock()
	p := r.pods[uid]
	delete(r.pods, uid)
	r.mu.Unlock()
	if p != nil {
		p.signal(syscall.SIGKILL)
	}
}

// removeAll kills every pod's containers and forgets them.
func (r *runtimes) removeAll() {
	r.mu.Lock()
	pods := r.pods
	r.pods = nil
	r.mu.Unlock()
	for _, p := range pods {
		p.signal(syscall.SIGKILL)
	}
}

// hostsFile is /etc/hosts as the kubelet writes it for a pod.
func hostsFile(pod *corev1.Pod, hostname string) []byte {
	var b strings.Builder
	b.WriteString("# Kubernetes-managed hosts file.\n127.0.0.1\tlocalhost\n::1\tlocalhost ip6-localhost ip6-loopback\n")
	b.WriteString("fe00::0\tip6-localnet\nfe00::0\tip6-mcastprefix\nfe00::1\tip6-allnodes\nfe00::2\tip6-allrouters\n")
	if ip := pod.Status.PodIP; ip != "" {
		fmt.Fprintf(&b, "%s\t%s\n", ip, hostname)
	}
	return []byte(b.String())
}

// run is a container's run that began at restartCount, if any.
func (p *podRuntime) run(fieldPath string, restartCount int32) *sandbox.Container {
	p.mu.Lock()
	defer p.mu.Unlock()
	r := p.runs[fieldPath]
	if r == nil || r.restartCount != restartCount {
		return nil
	}
	return r.current
}

// logs are a container's current and previous runs.
func (p *podRuntime) logs(fieldPath string) (current, previous *sandbox.Container) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if r := p.runs[fieldPath]; r != nil {
		return r.current, r.previous
	}
	return nil, nil
}

func (p *podRuntime) started(fieldPath string, restartCount int32, c *sandbox.Container) {
	p.mu.Lock()
	defer p.mu.Unlock()
	r := p.runs[fieldPath]
	if r == nil {
		r = &containerRuns{}
		p.runs[fieldPath] = r
	}
	if r.current != nil {
		r.current.Kill()
		r.previous = r.current
	}
	r.current, r.restartCount = c, restartCount
}

// token is the service account token file kept under key, requested by
// get the first time.
func (p *podRuntime) token(key string, get func() (map[string][]byte, error)) (map[string][]byte, error) {
	p.mu.Lock()
	files, ok := p.tokens[key]
	p.mu.Unlock()
	if ok {
		return files, nil
	}
	files, err := get()
	if err != nil {
		return nil, err
	}
	p.mu.Lock()
	p.tokens[key] = files
	p.mu.Unlock()
	return files, nil
}

// current are the containers' current runs, by field path.
func (p *podRuntime) current() map[string]*sandbox.Container {
	p.mu.Lock()
	defer p.mu.Unlock()
	runs := map[string]*sandbox.Container{}
	for path, r := range p.runs {
		if r.current != nil {
			runs[path] = r.current
		}
	}
	return runs
}

// signal delivers sig to every running container.
func (p *podRuntime) signal(sig syscall.Signal) {
	p.mu.Lock()
	var running []*sandbox.Container
	for _, r := range p.runs {
		if r.current != nil {
			running = append(running, r.current)
		}
	}
	p.mu.Unlock()
	for _, c := range running {
		c.Signal(sig)
	}
}

// allEnded reports whether no container runs any more.
func (p *podRuntime) allEnded() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, r := range p.runs {
		if r.current != nil {
			if _, ended := r.current.Result(); !ended {
				return false
			}
		}
	}
	return true
}

// startError is why a container could not be created: its status waits
// with reason, and the kubelet records the event.
type startError struct {
	reason, event, message string
}

func (e *startError) Error() string { return e.message }

// runContainer starts an interpreted container's run in the pod's sandbox.
func (k *kubelet) runContainer(ctx context.Context, node *simNode, pod *corev1.Pod, c *corev1.Container, fieldPath string, restartCount int32) error {
	p := k.runtimes.getOrCreate(pod)
	mounts, err := k.podVolumes(ctx, node, pod, p)
	if err != nil {
		return err
	}
	env, err := k.containerEnv(ctx, node, pod, c)
	if err != nil {
		return err
	}
	subPaths, err := containerSubPaths(c, env)
	if err != nil {
		return err
	}
	var fsMounts []sandbox.Mount
	for i, vm := range c.VolumeMounts {
		m, ok := mounts[vm.Name]
		if !ok {
			continue
		}
		m.Path, m.ReadOnly = vm.MountPath, m.ReadOnly || vm.ReadOnly
		m.SubPath = path.Join(m.SubPath, subPaths[i])
		fsMounts = append(fsMounts, m)
	}
	command, args := sandbox.ExpandCommand(c, env)
	argv := sandbox.Argv(nil, imageShells[imageName(c.Image)], command, args)
	key := pod.Namespace + "/" + pod.Name
	fsys := p.world.NewFS(fsMounts...)
	if sc := c.SecurityContext; sc != nil && sc.ReadOnlyRootFilesystem != nil && *sc.ReadOnlyRootFilesystem {
		fsys.ReadOnlyRoot()
	}
	fsys.RunAs(runAs(pod, c))
	run, err := p.world.Start(sandbox.ContainerConfig{
		Argv: argv, Env: env, WorkingDir: c.WorkingDir, FS: fsys,
		// stdin: true keeps the container's stdin open for attach: a
		// shell waits on it for commands rather than ending at EOF.
		OpenStdin: c.Stdin, StdinOnce: c.StdinOnce, TTY: c.TTY,
		SharedProcessNamespace: pod.Spec.ShareProcessNamespace != nil && *pod.Spec.ShareProcessNamespace,
		OnExit:                 func(sandbox.Result) { k.queue.Add(key) },
	})
	if err != nil {
		return &startError{reason: "RunContainerError", event: "Failed", message: "Error: " + err.Error()}
	}
	p.started(fieldPath, restartCount, run)
	return nil
}

// containerEnv is the container's environment as the kubelet makes it, or
// its CreateContainerConfigError.
func (k *kubelet) containerEnv(ctx context.Context, node *simNode, pod *corev1.Pod, c *corev1.Container) ([]string, error) {
	lookupCM := func(name string) (map[string]string, bool) {
		cm, err := k.configMap(ctx, pod.Namespace, name)
		if err != nil {
			return nil, false
		}
		return cm.Data, true
	}
	lookupSecret := func(name string) (map[string][]byte, bool) {
		s, err := k.secret(ctx, pod.Namespace, name)
		if err != nil {
			return nil, false
		}
		return s.Data, true
	}
	var services []*corev1.Service
	for _, ns := range []string{pod.Namespace, metav1.NamespaceDefault} {
		list, err := k.api.CoreV1().Services(ns).List(ctx, metav1.ListOptions{ResourceVersion: "0"})
		if err != nil {
			return nil, err
		}
		for i := range list.Items {
			services = append(services, &list.Items[i])
		}
	}
	links := pod.Spec.EnableServiceLinks == nil || *pod.Spec.EnableServiceLinks
	var podIPs []string
	for _, ip := range pod.Status.PodIPs {
		podIPs = append(podIPs, ip.IP)
	}
	env, err := sandbox.Environment(c, sandbox.EnvSources{
		Pod: pod, PodIPs: podIPs, HostIPs: []string{node.hostIP.String()},
		ConfigMap: lookupCM, Secret: lookupSecret,
		NodeAllocatable: k.m.capacity(),
		Services:        sandbox.ServiceEnv(pod.Namespace, links, services),
	})
	if err != nil {
		return nil, &startError{reason: "CreateContainerConfigError", event: "Failed", message: "Error: " + err.Error()}
	}
	return env, nil
}

// containerSubPaths are the subPaths of the container's volume mounts, in
// order, or the kubelet's CreateContainerConfigError for the first bad one.
func containerSubPaths(c *corev1.Container, env []string) ([]string, error) {
	subPaths := make([]string, len(c.VolumeMounts))
	for i, vm := range c.VolumeMounts {
		sp, err := sandbox.SubPath(vm, env)
		if err != nil {
			return nil, &startError{reason: "CreateContainerConfigError", event: "Failed", message: "Error: " + err.Error()}
		}
		subPaths[i] = sp
	}
	return subPaths, nil
}

// podVolumes makes the pod's volumes once: emptyDirs shared by its
// containers, configMap, secret, downwardAPI and projected contents as
// read-only trees, hostPath on the node's own tree.
func (k *kubelet) podVolumes(ctx context.Context, node *simNode, pod *corev1.Pod, p *podRuntime) (map[string]sandbox.Mount, error) {
	p.mu.Lock()
	made := p.volumes
	p.mu.Unlock()
	if made != nil {
		return made, nil
	}
	mounts := map[string]sandbox.Mount{}
	for _, v := range pod.Spec.Volumes {
		switch {
		case v.EmptyDir != nil:
			mounts[v.Name] = sandbox.Mount{Tree: p.world.EmptyDir(v.Name)}
			continue
		case v.HostPath != nil:
			mounts[v.Name] = sandbox.Mount{Tree: k.runtimes.hostTree(node.name), SubPath: v.HostPath.Path}
			continue
		}
		files, ok, err := k.volumeContents(ctx, node, pod, &v, p)
		if err != nil {
			return nil, err
		}
		if ok {
			mounts[v.Name] = sandbox.Mount{Tree: sandbox.ReadOnlyFiles(files), ReadOnly: true}
			p.mu.Lock()
			p.contents[v.Name] = files
			p.mu.Unlock()
		}
	}
	p.mu.Lock()
	p.volumes = mounts
	p.mu.Unlock()
	return mounts, nil
}

// volumesReady checks, once, that the volumes of a pod the sandbox does
// not run could be mounted: what they need exists (a non-optional
// configMap, secret or ClusterTrustBundle; an issued pod certificate).
// Service account tokens are not requested for it.
func (k *kubelet) volumesReady(ctx context.Context, node *simNode, pod *corev1.Pod) error {
	k.mu.Lock()
	_, done := k.mounted[pod.UID]
	k.mu.Unlock()
	if done {
		return nil
	}
	for i := range pod.Spec.Volumes {
		if _, _, err := k.volumeContents(ctx, node, pod, &pod.Spec.Volumes[i], nil); err != nil {
			return err
		}
	}
	k.mu.Lock()
	if k.mounted == nil {
		k.mounted = map[types.UID]struct{}{}
	}
	k.mounted[pod.UID] = struct{}{}
	k.mu.Unlock()
	return nil
}

// volumeContents are the files of a configMap, secret, downwardAPI or
// projected volume (ok false for other kinds), or the kubelet's
// FailedMount error; service account tokens are requested, and kept, for
// the pod runtime p only (nil: none).
func (k *kubelet) volumeContents(ctx context.Context, node *simNode, pod *corev1.Pod, v *corev1.Volume, p *podRuntime) (map[string][]byte, bool, error) {
	var files map[string][]byte
	var err error
	switch {
	case v.ConfigMap != nil:
		files, err = k.configMapFiles(ctx, pod.Namespace, v.ConfigMap.Name, v.ConfigMap.Items, v.ConfigMap.Optional)
	case v.Secret != nil:
		files, err = k.secretFiles(ctx, pod.Namespace, v.Secret.SecretName, v.Secret.Items, v.Secret.Optional)
	case v.DownwardAPI != nil:
		files, err = downwardFiles(pod, node, k.m.capacity(), v.DownwardAPI.Items)
	case v.Projected != nil:
		files, err = k.projectedFiles(ctx, node, pod, v.Name, v.Projected.Sources, p)
	case v.PersistentVolumeClaim != nil:
		return nil, false, k.claimBound(ctx, pod, v)
	default:
		return nil, false, nil // emptyDir, hostPath, a persistent volume: nothing to fetch
	}
	if err != nil {
		return nil, false, &startError{reason: "ContainerCreating", event: "FailedMount",
			message: fmt.Sprintf("MountVolume.SetUp failed for volume %q : %v", v.Name, err)}
	}
	return files, true, nil
}

// claimBound is the kubelet volume manager's wait for a claim: one that is
// missing or not bound yet keeps the pod ContainerCreating, with kube's
// FailedMount message, until it is (a pod bound to its node directly: the
// scheduler binds no pod before its claims).
func (k *kubelet) claimBound(ctx context.Context, pod *corev1.Pod, v *corev1.Volume) error {
	name := v.PersistentVolumeClaim.ClaimName
	c, err := k.claim(ctx, pod.Namespace, name)
	switch {
	case apierrors.IsNotFound(err):
		err = fmt.Errorf("failed to fetch PVC from API server: %v", err)
	case err == nil && c.Status.Phase != corev1.ClaimBound:
		err = errors.New("PVC is not bound")
	}
	if err == nil {
		return nil
	}
	return &startError{reason: "ContainerCreating", event: "FailedMount",
		message: fmt.Sprintf("Unable to attach or mount volumes: unmounted volumes=[%s]: error processing PVC %s/%s: %v", v.Name, pod.Namespace, name, err)}
}

// volumeFiles are a configMap's or secret's keys as a volume presents
// them: every key, or the items asked for; get reads the object's data.
func volumeFiles(kind, name string, items []corev1.KeyToPath, optional *bool, get func() (map[string][]byte, error)) (map[string][]byte, error) {
	opt := optional != nil && *optional
	data, err := get()
	switch {
	case apierrors.IsNotFound(err) && opt:
		return map[string][]byte{}, nil
	case apierrors.IsNotFound(err):
		return nil, fmt.Errorf("%s %q not found", kind, name)
	case err != nil:
		return nil, err
	}
	if len(items) == 0 {
		return data, nil
	}
	files := map[string][]byte{}
	for _, it := range items {
		v, ok := data[it.Key]
		if !ok {
			if opt {
				continue
			}
			return nil, fmt.Errorf("%s references non-existent key: %s", kind, it.Key)
		}
		files[it.Path] = v
	}
	return files, nil
}

func (k *kubelet) configMapFiles(ctx context.Context, ns, name string, items []corev1.KeyToPath, optional *bool) (map[string][]byte, error) {
	return volumeFiles("configmap", name, items, optional, func() (map[string][]byte, error) {
		cm, err := k.configMap(ctx, ns, name)
		if err != nil {
			return nil, err
		}
		data := maps.Clone(cm.BinaryData)
		if data == nil {
			data = map[string][]byte{}
		}
		for key, v := range cm.Data {
			data[key] = []byte(v)
		}
		return data, nil
	})
}

func (k *kubelet) secretFiles(ctx context.Context, ns, name string, items []corev1.KeyToPath, optional *bool) (map[string][]byte, error) {
	return volumeFiles("secret", name, items, optional, func() (map[string][]byte, error) {
		s, err := k.secret(ctx, ns, name)
		if err != nil {
			return nil, err
		}
		return s.Data, nil
	})
}

// downwardFiles are a downwardAPI volume's files: labels and annotations
// as key="value" lines, other fields as the environment would have them.
func downwardFiles(pod *corev1.Pod, node *simNode, alloc corev1.ResourceList, items []corev1.DownwardAPIVolumeFile) (map[string][]byte, error) {
	files := map[string][]byte{}
	for _, it := range items {
		var value string
		switch {
		case it.FieldRef != nil && it.FieldRef.FieldPath == "metadata.labels":
			value = sandbox.FormatMap(pod.Labels)
		case it.FieldRef != nil && it.FieldRef.FieldPath == "metadata.annotations":
			value = sandbox.FormatMap(pod.Annotations)
		default:
			// One variable's value, through the environment's rules.
			probe := corev1.Container{Env: []corev1.EnvVar{{Name: "V", ValueFrom: &corev1.EnvVarSource{FieldRef: it.FieldRef, ResourceFieldRef: it.ResourceFieldRef}}}}
			if it.ResourceFieldRef != nil && it.ResourceFieldRef.ContainerName != "" {
				for _, c := range pod.Spec.Containers {
					if c.Name == it.ResourceFieldRef.ContainerName {
						probe.Resources = c.Resources
					}
				}
			}
			env, err := sandbox.Environment(&probe, sandbox.EnvSources{Pod: pod, HostIPs: []string{node.hostIP.String()}, NodeAllocatable: alloc})
			if err != nil {
				return nil, err
			}
			for _, kv := range env {
				if v, ok := strings.CutPrefix(kv, "V="); ok {
					value = v
				}
			}
		}
		files[it.Path] = []byte(value)
	}
	return files, nil
}

// projectedFiles are a projected volume's files, its sources merged; a
// service account token is a real one from the TokenRequest API (for a
// pod runtime p, which keeps it), a pod certificate one issued through a
// PodCertificateRequest.
func (k *kubelet) projectedFiles(ctx context.Context, node *simNode, pod *corev1.Pod, volume string, sources []corev1.VolumeProjection, p *podRuntime) (map[string][]byte, error) {
	files := map[string][]byte{}
	add := func(more map[string][]byte, err error) error {
		for p, v := range more {
			files[p] = v
		}
		return err
	}
	for i, s := range sources {
		var err error
		switch {
		case s.ConfigMap != nil:
			err = add(k.configMapFiles(ctx, pod.Namespace, s.ConfigMap.Name, s.ConfigMap.Items, s.ConfigMap.Optional))
		case s.Secret != nil:
			err = add(k.secretFiles(ctx, pod.Namespace, s.Secret.Name, s.Secret.Items, s.Secret.Optional))
		case s.DownwardAPI != nil:
			err = add(downwardFiles(pod, node, k.m.capacity(), s.DownwardAPI.Items))
		case s.ServiceAccountToken != nil && p != nil:
			err = add(p.token(volume+"/"+s.ServiceAccountToken.Path, func() (map[string][]byte, error) {
				return k.serviceAccountToken(ctx, pod, s.ServiceAccountToken)
			}))
		case s.ClusterTrustBundle != nil:
			err = add(k.trustBundleFiles(ctx, s.ClusterTrustBundle))
		case s.PodCertificate != nil:
			err = add(k.podCertificateFiles(ctx, node, pod, volume, i, s.PodCertificate))
		}
		if err != nil {
			return nil, err
		}
	}
	return files, nil
}

func (k *kubelet) serviceAccountToken(ctx context.Context, pod *corev1.Pod, p *corev1.ServiceAccountTokenProjection) (map[string][]byte, error) {
	sa := pod.Spec.ServiceAccountName
	if sa == "" {
		sa = "default"
	}
	var audiences []string
	if p.Audience != "" {
		audiences = []string{p.Audience}
	}
	tr, err := k.api.CoreV1().ServiceAccounts(pod.Namespace).CreateToken(ctx, sa, &authenticationv1.TokenRequest{
		Spec: authenticationv1.TokenRequestSpec{
			Audiences: audiences, ExpirationSeconds: p.ExpirationSeconds,
			BoundObjectRef: &authenticationv1.BoundObjectReference{Kind: "Pod", APIVersion: "v1", Name: pod.Name, UID: pod.UID},
		},
	}, metav1.CreateOptions{})
	if err != nil {
		return nil, fmt.Errorf("failed to fetch token: %w", err)
	}
	return map[string][]byte{p.Path: []byte(tr.Status.Token)}, nil
}

// volumeRefreshPeriod is how often a running pod's configMap, secret,
// downwardAPI and projected volumes are read again (kube's kubelet: its
// sync period, a minute, plus its cache's TTL).
var volumeRefreshPeriod = 5 * time.Second

// refreshVolumes writes again the volumes whose contents changed since
// they were last written, as the kubelet updates mounted configMaps,
// secrets and downward API files; a source that cannot be read keeps what
// it had. It returns when to look again (zero: the pod has none).
func (k *kubelet) refreshVolumes(ctx context.Context, node *simNode, pod *corev1.Pod, p *podRuntime, now time.Time) time.Time {
	p.mu.Lock()
	if len(p.contents) == 0 || p.volumes == nil {
		p.mu.Unlock()
		return time.Time{}
	}
	if p.refreshed.IsZero() {
		p.refreshed = now // made just now
	}
	next := p.refreshed.Add(volumeRefreshPeriod)
	if now.Before(next) {
		p.mu.Unlock()
		return next
	}
	p.refreshed = now
	p.mu.Unlock()
	for i := range pod.Spec.Volumes {
		v := &pod.Spec.Volumes[i]
		p.mu.Lock()
		old, refreshed := p.contents[v.Name]
		tree := p.volumes[v.Name].Tree
		p.mu.Unlock()
		if !refreshed || tree == nil {
			continue
		}
		files, ok, err := k.volumeContents(ctx, node, pod, v, p)
		if err != nil || !ok || filesEqual(files, old) {
			continue
		}
		tree.SetFiles(files)
		p.mu.Lock()
		p.contents[v.Name] = files
		p.mu.Unlock()
	}
	return now.Add(volumeRefreshPeriod)
}

func filesEqual(a, b map[string][]byte) bool {
	return maps.EqualFunc(a, b, func(x, y []byte) bool { return string(x) == string(y) })
}

// runAs is the user and group a container runs as: its securityContext's
// runAsUser and runAsGroup, else the pod's, else root (the images the
// sandbox stands for run as root).
func runAs(pod *corev1.Pod, c *corev1.Container) (uid, gid int64) {
	if psc := pod.Spec.SecurityContext; psc != nil {
		if psc.RunAsUser != nil {
			uid = *psc.RunAsUser
		}
		if psc.RunAsGroup != nil {
			gid = *psc.RunAsGroup
		}
	}
	if sc := c.SecurityContext; sc != nil {
		if sc.RunAsUser != nil {
			uid = *sc.RunAsUser
		}
		if sc.RunAsGroup != nil {
			gid = *sc.RunAsGroup
		}
	}
	return uid, gid
}

package workloads

// Image pulls, as a kubelet reports them. Nothing is downloaded: an image
// whose reference does not parse is InvalidImageName, as on kube; one that
// no registry could serve fails its pull with ErrImagePull, then waits in
// ImagePullBackOff, retried with kube's doubling back-off; any other image
// is "already present on the machine".

import (
	"fmt"
	"regexp"
	"strings"
	"time"

	"github.com/distribution/reference"
	corev1 "k8s.io/api/core/v1"
)

// reservedRegistryDomains are the names RFC 2606 (and RFC 6761) reserve for
// documentation and tests: no registry ever serves them, so an image
// there can never be pulled.
var reservedRegistryDomains = []string{".invalid", ".test", ".example", "example.com", "example.net", "example.org"}

// Image pull back-off: kube doubles it from 10s up to 5m; devplane keeps
// the shape at a developer's pace, as for crash loops.
var (
	imagePullBaseBackOff = time.Second
	imagePullMaxBackOff  = time.Minute
)

// ImagePolicy says which images cannot be pulled.
type ImagePolicy struct {
	patterns []string
	match    []*regexp.Regexp
}

// NewImagePolicy makes the policy from --unpullable-images patterns: an
// image reference ("webserver:404", "ghcr.io/org/app": any tag of it), or
// a glob over the full reference where * matches anything
// ("docker.io/library/*:404", "registry.corp/*").
func NewImagePolicy(patterns []string) (*ImagePolicy, error) {
	p := &ImagePolicy{}
	for _, pat := range patterns {
		pat = strings.TrimSpace(pat)
		if pat == "" {
			continue
		}
		var expr string
		if strings.Contains(pat, "*") {
			expr = strings.ReplaceAll(regexp.QuoteMeta(pat), `\*`, `.*`)
		} else {
			named, err := reference.ParseNormalizedNamed(pat)
			if err != nil {
				return nil, fmt.Errorf("unpullable image %q: %v", pat, err)
			}
			expr = regexp.QuoteMeta(named.String())
			if reference.IsNameOnly(named) {
				expr += `([:@].*)?` // every tag and digest of the repository
			}
		}
		p.patterns = append(p.patterns, pat)
		p.match = append(p.match, regexp.MustCompile(`^`+expr+`$`))
	}
	return p, nil
}

// imageRef is the image as the kubelet pulls it: kube's parse, and the
// default tag added to a reference without tag or digest.
func imageRef(image string) (reference.Named, string, error) {
	named, err := reference.ParseNormalizedNamed(image)
	if err != nil {
		return nil, "", fmt.Errorf("Failed to apply default image tag %q: couldn't parse image name %q: %v", image, image, err)
	}
	if reference.IsNameOnly(named) {
		return reference.TagNameOnly(named), image + ":latest", nil
	}
	return named, image, nil
}

// pullError is why the image cannot be pulled, nil when it can.
func (p *ImagePolicy) pullError(named reference.Named) error {
	full := named.String()
	host, _, _ := strings.Cut(reference.Domain(named), ":")
	for _, d := range reservedRegistryDomains {
		if host == strings.TrimPrefix(d, ".") || strings.HasSuffix(host, d) {
			return fmt.Errorf("failed to pull and unpack image %q: failed to resolve reference %q: dial tcp: lookup %s: no such host", full, full, host)
		}
	}
	if p == nil {
		return nil
	}
	for i, m := range p.match {
		if m.MatchString(full) {
			return fmt.Errorf("failed to pull and unpack image %q: failed to resolve reference %q: %s: not found (devplane --unpullable-images %q)", full, full, full, p.patterns[i])
		}
	}
	return nil
}

// imagePull is one pod's pulls of one image that failed.
type imagePull struct {
	failures int
	retryAt  time.Time
	err      string // the last pull's error
}

// pullImage pulls the container's image for its start. ok: the image is
// there; otherwise cs waits with kube's reason and message, the events
// say why, and retry is when to try again (zero: only when the pod
// changes).
func (k *kubelet) pullImage(pod *corev1.Pod, c *corev1.ContainerStatus, path string, now time.Time, events *[]podEvent) (retry time.Time, ok bool) {
	named, image, err := imageRef(c.Image)
	wait := func(reason, message string) {
		c.State = corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: reason, Message: message}}
		*events = append(*events, podEvent{warning: true, path: path, reason: "Failed", message: "Error: " + reason})
	}
	if err != nil {
		*events = append(*events, podEvent{warning: true, path: path, reason: "InspectFailed", message: err.Error()})
		wait("InvalidImageName", err.Error())
		return time.Time{}, false
	}
	pullErr := k.images.pullError(named)
	if pullErr == nil {
		return time.Time{}, true
	}
	key := string(pod.UID) + "_" + image
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.pulls == nil {
		k.pulls = map[string]*imagePull{}
	}
	st := k.pulls[key]
	if st != nil && now.Before(st.retryAt) {
		msg := fmt.Sprintf("Back-off pulling image %q", image)
		*events = append(*events, podEvent{path: path, reason: "BackOff", message: msg})
		wait("ImagePullBackOff", msg+": ErrImagePull: "+st.err)
		return st.retryAt, false
	}
	if st == nil {
		st = &imagePull{}
		k.pulls[key] = st
	}
	backOff := imagePullBaseBackOff
	for i := 0; i < st.failures && backOff < imagePullMaxBackOff; i++ {
		backOff *= 2
	}
	st.failures++
	st.retryAt = now.Add(min(backOff, imagePullMaxBackOff))
	st.err = pullErr.Error()
	*events = append(*events,
		podEvent{path: path, reason: "Pulling", message: fmt.Sprintf("Pulling image %q", image)},
		podEvent{warning: true, path: path, reason: "Failed", message: fmt.Sprintf("Failed to pull image %q: %v", image, pullErr)})
	wait("ErrImagePull", pullErr.Error())
	// The kubelet looks again soon: the pod then shows ImagePullBackOff
	// until retryAt.
	return now.Add(imagePullBaseBackOff / 2), false
}

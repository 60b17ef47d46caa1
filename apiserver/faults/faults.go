// Package faults injects failures into devplane's request path, so tests
// can drive a client down its unhappy paths: kube-worded errors, latency,
// watches that end early or with "410 Gone". Rules are off until one is
// added; with none, a request pays one atomic load.
package faults

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/devplane/devplane/apiserver/request"
)

// Fault is one rule: which requests it matches, what it does to them and
// how often. Every empty match field matches anything.
type Fault struct {
	// Name identifies the rule in the Warning header, logs, hits and
	// removal; unique within a server.
	Name string `json:"name"`

	// Verbs: get, list, watch, create, update, patch, delete,
	// deletecollection.
	Verbs []string `json:"verbs,omitempty"`
	// Resources as kube qualifies them, with the subresource after a
	// slash: "pods", "deployments.apps", "deployments.apps/status".
	// "pods" does not match "pods/status".
	Resources     []string `json:"resources,omitempty"`
	Namespaces    []string `json:"namespaces,omitempty"`
	Names         []string `json:"names,omitempty"`
	Users         []string `json:"users,omitempty"`
	UserAgents    []string `json:"userAgents,omitempty"` // prefixes of the User-Agent header
	FieldManagers []string `json:"fieldManagers,omitempty"`

	// Error answers with kube's Status for this HTTP code instead of
	// serving: 409 (the optimistic-concurrency conflict kube gives an
	// update, patch or delete of a changed object), 429 (with
	// Retry-After), 500, 503 or 504.
	Error int `json:"error,omitempty"`
	// RetryAfter is the Retry-After of a 429 (default 1s) or 503.
	RetryAfter time.Duration `json:"retryAfter,omitempty"`
	// Delay holds the request this long, then serves it (or its Error).
	Delay time.Duration `json:"delay,omitempty"`
	// Watch ends a matched watch early; a rule with it matches only watches.
	Watch *WatchEnd `json:"watch,omitempty"`
	// WebhookTimeout makes the admission webhooks called for a matched
	// request time out, as webhooks that do not answer: each call waits
	// its timeoutSeconds (or less, if the request ends first), then fails
	// with kube's "context deadline exceeded", and the webhook's
	// failurePolicy decides. The request is served otherwise.
	WebhookTimeout *WebhookTimeout `json:"webhookTimeout,omitempty"`

	// Times: only the first Times injections (0: no bound).
	Times int `json:"times,omitempty"`
	// Every: only every Every-th match ("every third update": 3).
	Every int `json:"every,omitempty"`
	// Probability of injecting on a match (0: always), drawn from a
	// source seeded with Seed, so a run can be repeated.
	Probability float64 `json:"probability,omitempty"`
	Seed        uint64  `json:"seed,omitempty"`
	// For: the rule expires this long after it was added (0: never).
	For time.Duration `json:"for,omitempty"`
}

// WatchEnd ends a watch after AfterEvents events (bookmarks not
// counted): as the server would at a timeout, or, with Gone, with the
// ERROR event carrying a 410 "too old resource version" Status that kube
// sends when a watch cannot continue, which makes informers relist.
type WatchEnd struct {
	AfterEvents int  `json:"afterEvents,omitempty"`
	Gone        bool `json:"gone,omitempty"`
}

// WebhookTimeout says which webhooks time out.
type WebhookTimeout struct {
	// Webhooks are names as their configurations give them
	// ("vwidget.example.com"); empty: every webhook called.
	Webhooks []string `json:"webhooks,omitempty"`
}

// Hit is one injection.
type Hit struct {
	Fault     string    `json:"fault"`
	Time      time.Time `json:"time"`
	Verb      string    `json:"verb"`
	Resource  string    `json:"resource"` // as Fault.Resources spells it
	Namespace string    `json:"namespace,omitempty"`
	Name      string    `json:"name,omitempty"`
	User      string    `json:"user,omitempty"`
}

// Listed is a rule as List reports it.
type Listed struct {
	Fault
	Matches int  `json:"matches"` // requests it matched
	Hits    int  `json:"hits"`    // of those, injected
	Expired bool `json:"expired,omitempty"`
}

// maxHits bounds the hits a rule keeps; its count goes on.
const maxHits = 1000

var errExists = errors.New("exists already")

// Validate reports what is wrong with f.
func (f *Fault) Validate() error {
	var errs []error
	if f.Name == "" || strings.ContainsAny(f.Name, "/\"\\ \t\n") {
		errs = append(errs, fmt.Errorf("name %q: must be non-empty, without '/', quotes, backslashes or spaces", f.Name))
	}
	switch f.Error {
	case 0, http.StatusConflict, http.StatusTooManyRequests, http.StatusInternalServerError,
		http.StatusServiceUnavailable, http.StatusGatewayTimeout:
	default:
		errs = append(errs, fmt.Errorf("error %d: must be one of 409, 429, 500, 503, 504", f.Error))
	}
	if f.Error == 0 && f.Delay == 0 && f.Watch == nil && f.WebhookTimeout == nil {
		errs = append(errs, errors.New("no action: set error, delay, watch or webhookTimeout"))
	}
	if n := countTrue(f.Watch != nil, f.Error != 0, f.WebhookTimeout != nil); n > 1 {
		errs = append(errs, errors.New("error, watch and webhookTimeout exclude each other"))
	}
	if f.Watch != nil && f.Watch.AfterEvents < 0 {
		errs = append(errs, errors.New("watch.afterEvents must not be negative"))
	}
	if f.Times < 0 || f.Every < 0 || f.Delay < 0 || f.RetryAfter < 0 || f.For < 0 {
		errs = append(errs, errors.New("times, every, delay, retryAfter and for must not be negative"))
	}
	if f.Probability < 0 || f.Probability > 1 {
		errs = append(errs, fmt.Errorf("probability %v: must be within [0, 1]", f.Probability))
	}
	return errors.Join(errs...)
}

// rule is a Fault with its counters.
type rule struct {
	Fault
	expires time.Time // zero: never

	mu      sync.Mutex
	rand    *rand.Rand // nil without Probability
	matches int
	fired   int
	hits    []Hit
}

// Injector holds a server's rules.
type Injector struct {
	// rules is nil while there are none: the filter's only cost then.
	rules atomic.Pointer[[]*rule]
	mu    sync.Mutex // serializes changes to rules
}

// NewInjector returns an Injector without rules.
func NewInjector() *Injector { return &Injector{} }

// Active reports whether any rule is set.
func (in *Injector) Active() bool { return in != nil && in.rules.Load() != nil }

// Add adds f; its name must be new.
func (in *Injector) Add(f Fault) error {
	if err := f.Validate(); err != nil {
		return fmt.Errorf("fault %q: %w", f.Name, err)
	}
	// The caller keeps its slices: the rule gets copies.
	for _, set := range []*[]string{&f.Verbs, &f.Resources, &f.Namespaces, &f.Names, &f.Users, &f.UserAgents, &f.FieldManagers} {
		*set = slices.Clone(*set)
	}
	if f.Watch != nil {
		end := *f.Watch
		f.Watch = &end
	}
	if f.WebhookTimeout != nil {
		f.WebhookTimeout = &WebhookTimeout{Webhooks: slices.Clone(f.WebhookTimeout.Webhooks)}
	}
	r := &rule{Fault: f}
	if f.For > 0 {
		r.expires = time.Now().Add(f.For)
	}
	if f.Probability > 0 {
		r.rand = rand.New(rand.NewPCG(f.Seed, f.Seed^0x9e3779b97f4a7c15))
	}
	in.mu.Lock()
	defer in.mu.Unlock()
	var rules []*rule
	if p := in.rules.Load(); p != nil {
		rules = *p
	}
	for _, old := range rules {
		if old.Name == f.Name {
			return fmt.Errorf("fault %q: %w", f.Name, errExists)
		}
	}
	next := append(slices.Clip(rules), r)
	in.rules.Store(&next)
	return nil
}

// Remove removes the named rule, reporting whether it was there.
func (in *Injector) Remove(name string) bool {
	in.mu.Lock()
	defer in.mu.Unlock()
	p := in.rules.Load()
	if p == nil {
		return false
	}
	i := slices.IndexFunc(*p, func(r *rule) bool { return r.Name == name })
	if i < 0 {
		return false
	}
	next := slices.Delete(slices.Clone(*p), i, i+1)
	if len(next) == 0 {
		in.rules.Store(nil)
	} else {
		in.rules.Store(&next)
	}
	return true
}

// List reports every rule, in the order added.
func (in *Injector) List() []Listed {
	p := in.rules.Load()
	if p == nil {
		return nil
	}
	now := time.Now()
	out := make([]Listed, 0, len(*p))
	for _, r := range *p {
		r.mu.Lock()
		out = append(out, Listed{Fault: r.Fault, Matches: r.matches, Hits: r.fired, Expired: r.expired(now)})
		r.mu.Unlock()
	}
	return out
}

// Hits are the named rule's injections, oldest first (the first 1,000).
func (in *Injector) Hits(name string) []Hit {
	p := in.rules.Load()
	if p == nil {
		return nil
	}
	for _, r := range *p {
		if r.Name == name {
			r.mu.Lock()
			defer r.mu.Unlock()
			return slices.Clone(r.hits)
		}
	}
	return nil
}

func (r *rule) expired(now time.Time) bool { return !r.expires.IsZero() && now.After(r.expires) }

// Match finds the first rule, in the order added, that matches a request
// and, by its limits, fires on it; nil when none does. It counts the match and records the
// hit, so call it once per request.
func (in *Injector) Match(req *http.Request, info *request.RequestInfo, user *request.User) *Fault {
	p := in.rules.Load()
	if p == nil || info == nil || !info.IsResourceRequest {
		return nil
	}
	resource := QualifiedResource(info)
	userName := ""
	if user != nil {
		userName = user.Name
	}
	now := time.Now()
	for _, r := range *p {
		if r.expired(now) || !r.selects(req, info, resource, userName) {
			continue
		}
		if r.fire(Hit{Fault: r.Name, Time: now, Verb: info.Verb, Resource: resource,
			Namespace: info.Namespace, Name: info.Name, User: userName}) {
			return &r.Fault
		}
	}
	return nil
}

// QualifiedResource spells a request's resource as Fault.Resources does.
func QualifiedResource(info *request.RequestInfo) string {
	return request.QualifiedResource(info.Resource, info.APIGroup, info.Subresource)
}

func (r *rule) selects(req *http.Request, info *request.RequestInfo, resource, user string) bool {
	return (r.Watch == nil || info.Verb == "watch") && anyOf(r.Verbs, info.Verb) && anyOf(r.Resources, resource) &&
		anyOf(r.Namespaces, info.Namespace) && anyOf(r.Names, info.Name) && anyOf(r.Users, user) &&
		anyOf(r.FieldManagers, req.URL.Query().Get("fieldManager")) && prefixOf(r.UserAgents, req.UserAgent())
}

// fire applies the limits to one more match.
func (r *rule) fire(hit Hit) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.matches++
	if r.Every > 1 && r.matches%r.Every != 0 {
		return false
	}
	if r.Times > 0 && r.fired >= r.Times {
		return false
	}
	if r.rand != nil && r.rand.Float64() >= r.Probability {
		return false
	}
	r.fired++
	if len(r.hits) < maxHits {
		r.hits = append(r.hits, hit)
	}
	return true
}

func countTrue(bs ...bool) int {
	n := 0
	for _, b := range bs {
		if b {
			n++
		}
	}
	return n
}

func anyOf(set []string, v string) bool { return len(set) == 0 || slices.Contains(set, v) }

func prefixOf(prefixes []string, v string) bool {
	if len(prefixes) == 0 {
		return true
	}
	for _, p := range prefixes {
		if strings.HasPrefix(v, p) {
			return true
		}
	}
	return false
}

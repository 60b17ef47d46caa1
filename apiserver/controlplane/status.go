package controlplane

import (
	"net/http/httptest"
	"strings"
	"sync"
	"time"

	"github.com/devplane/devplane/apiserver/server"
)

// Section names the dashboard groups rows by.
const (
	SectionCerts      = "certificates"
	SectionEtcd       = "etcd"
	SectionAggregator = "aggregator"
	SectionCore       = "core"
	SectionExtensions = "extensions"
)

// StepState is the progress of a start-up step, hook or check.
type StepState int

const (
	Pending StepState = iota
	Running
	OK
	Failed
)

// Item is one line of start-up progress: a step, a post-start hook or a
// readyz check.
type Item struct {
	Section  string
	Kind     string // "step", "hook", "check"
	Name     string
	State    StepState
	Duration time.Duration
	Message  string
}

type step struct {
	name     string
	state    StepState
	started  time.Time
	duration time.Duration
	err      error
}

type steps struct {
	mu    sync.Mutex
	items []*step
}

func newSteps() *steps { return &steps{} }

func (s *steps) run(name string, fn func() error) error {
	st := &step{name: name, state: Running, started: time.Now()}
	s.mu.Lock()
	s.items = append(s.items, st)
	s.mu.Unlock()
	err := fn()
	s.mu.Lock()
	st.duration = time.Since(st.started)
	st.err = err
	st.state = OK
	if err != nil {
		st.state = Failed
	}
	s.mu.Unlock()
	return err
}

// checkSections places readyz checks with the part of devplane they watch.
var checkSections = map[string]string{
	"etcd":                SectionEtcd,
	"etcd-readiness":      SectionEtcd,
	"informer-sync":       SectionCore,
	"crd-informer-synced": SectionExtensions,
}

var sectionOfServer = map[string]string{
	AggregatorName: SectionAggregator,
	CoreName:       SectionCore,
	ExtensionsName: SectionExtensions,
}

// Status reports start-up steps, every post-start hook and every readyz
// check, for the dashboard.
func (cp *ControlPlane) Status() []Item {
	var items []Item
	cp.steps.mu.Lock()
	for _, st := range cp.steps.items {
		it := Item{Section: st.name, Kind: "step", Name: st.name, State: st.state, Duration: st.duration}
		if st.state == Running {
			it.Duration = time.Since(st.started)
		}
		if st.err != nil {
			it.Message = st.err.Error()
		}
		items = append(items, it)
	}
	cp.steps.mu.Unlock()
	if cp.Aggregator == nil {
		return items
	}
	started := cp.prepared.Load() != nil
	for _, h := range cp.Aggregator.HookStatuses() {
		it := Item{Section: sectionOfServer[h.Server], Kind: "hook", Name: "poststarthook/" + h.Name, Duration: h.Duration}
		if h.Name == startWorkloadsHook {
			it.Section = SectionWorkloads
		}
		switch {
		case !started:
			it.State = Pending
		case h.State == server.HookRunning || h.State == server.HookPending:
			it.State = Running
		case h.State == server.HookDone:
			it.State = OK
		default:
			it.State = Failed
			if h.Err != nil {
				it.Message = h.Err.Error()
			}
		}
		items = append(items, it)
	}
	req := httptest.NewRequest("GET", "/readyz", nil)
	for _, r := range cp.Aggregator.Readyz().Run(req, nil) {
		if strings.HasPrefix(r.Name, "poststarthook/") {
			continue // shown as hooks above
		}
		section := checkSections[r.Name]
		if section == "" {
			section = SectionAggregator // the head's own checks: ping, log, shutdown, ...
		}
		it := Item{Section: section, Kind: "check", Name: r.Name, State: OK}
		if !started {
			it.State = Pending
		} else if r.Err != nil {
			it.State, it.Message = Failed, r.Err.Error()
		}
		items = append(items, it)
	}
	return append(items, cp.workloadsItems()...)
}

// Ready reports whether every readyz check passes.
func (cp *ControlPlane) Ready() bool {
	if cp.prepared.Load() == nil {
		return false
	}
	req := httptest.NewRequest("GET", "/readyz", nil)
	for _, r := range cp.Aggregator.Readyz().Run(req, nil) {
		if r.Err != nil {
			return false
		}
	}
	return true
}

// StartedAt is when New was called (for "ready in").
func (cp *ControlPlane) StartedAt() time.Time { return cp.startedAt }

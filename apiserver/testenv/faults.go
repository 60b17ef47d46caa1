package testenv

import (
	"fmt"
	"sync/atomic"
	"testing"

	"github.com/devplane/devplane/apiserver/faults"
)

// Fault is a rule injecting a failure into the requests it matches: a
// kube-worded error (409, 429, 500, 503, 504), a delay, or a watch ended
// early (with 410 Gone, so informers relist). See faults.Fault.
type Fault = faults.Fault

// WatchEnd says how a Fault ends the watches it matches.
type WatchEnd = faults.WatchEnd

// WebhookTimeout says which admission webhooks a Fault times out.
type WebhookTimeout = faults.WebhookTimeout

// FaultHit is one request a Fault was injected into.
type FaultHit = faults.Hit

// InjectedFault is a Fault in force, until Remove or the end of its test.
type InjectedFault struct {
	inj  *faults.Injector
	name string
}

var faultSeq atomic.Int64

// InjectFault puts f in force on this Instance until t ends (or Remove).
// Without a name f gets one ("fault-<n>"). Each injection answers with a
// Warning header naming f and is logged.
//
//	conflicts := env.InjectFault(t, testenv.Fault{
//		Verbs: []string{"update"}, Resources: []string{"deployments.apps"},
//		Error: 409, Every: 3, // every third update is refused
//	})
//	...
//	if len(conflicts.Hits()) == 0 { t.Fatal("no update was refused") }
func (i *Instance) InjectFault(t testing.TB, f Fault) *InjectedFault {
	t.Helper()
	if f.Name == "" {
		f.Name = fmt.Sprintf("fault-%d", faultSeq.Add(1))
	}
	inj := i.cp.Faults()
	if err := inj.Add(f); err != nil {
		t.Fatalf("testenv: %v", err)
	}
	h := &InjectedFault{inj: inj, name: f.Name}
	t.Cleanup(h.Remove)
	return h
}

// Name is the fault's name, as its Warning header and hits give it.
func (f *InjectedFault) Name() string { return f.name }

// Hits are the requests the fault was injected into so far, oldest first.
func (f *InjectedFault) Hits() []FaultHit { return f.inj.Hits(f.name) }

// Remove takes the fault out of force; its hits are gone with it.
func (f *InjectedFault) Remove() { f.inj.Remove(f.name) }

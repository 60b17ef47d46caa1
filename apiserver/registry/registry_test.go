package registry

import (
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/devplane/devplane/apiserver/builtin"
)

func TestRegistryCopyOnWrite(t *testing.T) {
	reg := New()
	var changes atomic.Int32
	reg.OnChange(func() { changes.Add(1) })

	// Writers add resources in pairs; a reader must always see whole pairs.
	const pairs = 200
	var wg sync.WaitGroup
	stop := make(chan struct{})
	var torn atomic.Int32
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			select {
			case <-stop:
				return
			default:
			}
			seen := map[string]bool{}
			for _, r := range reg.Resources() {
				seen[r.GVR.Resource] = true
			}
			for name := range seen {
				if name[0] == 'a' && !seen["b"+name[1:]] {
					torn.Add(1)
				}
			}
		}
	}()
	for i := 0; i < pairs; i++ {
		var pair []*Resource
		for _, p := range []string{"a", "b"} {
			pair = append(pair, &Resource{GVR: schema.GroupVersionResource{Group: "g", Version: "v1", Resource: fmt.Sprintf("%s%d", p, i)}})
		}
		reg.Add(pair...)
	}
	close(stop)
	wg.Wait()
	if torn.Load() != 0 {
		t.Fatalf("readers saw %d partial updates", torn.Load())
	}
	if got := len(reg.Resources()); got != 2*pairs {
		t.Fatalf("have %d resources, want %d", got, 2*pairs)
	}
	if changes.Load() != pairs {
		t.Fatalf("OnChange fired %d times, want %d", changes.Load(), pairs)
	}
}

func TestRegistryAddLookupRemove(t *testing.T) {
	reg := New()
	fired := 0
	reg.OnChange(func() { fired++ })
	for _, k := range builtin.Kinds() {
		reg.Add(NewResourceFromBuiltin(k, nil))
	}
	cm, ok := reg.Lookup("", "v1", "configmaps")
	if !ok || cm.Kind != "ConfigMap" || !cm.Namespaced || cm.ShortNames[0] != "cm" {
		t.Fatalf("configmaps: %+v, %v", cm, ok)
	}
	deploy, ok := reg.Lookup("apps", "v1", "deployments")
	if !ok || deploy.Scale == nil || !deploy.HasStatus {
		t.Fatalf("deployments: %+v", deploy)
	}
	if got := deploy.Subresources(); len(got) != 2 || got[0] != "status" || got[1] != "scale" {
		t.Fatalf("deployment subresources %v", got)
	}
	if cm.Store.registry != reg {
		t.Fatal("Add must wire the store to the registry")
	}
	resources := reg.Resources()
	if resources[0].GVR.Group != "" {
		t.Fatalf("core group must come first, got %v", resources[0].GVR)
	}
	before := len(resources)
	reg.Remove(cm.GVR)
	if _, ok := reg.Lookup("", "v1", "configmaps"); ok || len(reg.Resources()) != before-1 {
		t.Fatal("Remove did not remove configmaps")
	}
	if len(resources) != before {
		t.Fatal("an earlier snapshot must not change")
	}
	if fired != len(builtin.Kinds())+1 {
		t.Fatalf("OnChange fired %d times", fired)
	}
}

// Resources stays in order and in step with Lookup through adds (new and
// replacing), removes of present and absent resources, in any order.
func TestRegistryOrderedThroughChanges(t *testing.T) {
	reg := New()
	want := map[schema.GroupVersionResource]*Resource{}
	rnd := rand.New(rand.NewPCG(1, 2))
	groups := []string{"", "apps", "example.io", "zeta.io"}
	randomGVR := func() schema.GroupVersionResource {
		return schema.GroupVersionResource{Group: groups[rnd.IntN(len(groups))],
			Version: fmt.Sprintf("v%d", rnd.IntN(3)), Resource: fmt.Sprintf("r%02d", rnd.IntN(20))}
	}
	for step := range 2000 {
		if rnd.IntN(3) == 0 {
			gvr := randomGVR()
			reg.Remove(gvr)
			delete(want, gvr)
		} else {
			var batch []*Resource // a CRD's versions come together
			for range 1 + rnd.IntN(3) {
				res := &Resource{GVR: randomGVR()}
				batch = append(batch, res)
				want[res.GVR] = res
			}
			reg.Add(batch...)
		}
		got := reg.Resources()
		if len(got) != len(want) {
			t.Fatalf("step %d: %d resources, want %d", step, len(got), len(want))
		}
		for i, r := range got {
			if want[r.GVR] != r {
				t.Fatalf("step %d: %v is not the resource last added", step, r.GVR)
			}
			if i > 0 && compareGVR(got[i-1].GVR, r.GVR) >= 0 {
				t.Fatalf("step %d: %v before %v", step, got[i-1].GVR, r.GVR)
			}
		}
	}
}

package registry

import (
	"fmt"
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
		reg.update(func(m map[schema.GroupVersionResource]*Resource) {
			for _, p := range []string{"a", "b"} {
				gvr := schema.GroupVersionResource{Group: "g", Version: "v1", Resource: fmt.Sprintf("%s%d", p, i)}
				m[gvr] = &Resource{GVR: gvr}
			}
		})
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

package keptstacks

import (
	"sync"
	"testing"
	"time"
)

func TestPool(t *testing.T) {
	p := New(2)
	release := make(chan struct{})
	var started sync.WaitGroup
	for i := range 2 {
		started.Add(1)
		// A worker may not be waiting yet right after the first TryGo
		// starts them: retry until one takes it.
		deadline := time.Now().Add(5 * time.Second)
		for !p.TryGo(func() { started.Done(); <-release }) {
			if time.Now().After(deadline) {
				t.Fatalf("work %d: no idle goroutine took it", i)
			}
			time.Sleep(time.Millisecond)
		}
	}
	started.Wait()
	if p.TryGo(func() { t.Error("ran on a busy pool") }) {
		t.Fatal("TryGo reported true with every goroutine busy")
	}
	close(release)
	p.Stop()
	time.Sleep(10 * time.Millisecond) // the workers see the stop
	if p.TryGo(func() { t.Error("ran on a stopped pool") }) {
		t.Fatal("TryGo reported true on a stopped pool")
	}
}

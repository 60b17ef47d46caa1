package controlplane

import (
	"context"
	"time"

	flowcontrolv1 "k8s.io/api/flowcontrol/v1"

	"github.com/devplane/devplane/apiserver/flowcontrol"
)

// installFlowControl keeps API Priority and Fairness' bootstrap
// configuration (kube's priority-and-fairness-config-producer) and the
// FlowSchemas' Dangling conditions.
func (cp *ControlPlane) installFlowControl() error {
	fs, ok1 := cp.CoreRegistry.Lookup(flowcontrolv1.GroupName, "v1", "flowschemas")
	pl, ok2 := cp.CoreRegistry.Lookup(flowcontrolv1.GroupName, "v1", "prioritylevelconfigurations")
	if !ok1 || !ok2 || fs.Store == nil || pl.Store == nil {
		return nil
	}
	st := flowcontrol.Stores{FlowSchemas: fs.Store, PriorityLevels: pl.Store}
	return cp.Core.AddPostStartHook("priority-and-fairness-config-producer", func(ctx context.Context) error {
		if err := retry(ctx, func() error { return flowcontrol.Ensure(ctx, st) }); err != nil {
			return err
		}
		go func() {
			// Mandatory objects come back when deleted or changed, as in kube.
			for {
				select {
				case <-ctx.Done():
					return
				case <-time.After(5 * time.Second):
					_ = flowcontrol.Ensure(ctx, st)
				}
			}
		}()
		go flowcontrol.RunDanglingConditions(ctx, st, time.Second)
		return nil
	})
}

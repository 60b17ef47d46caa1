// Package flowcontrol keeps API Priority and Fairness' configuration as
// kube-apiserver does: its bootstrap FlowSchemas and
// PriorityLevelConfigurations, and each FlowSchema's Dangling condition.
// devplane limits requests with max-in-flight, so the configuration is
// served and maintained for clients that read it, not enforced.
package flowcontrol

import (
	"context"
	"fmt"
	"sync"
	"time"

	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/devplane/devplane/apiserver/admission"
	"github.com/devplane/devplane/apiserver/registry"
)

// AutoUpdateAnnotation says whether the server keeps a bootstrap object's
// spec as it wants it ("true") or leaves it to its owner ("false").
const AutoUpdateAnnotation = "apf.kubernetes.io/autoupdate-spec"

// Stores are where the configuration lives.
type Stores struct {
	FlowSchemas, PriorityLevels *registry.Store
}

// Ensure creates the bootstrap objects that are missing, puts mandatory
// ones back to kube's spec and updates suggested ones whose
// autoupdate-spec annotation is "true". Objects are written concurrently.
func Ensure(ctx context.Context, st Stores) error {
	type job struct {
		store     *registry.Store
		obj       runtime.Object
		mandatory bool
	}
	var jobs []job
	for _, pl := range MandatoryPriorityLevels() {
		jobs = append(jobs, job{st.PriorityLevels, pl, true})
	}
	for _, pl := range SuggestedPriorityLevels() {
		jobs = append(jobs, job{st.PriorityLevels, pl, false})
	}
	for _, fs := range MandatoryFlowSchemas() {
		jobs = append(jobs, job{st.FlowSchemas, fs, true})
	}
	for _, fs := range SuggestedFlowSchemas() {
		jobs = append(jobs, job{st.FlowSchemas, fs, false})
	}
	var wg sync.WaitGroup
	errs := make([]error, len(jobs))
	for i, j := range jobs {
		wg.Go(func() { errs[i] = ensureOne(ctx, j.store, j.obj, j.mandatory) })
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

func ensureOne(ctx context.Context, store *registry.Store, wanted runtime.Object, mandatory bool) error {
	name := nameOf(wanted)
	current, err := store.Get(ctx, "", name, metav1.GetOptions{ResourceVersion: "0"}) // the cache: a warm start writes nothing
	if apierrors.IsNotFound(err) {
		_, err = store.Create(ctx, "", wanted.DeepCopyObject(), metav1.CreateOptions{})
		if apierrors.IsAlreadyExists(err) {
			return nil // another replica made it
		}
		return err
	}
	if err != nil {
		return err
	}
	auto := annotationsOf(current)[AutoUpdateAnnotation]
	if mandatory && auto == "false" || !mandatory && auto != "true" {
		return nil
	}
	updated, changed := withSpecOf(current, wanted)
	if !changed {
		return nil
	}
	_, _, err = store.Update(ctx, "", name, "", func(context.Context, runtime.Object) (runtime.Object, error) {
		return updated, nil
	}, metav1.UpdateOptions{})
	if apierrors.IsConflict(err) {
		return nil // changed meanwhile: the next pass looks again
	}
	return err
}

// withSpecOf returns current with wanted's spec, and whether that changed
// anything (both defaulted alike, as stored objects are).
func withSpecOf(current, wanted runtime.Object) (runtime.Object, bool) {
	switch cur := current.(type) {
	case *flowcontrolv1.FlowSchema:
		want := wanted.(*flowcontrolv1.FlowSchema)
		if apiequality.Semantic.DeepEqual(cur.Spec, want.Spec) {
			return nil, false
		}
		out := cur.DeepCopy()
		out.Spec = want.Spec
		return out, true
	case *flowcontrolv1.PriorityLevelConfiguration:
		want := wanted.(*flowcontrolv1.PriorityLevelConfiguration)
		if apiequality.Semantic.DeepEqual(cur.Spec, want.Spec) {
			return nil, false
		}
		out := cur.DeepCopy()
		out.Spec = want.Spec
		return out, true
	}
	return nil, false
}

// RunDanglingConditions keeps each FlowSchema's Dangling condition true to
// whether the priority level it names exists, until ctx ends. It reads the
// watch caches; a pass costs nothing when nothing changed.
func RunDanglingConditions(ctx context.Context, st Stores, every time.Duration) {
	for {
		_ = syncDangling(ctx, st)
		select {
		case <-ctx.Done():
			return
		case <-time.After(every):
		}
	}
}

func syncDangling(ctx context.Context, st Stores) error {
	cached := metav1.ListOptions{ResourceVersion: "0"}
	levels, err := st.PriorityLevels.List(ctx, "", cached)
	if err != nil {
		return err
	}
	exists := map[string]bool{}
	for _, pl := range levels.(*flowcontrolv1.PriorityLevelConfigurationList).Items {
		exists[pl.Name] = true
	}
	schemas, err := st.FlowSchemas.List(ctx, "", cached)
	if err != nil {
		return err
	}
	for _, fs := range schemas.(*flowcontrolv1.FlowSchemaList).Items {
		want := danglingCondition(fs.Spec.PriorityLevelConfiguration.Name, exists[fs.Spec.PriorityLevelConfiguration.Name])
		if have := danglingOf(&fs); have != nil && have.Status == want.Status && have.Reason == want.Reason && have.Message == want.Message {
			continue
		}
		updated := fs.DeepCopy()
		setDangling(updated, want)
		_, _, err := st.FlowSchemas.Update(admission.WithoutAdmission(ctx), "", fs.Name, "status",
			func(context.Context, runtime.Object) (runtime.Object, error) { return updated, nil }, metav1.UpdateOptions{})
		if err != nil && !apierrors.IsConflict(err) && !apierrors.IsNotFound(err) {
			return err
		}
	}
	return nil
}

func danglingCondition(level string, found bool) flowcontrolv1.FlowSchemaCondition {
	if found {
		return flowcontrolv1.FlowSchemaCondition{Type: flowcontrolv1.FlowSchemaConditionDangling, Status: flowcontrolv1.ConditionFalse, Reason: "Found",
			Message: fmt.Sprintf("This FlowSchema references the PriorityLevelConfiguration object named %q and it exists", level)}
	}
	return flowcontrolv1.FlowSchemaCondition{Type: flowcontrolv1.FlowSchemaConditionDangling, Status: flowcontrolv1.ConditionTrue, Reason: "NotFound",
		Message: fmt.Sprintf("This FlowSchema references the PriorityLevelConfiguration object named %q but there is no such object", level)}
}

func danglingOf(fs *flowcontrolv1.FlowSchema) *flowcontrolv1.FlowSchemaCondition {
	for i := range fs.Status.Conditions {
		if fs.Status.Conditions[i].Type == flowcontrolv1.FlowSchemaConditionDangling {
			return &fs.Status.Conditions[i]
		}
	}
	return nil
}

func setDangling(fs *flowcontrolv1.FlowSchema, c flowcontrolv1.FlowSchemaCondition) {
	c.LastTransitionTime = metav1.Now()
	if have := danglingOf(fs); have != nil {
		if have.Status == c.Status {
			c.LastTransitionTime = have.LastTransitionTime
		}
		*have = c
		return
	}
	fs.Status.Conditions = append(fs.Status.Conditions, c)
}

func nameOf(obj runtime.Object) string {
	if m, ok := obj.(metav1.Object); ok {
		return m.GetName()
	}
	return ""
}

func annotationsOf(obj runtime.Object) map[string]string {
	if m, ok := obj.(metav1.Object); ok {
		return m.GetAnnotations()
	}
	return nil
}

// Builders that keep the object tables readable.

var (
	byUser          = &flowcontrolv1.FlowDistinguisherMethod{Type: flowcontrolv1.FlowDistinguisherMethodByUserType}
	byNamespace     = &flowcontrolv1.FlowDistinguisherMethod{Type: flowcontrolv1.FlowDistinguisherMethodByNamespaceType}
	noDistinguisher *flowcontrolv1.FlowDistinguisherMethod
)

func bootstrapMeta(name string) metav1.ObjectMeta {
	return metav1.ObjectMeta{Name: name, Annotations: map[string]string{AutoUpdateAnnotation: "true"}}
}

func flowSchema(name, level string, precedence int32, method *flowcontrolv1.FlowDistinguisherMethod, rules ...flowcontrolv1.PolicyRulesWithSubjects) *flowcontrolv1.FlowSchema {
	var m *flowcontrolv1.FlowDistinguisherMethod
	if method != nil {
		copied := *method
		m = &copied
	}
	return &flowcontrolv1.FlowSchema{ObjectMeta: bootstrapMeta(name), Spec: flowcontrolv1.FlowSchemaSpec{
		PriorityLevelConfiguration: flowcontrolv1.PriorityLevelConfigurationReference{Name: level},
		MatchingPrecedence:         precedence, DistinguisherMethod: m, Rules: rules}}
}

// rule is one PolicyRulesWithSubjects from its subjects and its resource
// and non-resource rules, in any order.
func rule(subjects []flowcontrolv1.Subject, rules ...any) flowcontrolv1.PolicyRulesWithSubjects {
	out := flowcontrolv1.PolicyRulesWithSubjects{Subjects: subjects}
	for _, r := range rules {
		switch r := r.(type) {
		case flowcontrolv1.ResourcePolicyRule:
			out.ResourceRules = append(out.ResourceRules, r)
		case flowcontrolv1.NonResourcePolicyRule:
			out.NonResourceRules = append(out.NonResourceRules, r)
		}
	}
	return out
}

func subjects(s ...flowcontrolv1.Subject) []flowcontrolv1.Subject { return s }

func group(name string) flowcontrolv1.Subject {
	return flowcontrolv1.Subject{Kind: flowcontrolv1.SubjectKindGroup, Group: &flowcontrolv1.GroupSubject{Name: name}}
}

func user(name string) flowcontrolv1.Subject {
	return flowcontrolv1.Subject{Kind: flowcontrolv1.SubjectKindUser, User: &flowcontrolv1.UserSubject{Name: name}}
}

func serviceAccount(namespace, name string) flowcontrolv1.Subject {
	return flowcontrolv1.Subject{Kind: flowcontrolv1.SubjectKindServiceAccount,
		ServiceAccount: &flowcontrolv1.ServiceAccountSubject{Namespace: namespace, Name: name}}
}

func verbs(v ...string) []string      { return v }
func groups(g ...string) []string     { return g }
func names(r ...string) []string      { return r }
func namespaces(n ...string) []string { return n }

func resources(verbs, groups, resources, namespaces []string, clusterScope bool) flowcontrolv1.ResourcePolicyRule {
	return flowcontrolv1.ResourcePolicyRule{Verbs: verbs, APIGroups: groups, Resources: resources, Namespaces: namespaces, ClusterScope: clusterScope}
}

func nonResources(verbs []string, urls ...string) flowcontrolv1.NonResourcePolicyRule {
	return flowcontrolv1.NonResourcePolicyRule{Verbs: verbs, NonResourceURLs: urls}
}

func exemptLevel(name string, shares, lendable int32) *flowcontrolv1.PriorityLevelConfiguration {
	return &flowcontrolv1.PriorityLevelConfiguration{ObjectMeta: bootstrapMeta(name), Spec: flowcontrolv1.PriorityLevelConfigurationSpec{
		Type: flowcontrolv1.PriorityLevelEnablementExempt, Exempt: &flowcontrolv1.ExemptPriorityLevelConfiguration{
			NominalConcurrencyShares: &shares, LendablePercent: &lendable}}}
}

func limitedLevel(name string, shares, lendable int32, q *flowcontrolv1.QueuingConfiguration) *flowcontrolv1.PriorityLevelConfiguration {
	resp := flowcontrolv1.LimitResponse{Type: flowcontrolv1.LimitResponseTypeReject}
	if q != nil {
		resp = flowcontrolv1.LimitResponse{Type: flowcontrolv1.LimitResponseTypeQueue, Queuing: q}
	}
	return &flowcontrolv1.PriorityLevelConfiguration{ObjectMeta: bootstrapMeta(name), Spec: flowcontrolv1.PriorityLevelConfigurationSpec{
		Type: flowcontrolv1.PriorityLevelEnablementLimited, Limited: &flowcontrolv1.LimitedPriorityLevelConfiguration{
			NominalConcurrencyShares: &shares, LendablePercent: &lendable, LimitResponse: resp}}}
}

func queuing(queues, handSize, queueLengthLimit int32) *flowcontrolv1.QueuingConfiguration {
	return &flowcontrolv1.QueuingConfiguration{Queues: queues, HandSize: handSize, QueueLengthLimit: queueLengthLimit}
}
